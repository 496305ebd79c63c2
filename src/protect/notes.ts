import { DEFAULT_BRANCH_RULESET, STATE_BRANCH_RULESET } from "./rulesets.js";

/**
 * Why each rule and setting `consort protect` writes is there, and whether Consort depends on it
 * or only sets a sensible value: README's protection table is generated from these beside
 * desiredRulesets (src/protect/table.ts), and a test refuses a rule or setting without a note.
 * Keyed `<ruleset>/<rule>` or `<ruleset>/<rule>.<setting>`; `bypass_actors` for who may bypass.
 */
interface ProtectionNote {
  needed: boolean;
  why: string;
}

/** Consort depends on it: without it a gate could be skipped or its record rewritten. */
const needed = (why: string): ProtectionNote => ({ needed: true, why });
/** A sensible value Consort sets but does not rely on. */
const sensible = (why: string): ProtectionNote => ({ needed: false, why });

/** One ruleset's notes, keyed `<rule>` or `<rule>.<setting>` within it. */
const inRuleset = (ruleset: string, notes: Record<string, ProtectionNote>): Record<string, ProtectionNote> =>
  Object.fromEntries(Object.entries(notes).map(([key, note]) => [`${ruleset}/${key}`, note]));

export const PROTECTION_NOTES: Record<string, ProtectionNote> = {
  ...inRuleset(DEFAULT_BRANCH_RULESET, {
    bypass_actors: needed("Nobody bypasses the gates: a bypass would let a merge skip a failed or missing check."),
    required_status_checks: needed(
      "No merge without the gates. Each check is bound to the app's id, so no other app or Actions token can post one that counts; required checks of your own in the rule are kept.",
    ),
    "required_status_checks.required_status_checks": needed(
      "The seven checks Consort decides on every head of a track, and on a merge queue's group. A check whose lane the track has not reached is not posted: GitHub lists it as expected, waiting, which blocks the merge as a failure would (see What a pull request shows).",
    ),
    "required_status_checks.strict_required_status_checks_policy": sensible(
      "A track need not be up to date with the default branch to merge; when it is updated, Consort verifies the release again on a fresh fork of the parent.",
    ),
    "required_status_checks.do_not_enforce_on_create": needed("The checks hold from the branch's first push."),
    pull_request: needed(
      "Every change reaches the default branch through a pull request, whose reviews approve the gates.",
    ),
    "pull_request.required_approving_review_count": sensible(
      "Any count from 1 to 10 (`--approvals`): the gates count their own approvals, by the approvers `.github/consort.yml` names.",
    ),
    "pull_request.dismiss_stale_reviews_on_push": sensible(
      "On or off: an approval binds to the hash of the files its gate froze, so GitHub's dismissal on a push withdraws nothing unless the push changed a frozen file.",
    ),
    "pull_request.require_code_owner_review": sensible(
      "The CODEOWNERS `consort init --owners` writes must approve what they own; the gates do not rely on it.",
    ),
    "pull_request.require_last_push_approval": sensible(
      "The newest push needs an approval from someone other than its pusher; the gates already refuse an approver who pushed, authored or committed the work.",
    ),
    "pull_request.required_review_thread_resolution": sensible("Your choice; the gates do not read review threads."),
    non_fast_forward: needed("A rewritten default branch would hide what was approved."),
    deletion: needed("Nor may it be deleted."),
  }),
  ...inRuleset(STATE_BRANCH_RULESET, {
    bypass_actors: needed(
      "Only the app writes `consort/state`: it refuses any commit there it did not write, so no one else needs to.",
    ),
    creation: needed("Only the app starts the branch."),
    update: needed("Only the app moves it."),
    "update.update_allows_fetch_and_merge": needed("Not even a fork's fetch-and-merge."),
    non_fast_forward: needed(
      "A forced reset to an older commit of the app's own is the one rollback a restarted app cannot tell.",
    ),
    deletion: needed("Deleting it would end every track's state."),
  }),
};
