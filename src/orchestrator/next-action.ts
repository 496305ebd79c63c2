import { ARTIFACT_PATHS, reviewPath, schemaFile } from "../artifacts/paths.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { ROLE_TRAILER } from "../roles/trailer.js";
import { authorOf, ownershipAt, type ArtifactStep } from "../roles/roles.js";
import { globMatcher } from "../roles/globs.js";
import { placementOf } from "../contracts/placement.js";
import { currentUnit } from "../contracts/track.js";
import { effectiveFrozenTests } from "./context.js";
import {
  gateAtStage,
  isBuildStage,
  isCycleStage,
  STAGES,
  type GateName,
  type NextAction,
  type Stage,
  type TrackSnapshot,
} from "./types.js";

/**
 * What happens next on a track, and the whole lane at a glance. `nextAction` is the JSON an agent
 * receives with its role prompt; `renderNextAction` and `describeLane` are what people read.
 */

const DESIGN_TASKS: Partial<Record<Stage, { task: string; schema: string }>> = {
  stories: {
    task: `Write the feature as stories (as a / I want / so that) with acceptance criteria as given/when/then, ids S1, S1-AC1…, in ${ARTIFACT_PATHS.spec}.`,
    schema: schemaFile("spec"),
  },
  spec: {
    task: `Make ${ARTIFACT_PATHS.spec} precise (notes, edge cases) and add its non-functional requirements (nfrs; an empty list says none).`,
    schema: schemaFile("spec"),
  },
  architecture: {
    task: `Write ${ARTIFACT_PATHS.architecture}: layers and what each may import, modules (each with its path, and in exports the names tests will import from a module the track creates: a RED may import a declared module before anyone writes it, and no other), the persistence invariants the database must hold, and how each NFR is met.`,
    schema: schemaFile("architecture"),
  },
  "db-design": {
    task: `Write ${ARTIFACT_PATHS.dbDesign}: the tables, and a migration plan per story naming the invariants each migration realises.`,
    schema: schemaFile("db-design"),
  },
  ux: {
    task: `Write ${ARTIFACT_PATHS.ux}: a screen with its states (loading, empty, error, filled…) for every user-facing story.`,
    schema: schemaFile("ux"),
  },
  "test-list": {
    task: `Write ${ARTIFACT_PATHS.testList}: the ordered tests T1…Tn, each with its AC, file, the exact title the runner reports, and kind; cover every AC and every persistence invariant, and add a fitness test for the layering.`,
    schema: schemaFile("test-list"),
  },
};

const GATE_TASK: Record<GateName, string> = {
  design:
    "Review the spec, architecture, db design (and ux) in the PR, then approve with a PR review on the current commit. You must not have authored any of them.",
  "test-list":
    "Review the ordered test list in the PR, then approve with a PR review on the current commit. You must not have authored it.",
  deploy:
    "Look at the verified preview deploy (evidence in consort/deploy), then approve the release with a PR review.",
  promote: "Approve migrating the parent's database to this commit with a PR review; then merge the pull request.",
};

export function nextAction(snapshot: TrackSnapshot, config: ConsortConfig): NextAction {
  const { stage, context } = snapshot;
  const unit = currentUnit(context);
  const inBuild = isBuildStage(stage);
  const owner = ownershipAt(stage, config, unit?.id ?? null);
  const base: NextAction = {
    trackId: context.trackId,
    stage,
    actor: "nobody",
    role: owner.role,
    task: "",
    allowedPaths: owner.paths,
    frozenPaths: [],
    unit: inBuild ? (unit?.id ?? null) : null,
    testsInTurn: inBuild ? (unit?.tests ?? []) : [],
    checks: [],
    gate: null,
    head: context.head,
    trailer: owner.role ? `${ROLE_TRAILER}: ${owner.role}` : null,
  };
  const action = describe(snapshot, config, base);
  if (context.rejectedHead) {
    return {
      ...action,
      task: `First reset the branch to ${context.head.slice(0, 7)} (git push --force-with-lease origin ${context.head}:${context.branch}): commit ${context.rejectedHead.sha.slice(0, 7)} was rejected (${context.rejectedHead.reasons.join("; ")}). Then: ${action.task}`,
    };
  }
  return action;
}

function describe(snapshot: TrackSnapshot, config: ConsortConfig, base: NextAction): NextAction {
  const { stage, context } = snapshot;
  const unit = currentUnit(context);
  const design = DESIGN_TASKS[stage];
  const problems = context.lastProblem.length > 0 ? ` Fix first: ${context.lastProblem.join("; ")}.` : "";
  if (design) {
    return {
      ...base,
      actor: "agent",
      task: design.task + problems,
      checks: [
        `the file validates against ${design.schema}`,
        "the cross-file rules of `consort validate` hold (ids, references, coverage)",
        "only the files above change; every commit carries the trailer",
      ],
    };
  }
  const gate = gateAtStage(stage);
  if (gate) {
    const record = context.gates[gate];
    return {
      ...base,
      actor: "person",
      task: `${GATE_TASK[gate]}${record.status === "withdrawn" ? ` (It was withdrawn: ${record.withdrawnReason}.)` : ""}`,
      gate: { name: gate, manifestHash: record.pendingHash ?? "" },
      checks: [
        "the review is APPROVED, by a configured approver with write access",
        "the reviewed commit's manifest equals the pending hash",
        `the reviewer authored none of the commits under approval (${record.authors.join(", ") || "none recorded"})`,
      ],
    };
  }
  if (isCycleStage(stage))
    return {
      ...base,
      actor: "orchestrator",
      task: `Waiting for cycle ${context.pendingDispatch?.dispatchId ?? "(none: retry)"} (${context.pendingDispatch?.step ?? stage}) on ${context.pendingDispatch?.commit.slice(0, 7) ?? context.head.slice(0, 7)}.${problems ? ` Last report:${problems.slice(" Fix first:".length)}` : ""}`,
      checks:
        stage === "deploying"
          ? ["the preview deploys on the track's database branch and every verification passes"]
          : stage === "promoting"
            ? ["the parent's database branch migrates to the merged commit"]
            : [],
    };
  const tests = unit?.tests ?? [];
  const titles = tests.map((t) => `${t.id} "${t.title}" in ${t.file}`).join("; ");
  const frozen = Object.keys(effectiveFrozenTests(context)).sort();
  switch (stage) {
    case "red": {
      const isTest = globMatcher(config.paths.tests);
      return {
        ...base,
        actor: "agent",
        task:
          `Write the failing test${tests.length > 1 ? "s" : ""} ${titles}. Each must fail by an assertion, or only because a module ${ARTIFACT_PATHS.architecture} declares for this track (or a name in its exports) is not written yet, with exactly that title. ` +
          `Any other missing import, a TypeError or a crash proves nothing, inside expect(...).resolves or another wrapper too; a module the architecture does not declare: test through an existing seam. Change only test files.${problems}`,
        frozenPaths: frozen.filter((p) => isTest(p)).map((path) => ({ path, rule: "append-only" as const })),
        checks: [
          "every test in turn is present and fails by an assertion, or only because a declared module or export is not written yet",
          "every earlier test still passes",
          "frozen test files only grow: every frozen line stays, in order; no skip or focus markers",
          "only test files change",
        ],
      };
    }
    case "green":
    case "repair":
      return {
        ...base,
        actor: "agent",
        task: `${stage === "repair" ? `Repair (attempt ${context.attempts + 1} of ${context.settings.repairBound}): the last GREEN failed. ` : ""}Make ${tests.map((t) => t.id).join(", ")} pass by changing application code and migrations only; never a test file.${problems}`,
        frozenPaths: frozen.map((path) => ({ path, rule: "unchanged" as const })),
        checks: [
          "migrations apply to a throwaway copy of the track's database",
          `every test up to and including ${unit?.tests.at(-1)?.id ?? "the turn"} passes`,
          "no frozen test file changed",
        ],
      };
    case "review":
      return {
        ...base,
        actor: "agent",
        task: `Review the GREEN of ${unit?.id}: write ${reviewPath(unit?.id ?? "T1")} with "verdict": "accept" or "refactor" and notes (required for refactor).${problems}`,
        checks: [
          `the file validates against ${schemaFile("review")} and names the unit in turn`,
          "only that file changes",
        ],
      };
    case "refactor": {
      const review = unit ? context.artifacts[reviewPath(unit.id)] : undefined;
      return {
        ...base,
        actor: "agent",
        task: `Refactor as the review of ${unit?.id} asks, keeping every test green; never change a test file.${review ? ` Review: ${review.trim()}` : ""}${problems}`,
        frozenPaths: frozen.map((path) => ({ path, rule: "unchanged" as const })),
        checks: ["every test verified so far still passes", "no frozen test file changed"],
      };
    }
    case "blocked":
      return {
        ...base,
        actor: "person",
        task: `Blocked: ${context.blocked?.reason ?? "verification failed"}. Decide: retry (another round at ${context.blocked?.resume}), renegotiate the test list, or abandon the track.`,
      };
    case "merging":
      return {
        ...base,
        actor: "person",
        task: placementOf(config).shared
          ? "Every gate is approved: merge the pull request. Consort then migrates the parent's database branch."
          : "Every gate is approved: merge the pull request. There is no persistent parent to migrate (the jobs run apart from the app's branches), so the merge is the promotion.",
      };
    case "done":
      return { ...base, actor: "nobody", task: "Done: merged and promoted." };
    case "abandoned":
      return { ...base, actor: "nobody", task: `Abandoned: ${context.ended?.reason ?? ""}` };
    default:
      return base;
  }
}

/** The next action for a person at a terminal. */
export function renderNextAction(action: NextAction): string {
  const lines = [
    `track ${action.trackId} · ${action.stage}${action.unit ? ` · ${action.unit}` : ""}`,
    `next: ${action.actor}${action.role ? ` (${action.role})` : ""}`,
    "",
    action.task,
  ];
  if (action.testsInTurn.length > 0)
    lines.push("", "tests in turn:", ...action.testsInTurn.map((t) => `  ${t.id} [${t.kind}] ${t.file} :: ${t.title}`));
  if (action.allowedPaths.length > 0) lines.push("", `may change: ${action.allowedPaths.join(", ")}`);
  if (action.frozenPaths.length > 0)
    lines.push(`frozen: ${action.frozenPaths.map((f) => `${f.path} (${f.rule})`).join(", ")}`);
  if (action.trailer) lines.push(`every commit ends with the trailer: ${action.trailer}`);
  if (action.gate) lines.push(`approve manifest: ${action.gate.manifestHash}`);
  if (action.checks.length > 0) lines.push("", "will be checked:", ...action.checks.map((c) => `  - ${c}`));
  return lines.join("\n");
}

export interface LaneView {
  done: string[];
  now: string;
  next: string[];
}

/** The lane as done / now / next, for check-run summaries and `consort status`. */
export function describeLane(snapshot: TrackSnapshot): LaneView {
  const { stage, context } = snapshot;
  const ux =
    context.artifacts[ARTIFACT_PATHS.ux] !== undefined ||
    /"userFacing"\s*:\s*true/.test(context.artifacts[ARTIFACT_PATHS.spec] ?? "");
  const authored = (step: ArtifactStep, what: string): [Stage, string] => [step, `${what} (${authorOf(step)})`];
  const design: Array<[Stage, string]> = [
    authored("stories", "stories and acceptance criteria"),
    authored("spec", "spec and NFRs"),
    authored("architecture", "architecture"),
    authored("db-design", "database design"),
    ...(ux ? [authored("ux", "screens and states")] : []),
    ["design-gate", "design gate (a person approves)"],
    authored("test-list", "test list"),
    ["test-list-gate", "test-list gate (a person approves)"],
  ];
  const items: Array<{ stage: Stage | "unit"; label: string; unitIndex?: number }> = design.map(([s, label]) => ({
    stage: s,
    label,
  }));
  context.units.forEach((unit, index) =>
    items.push({
      stage: "unit",
      unitIndex: index,
      label: `${unit.id}: red → green → review${unit.tests.length > 1 ? ` (${unit.tests.map((t) => t.id).join(", ")})` : ""}`,
    }),
  );
  if (context.units.length === 0)
    items.push({ stage: "unit", unitIndex: 0, label: "build: red → green → review per test" });
  items.push(
    { stage: "deploying", label: "preview deploy, verified" },
    { stage: "deploy-gate", label: "deploy gate (a person approves)" },
    { stage: "promote-gate", label: "promote gate (a person approves)" },
    { stage: "merging", label: "merge the pull request" },
    { stage: "promoting", label: "migrate the parent database" },
  );
  // Blocked counts as the stage it will resume: a unit of the build lane, or the release.
  const effective: Stage = stage === "blocked" ? (context.blocked?.resume ?? "red") : stage;
  const build = isBuildStage(effective);
  const position = (item: (typeof items)[number]): number =>
    item.stage === "unit" ? STAGES.indexOf("red") : STAGES.indexOf(item.stage);
  const here = build ? STAGES.indexOf("red") : STAGES.indexOf(effective);

  const view: LaneView = { done: [], now: "", next: [] };
  if (stage === "abandoned") {
    return { done: [], now: `abandoned: ${context.ended?.reason ?? ""}`, next: [] };
  }
  for (const item of items) {
    const p = position(item);
    if (item.stage === "unit" && build) {
      const i = item.unitIndex!;
      if (i < context.unitIndex) view.done.push(item.label);
      else if (i === context.unitIndex)
        view.now = `${item.label.split(":")[0]}: ${stage}${stage === "blocked" ? ` (${context.blocked?.reason ?? ""})` : ""}`;
      else view.next.push(item.label);
    } else if (p < here || stage === "done") view.done.push(item.label);
    else if (p === here && item.stage !== "unit")
      view.now = stage === "blocked" ? `${item.label}: blocked (${context.blocked?.reason ?? ""})` : item.label;
    else view.next.push(item.label);
  }
  if (stage === "done") view.now = "done";
  if (context.rejectedHead) view.now += ` — halted: commit ${context.rejectedHead.sha.slice(0, 7)} rejected`;
  return view;
}

/** The lane as text. */
export function renderLane(snapshot: TrackSnapshot): string {
  const lane = describeLane(snapshot);
  return [...lane.done.map((l) => `  ✓ ${l}`), `  ▶ ${lane.now}`, ...lane.next.map((l) => `  · ${l}`)].join("\n");
}
