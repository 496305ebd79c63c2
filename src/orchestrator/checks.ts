import { currentUnit } from "./context.js";
import { STAGES, type CheckState, type GateName, type Stage, type TrackSnapshot } from "./types.js";

/**
 * The Consort checks a snapshot implies (design §4). A gate check is `success` only when the gate is
 * approved at its pending manifest; before that it is `pending` (in progress, which never satisfies
 * branch protection) or `failure` when withdrawn or blocked. Never neutral, never skipped.
 */

// The lane in order is the stage list itself; abandoned lies outside it.
const LANE_ORDER: readonly Stage[] = STAGES.filter((stage) => stage !== "abandoned");

const BUILD: Stage[] = [
  "red",
  "red-verify",
  "green",
  "green-verify",
  "repair",
  "review",
  "refactor",
  "refactor-verify",
];

function gateCheck(snapshot: TrackSnapshot, gate: GateName, name: CheckState["name"], label: string): CheckState {
  const record = snapshot.context.gates[gate];
  if (record.status === "approved" && record.approvedHash === record.pendingHash) {
    const last = record.approvals.at(-1);
    return {
      name,
      status: "success",
      title: `${label} approved${last ? ` by ${last.approver}` : ""}`,
      details: [`manifest ${record.approvedHash}`, ...(last ? [`review ${last.reviewId} on ${last.commit}`] : [])],
    };
  }
  if (record.status === "withdrawn") {
    return {
      name,
      status: "failure",
      title: `${label} withdrawn: approve it again`,
      details: [
        record.withdrawnReason ?? "withdrawn",
        ...(record.pendingHash ? [`approve manifest ${record.pendingHash}`] : []),
      ],
    };
  }
  if (record.status === "pending") {
    return {
      name,
      status: "pending",
      title: `${label} waits for an approving review`,
      details: [`approve a commit whose manifest is ${record.pendingHash}`],
    };
  }
  return {
    name,
    status: "pending",
    title: `${label} not reached yet`,
    details: record.withdrawnReason ? [record.withdrawnReason] : [],
  };
}

export function checkStates(snapshot: TrackSnapshot): CheckState[] {
  const { stage, context } = snapshot;
  if (stage === "abandoned") {
    const why = context.ended?.reason ?? "abandoned";
    return (
      [
        "consort/design",
        "consort/test-list",
        "consort/build",
        "consort/deploy",
        "consort/promote",
        "consort/discipline",
      ] as const
    ).map((name) => ({
      name,
      status: "failure",
      title: "track abandoned",
      details: [why],
    }));
  }
  const checks: CheckState[] = [
    gateCheck(snapshot, "design", "consort/design", "design gate"),
    gateCheck(snapshot, "test-list", "consort/test-list", "test-list gate"),
  ];

  const total = context.units.length;
  const unit = currentUnit(context);
  const at = LANE_ORDER.indexOf(stage);
  if (
    context.gates["test-list"].status === "approved" &&
    total > 0 &&
    context.unitIndex >= total &&
    at >= LANE_ORDER.indexOf("deploying")
  ) {
    checks.push({
      name: "consort/build",
      status: "success",
      title: `all ${total} units verified RED → GREEN`,
      details: context.units.map((u) => u.id),
    });
  } else if (stage === "blocked" && context.blocked && BUILD.includes(context.blocked.resume)) {
    checks.push({
      name: "consort/build",
      status: "failure",
      title: `blocked at ${unit?.id ?? "?"}: a person must decide`,
      details: [context.blocked.reason],
    });
  } else if (BUILD.includes(stage)) {
    const failing = context.lastProblem.length > 0;
    checks.push({
      name: "consort/build",
      status: failing ? "failure" : "pending",
      title: `${unit?.id ?? "?"} (${context.unitIndex + 1} of ${total}): ${stage}`,
      details: failing ? context.lastProblem : [`${context.unitIndex} of ${total} units done`],
    });
  } else {
    const withdrawn =
      context.gates["test-list"].status === "withdrawn" ||
      (context.gates["test-list"].status !== "approved" && total > 0);
    checks.push({
      name: "consort/build",
      status: withdrawn ? "failure" : "pending",
      title: withdrawn ? "build evidence withdrawn until the test list is approved again" : "build not started",
      details: withdrawn ? [context.gates["test-list"].withdrawnReason ?? "the test list changed"] : [],
    });
  }

  if (stage === "blocked" && context.blocked?.resume === "deploying") {
    checks.push({
      name: "consort/deploy",
      status: "failure",
      title: "the preview deploy did not verify",
      details: [context.blocked.reason],
    });
  } else if (stage === "deploying") {
    checks.push({
      name: "consort/deploy",
      status: context.lastProblem.length > 0 ? "failure" : "pending",
      title: "deploying a preview and verifying it",
      details: context.lastProblem,
    });
  } else {
    checks.push(gateCheck(snapshot, "deploy", "consort/deploy", "deploy gate"));
  }
  checks.push(gateCheck(snapshot, "promote", "consort/promote", "promote gate"));
  if (stage === "done") for (const check of checks) check.status = "success";

  checks.push(
    context.rejectedHead
      ? {
          name: "consort/discipline",
          status: "failure",
          title: `commit ${context.rejectedHead.sha.slice(0, 7)} rejected: reset the branch to ${context.head.slice(0, 7)}`,
          details: context.rejectedHead.reasons,
        }
      : {
          name: "consort/discipline",
          status: "success",
          title: "every commit was the step in turn, by its role, on its own paths",
          details: [],
        },
  );
  return checks;
}
