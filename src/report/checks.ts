import { z } from "zod";
import type { CheckName } from "../contracts/gates.js";

/** GitHub's limits on a check run (and a comment body). */
export const OUTPUT_LIMIT = 65_535;
export const COMMENT_LIMIT = 65_536;
export const TITLE_LIMIT = 255;
/** GitHub shows at most three buttons on a check run. */
export const MAX_ACTIONS = 3;
/** Room kept at the end of a summary for the hidden content marker the writer appends. */
export const MARKER_ROOM = 100;

/** A check-run button; GitHub rejects a label over 20, a description over 40, an identifier over 20 characters. */
export const CheckAction = z
  .object({
    label: z.string().min(1).max(20),
    description: z.string().min(1).max(40),
    identifier: z.string().regex(/^[a-z0-9-]{1,20}$/),
  })
  .strict();
export type CheckAction = z.infer<typeof CheckAction>;

/** Every button Consort shows; a click arrives as `check_run.requested_action` with this identifier. */
export const CHECK_ACTIONS = {
  reseal: CheckAction.parse({
    label: "Re-seal state",
    description: "Admins: restore the last sealed state",
    identifier: "reseal",
  }),
  rerunCycle: CheckAction.parse({
    label: "Re-run cycle",
    description: "Dispatch the last cycle again",
    identifier: "rerun-cycle",
  }),
  renegotiate: CheckAction.parse({
    label: "Renegotiate tests",
    description: "Reopen the test list and its gate",
    identifier: "renegotiate",
  }),
} as const;

/** The conclusions Consort ever reports: never `neutral` or `skipped`, which satisfy branch protection. */
type Conclusion = "success" | "failure";

/** One check run as it should be on GitHub. */
export type RenderedCheckRun = {
  name: CheckName;
  output: { title: string; summary: string; text?: string };
  actions: CheckAction[];
} & (
  | {
      status: "in_progress";
      /** Only holds a place (src/gates/checks.ts `isPlaceholder`): not created on a head that has no run of it. */
      placeholder?: true;
    }
  | { status: "completed"; conclusion: Conclusion }
);
