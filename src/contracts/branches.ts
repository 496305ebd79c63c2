/** The branch the app keeps every track's state on; nobody works on it (docs/ARCHITECTURE.md, State). */
export const STATE_BRANCH = "consort/state";

/**
 * Where a merge queue builds its groups (`gh-readonly-queue/<base>/pr-<n>-<sha>`): GitHub writes
 * these branches, nobody works on them, and the `merge_group` handler judges what they merge.
 */
export const MERGE_QUEUE_BRANCH_PREFIX = "gh-readonly-queue/";
