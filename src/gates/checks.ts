import { isBuildStage } from "../contracts/stages.js";
import { currentUnit, type GateRecord, type TrackSnapshot } from "../contracts/track.js";
import { CHECK_NAMES, GATE_NAMES, gateCheckName, type CheckName, type GateName } from "../contracts/gates.js";

/**
 * What each Consort check shows, decided from a track's snapshot alone (docs/ARCHITECTURE.md, Gates). This is the one
 * answer to "is this check green": the check runs and the sticky comment (src/report), the CLI and
 * the MCP tools all render it. `consort/schema` is not here: it is decided from the database
 * branches (src/engine/effects.ts inspects them).
 *
 * Fail closed: `success` only when proven (a gate approved at its current manifest hash, every
 * unit verified, every commit accepted); `pending` while waiting (an in-progress check, which
 * never satisfies branch protection); `failure` with the reason otherwise, including whenever the
 * state does not let the check decide. Never neutral, never skipped.
 */

/** The checks decided from the snapshot: every contract check but `consort/schema`. */
export type TrackCheckName = Exclude<CheckName, "consort/schema">;
export const TRACK_CHECKS = CHECK_NAMES.filter((name): name is TrackCheckName => name !== "consort/schema");

/** `pending` is an in-progress check: it never satisfies branch protection. There is no neutral or skipped. */
export const CHECK_STATUSES = ["pending", "success", "failure"] as const;

export interface CheckState {
  name: TrackCheckName;
  status: (typeof CHECK_STATUSES)[number];
  title: string;
  /** Every reason, for the check run's summary. */
  details: string[];
}

type Decided = Omit<CheckState, "name">;

const NOT_REACHED = "Not reached yet";
const NOT_STARTED = "Not started";

/**
 * A check that only holds a place: the track has not reached what it is about (a gate not open
 * yet, a build not started). It says nothing a person acts on, so the writer need not create it
 * (a missing required check blocks the merge as an in-progress one does). Every other waiting
 * check says something: what a gate waits to have approved, which test the build is on.
 */
export function isPlaceholder(check: Pick<CheckState, "status" | "title">): boolean {
  return check.status === "pending" && (check.title === NOT_REACHED || check.title === NOT_STARTED);
}

const short = (hash: string) => hash.slice(0, 7);

/** The state of every check decided from the snapshot, in contract order. */
export function checkStates(snapshot: TrackSnapshot): CheckState[] {
  const decided: Record<TrackCheckName, Decided> =
    snapshot.stage === "abandoned"
      ? abandoned(snapshot)
      : {
          ...gateChecks(snapshot),
          "consort/build": buildCheck(snapshot),
          "consort/deploy": deployCheck(snapshot),
          "consort/discipline": disciplineCheck(snapshot),
        };
  return TRACK_CHECKS.map((name) => ({ name, ...decided[name] }));
}

/** An abandoned track passes nothing: every check fails with why it ended. */
function abandoned(snapshot: TrackSnapshot): Record<TrackCheckName, Decided> {
  const why = `The track was abandoned: ${snapshot.context.ended?.reason ?? "no reason given"}.`;
  return Object.fromEntries(
    TRACK_CHECKS.map((name) => [name, { status: "failure", title: "Track abandoned", details: [why] }]),
  ) as Record<TrackCheckName, Decided>;
}

function gateChecks(snapshot: TrackSnapshot): Record<`consort/${GateName}`, Decided> {
  return Object.fromEntries(
    GATE_NAMES.map((gate) => [gateCheckName(gate), gateCheck(gate, snapshot.context.gates[gate])]),
  ) as Record<`consort/${GateName}`, Decided>;
}

/** A gate passes only when approved at the manifest hash it is pending on now. */
export function gateCheck(gate: GateName, record: GateRecord): Decided {
  switch (record.status) {
    case "closed":
      return {
        status: "pending",
        title: NOT_REACHED,
        details: [
          `The track has not reached the ${gate} gate yet.`,
          ...(record.withdrawnReason ? [record.withdrawnReason] : []),
        ],
      };
    case "pending":
      if (!record.pendingHash)
        return {
          status: "failure",
          title: "Nothing to approve",
          details: [`The ${gate} gate is open but names no manifest to approve, so no approval can count.`],
        };
      return {
        status: "pending",
        title: `Waiting for approval at ${short(record.pendingHash)}`,
        details: [`Waiting for an approving review by an approver at manifest ${record.pendingHash.slice(0, 12)}.`],
      };
    case "approved": {
      const current = record.pendingHash;
      if (!record.approvedHash || record.approvedHash !== current)
        return {
          status: "failure",
          title: "Approval is for other files",
          details: [
            `The approval at ${short(record.approvedHash ?? "none")} does not match the current frozen hash ${short(current ?? "none")}: approve again at the current commit.`,
          ],
        };
      const by = approversAt(record, current);
      if (by.length === 0)
        return {
          status: "failure",
          title: "No approval recorded",
          details: [`The ${gate} gate is marked approved but holds no approval at ${short(current)}: approve again.`],
        };
      return {
        status: "success",
        title: `Approved by ${by.map((login) => `@${login}`).join(", ")} at ${short(current)}`,
        details: ["Approved at the current frozen hash."],
      };
    }
    case "withdrawn":
      return {
        status: "failure",
        title: "Approval withdrawn",
        details: [
          record.withdrawnReason ?? "The approval was withdrawn; approve again.",
          ...(record.pendingHash ? [`Approve again at manifest ${record.pendingHash}.`] : []),
        ],
      };
  }
}

/** The approvers whose approval is at `hash`, each once (logins compare case-insensitively). */
function approversAt(record: GateRecord, hash: string): string[] {
  const byLogin = new Map<string, string>();
  for (const approval of record.approvals)
    if (approval.manifestHash === hash && !byLogin.has(approval.approver.toLowerCase()))
      byLogin.set(approval.approver.toLowerCase(), approval.approver);
  return [...byLogin.values()];
}

function buildCheck(snapshot: TrackSnapshot): Decided {
  const { stage, context } = snapshot;
  const total = context.units.length;
  const testList = context.gates["test-list"];
  if (testList.status === "approved" && total > 0 && context.unitIndex >= total)
    return {
      status: "success",
      title: "Every test is green and reviewed",
      details: [`All ${total} unit(s) verified RED → GREEN: ${context.units.map((u) => u.id).join(", ")}.`],
    };
  const unit = currentUnit(context);
  const where = `${unit?.id ?? "no unit"} (${context.unitIndex + 1} of ${total})`;
  if (stage === "blocked" && context.blocked && isBuildStage(context.blocked.resume))
    return {
      status: "failure",
      title: `Blocked at ${unit?.id ?? "no unit"}: a person must decide`,
      details: [context.blocked.reason],
    };
  if (isBuildStage(stage)) {
    const failing = context.lastProblem.length > 0;
    return {
      status: failing ? "failure" : "pending",
      title: `${where}: ${stage}`,
      details: failing ? context.lastProblem : [`${context.unitIndex} of ${total} units done.`],
    };
  }
  if (testList.status === "withdrawn" || (testList.status !== "approved" && total > 0))
    return {
      status: "failure",
      title: "Build evidence withdrawn until the test list is approved again",
      details: [testList.withdrawnReason ?? "The test list changed."],
    };
  return { status: "pending", title: NOT_STARTED, details: ["The build starts once the test list is approved."] };
}

/** While the release cycle runs (or failed), consort/deploy shows it; after that, the deploy gate. */
function deployCheck(snapshot: TrackSnapshot): Decided {
  const { stage, context } = snapshot;
  if (stage === "blocked" && context.blocked?.resume === "deploying")
    return { status: "failure", title: "The preview deploy did not verify", details: [context.blocked.reason] };
  if (stage === "deploying")
    return context.lastProblem.length > 0
      ? { status: "failure", title: "The preview deploy failed", details: context.lastProblem }
      : {
          status: "pending",
          title: "Deploying a preview and verifying it",
          details: ["The release cycle deploys the track to a preview on its database branch and verifies it."],
        };
  return gateCheck("deploy", context.gates.deploy);
}

function disciplineCheck(snapshot: TrackSnapshot): Decided {
  const { rejectedHead, head } = snapshot.context;
  if (rejectedHead)
    return {
      status: "failure",
      title: `Commit ${short(rejectedHead.sha)} refused: reset the branch to ${short(head)}`,
      details: rejectedHead.reasons,
    };
  return { status: "success", title: "Every commit was the step in turn, by its role, on its own paths", details: [] };
}
