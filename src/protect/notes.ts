import { DEFAULT_BRANCH_RULESET, STATE_BRANCH_RULESET } from "./rulesets.js";

/**
 * Why each rule and setting `consort protect` writes is there, and whether Consort depends on it
 * or only sets a sensible value: README's protection table is generated from these beside
 * desiredRulesets (src/protect/table.ts), and a test refuses a rule or setting without a note.
 * Keyed `<ruleset>/<rule>` or `<ruleset>/<rule>.<setting>`; `bypass_actors` for who may bypass.
 */
export const PROTECTION_NOTES: Record<string, { needed: boolean; why: string }> = {
  [`${DEFAULT_BRANCH_RULESET}/bypass_actors`]: {
    needed: true,
    why: "Nobody bypasses the gates: a bypass would let a merge skip a failed or missing check.",
  },
  [`${DEFAULT_BRANCH_RULESET}/required_status_checks`]: {
    needed: true,
    why: "No merge without the gates. Each check is bound to the app's id, so no other app or Actions token can post one that counts; required checks of your own in the rule are kept.",
  },
  [`${DEFAULT_BRANCH_RULESET}/required_status_checks.required_status_checks`]: {
    needed: true,
    why: "The seven checks Consort posts on every head of a track.",
  },
  [`${DEFAULT_BRANCH_RULESET}/required_status_checks.strict_required_status_checks_policy`]: {
    needed: false,
    why: "A track need not be up to date with the default branch to merge; when it is updated, Consort verifies the release again on a fresh fork of the parent.",
  },
  [`${DEFAULT_BRANCH_RULESET}/required_status_checks.do_not_enforce_on_create`]: {
    needed: true,
    why: "The checks hold from the branch's first push.",
  },
  [`${DEFAULT_BRANCH_RULESET}/pull_request`]: {
    needed: true,
    why: "Every change reaches the default branch through a pull request, whose reviews approve the gates.",
  },
  [`${DEFAULT_BRANCH_RULESET}/pull_request.required_approving_review_count`]: {
    needed: false,
    why: "Any count from 1 to 10 (`--approvals`): the gates count their own approvals, by the approvers `.github/consort.yml` names.",
  },
  [`${DEFAULT_BRANCH_RULESET}/pull_request.dismiss_stale_reviews_on_push`]: {
    needed: false,
    why: "On or off: an approval binds to the hash of the files its gate froze, so GitHub's dismissal on a push withdraws nothing unless the push changed a frozen file.",
  },
  [`${DEFAULT_BRANCH_RULESET}/pull_request.require_code_owner_review`]: {
    needed: false,
    why: "The CODEOWNERS `consort init --owners` writes must approve what they own; the gates do not rely on it.",
  },
  [`${DEFAULT_BRANCH_RULESET}/pull_request.require_last_push_approval`]: {
    needed: false,
    why: "The newest push needs an approval from someone other than its pusher; the gates already refuse an approver who pushed, authored or committed the work.",
  },
  [`${DEFAULT_BRANCH_RULESET}/pull_request.required_review_thread_resolution`]: {
    needed: false,
    why: "Your choice; the gates do not read review threads.",
  },
  [`${DEFAULT_BRANCH_RULESET}/non_fast_forward`]: {
    needed: true,
    why: "A rewritten default branch would hide what was approved.",
  },
  [`${DEFAULT_BRANCH_RULESET}/deletion`]: { needed: true, why: "Nor may it be deleted." },
  [`${STATE_BRANCH_RULESET}/bypass_actors`]: {
    needed: true,
    why: "Only the app writes `consort/state`: it refuses any commit there it did not write, so no one else needs to.",
  },
  [`${STATE_BRANCH_RULESET}/creation`]: { needed: true, why: "Only the app starts the branch." },
  [`${STATE_BRANCH_RULESET}/update`]: { needed: true, why: "Only the app moves it." },
  [`${STATE_BRANCH_RULESET}/update.update_allows_fetch_and_merge`]: {
    needed: true,
    why: "Not even a fork's fetch-and-merge.",
  },
  [`${STATE_BRANCH_RULESET}/non_fast_forward`]: {
    needed: true,
    why: "A forced reset to an older commit of the app's own is the one rollback a restarted app cannot tell.",
  },
  [`${STATE_BRANCH_RULESET}/deletion`]: { needed: true, why: "Deleting it would end every track's state." },
};
