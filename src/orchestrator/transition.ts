import { initialTransition, transition as xstateTransition } from "xstate";
import { ARTIFACT_PATHS, reviewPath } from "../artifacts/paths.js";
import { ReviewVerdict } from "../contracts/review.js";
import { Spec } from "../artifacts/spec.js";
import { formatIssue } from "../artifacts/issues.js";
import { parseArtifact, validateArtifacts, type Checkpoint } from "../artifacts/validate.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { formatZodError, zodProblems } from "../contracts/zod-error.js";
import {
  commandFolders,
  configuredCommands,
  hashFrozenText,
  isRunnerConfigPath,
  touchesBeyondConsort,
  type FrozenState,
} from "../gates/freeze.js";
import type { FileGate } from "../contracts/gates.js";
import { frozenChangesAtHead } from "../gates/withdrawal.js";
import { classifyCommit } from "../roles/classify.js";
import { globMatcher } from "../roles/globs.js";
import { addFrozenText, frozenState, initialContext } from "./context.js";
import { trackMachine } from "./machine.js";
import type { MachineEvent } from "./machine-setup.js";
import { nextAction } from "./next-action.js";
import {
  CreateTrackInputSchema,
  currentUnit,
  TrackEventSchema,
  TrackSnapshotSchema,
  TrackSnapshotV1Schema,
} from "../contracts/track.js";
import {
  SNAPSHOT_SCHEMA_VERSION,
  type ChangedPath,
  type CreateTrackInput,
  type Effect,
  type PushEvent,
  type Stage,
  type TrackContext,
  type TrackEvent,
  type TrackSnapshot,
  type TransitionResult,
} from "./types.js";

/**
 * The public face of the machine: `createTrack`, `transition`, `restoreSnapshot`. A `TrackEvent`
 * is checked against the snapshot (commit classification, pending dispatch, gate in turn) and turned
 * into the machine's internal event; xstate's pure `transition` computes the next state; the effects
 * are read off its action list, plus the checks every transition restates. No I/O, no clock.
 */

type Snapshot = ReturnType<typeof trackMachine.resolveState>;

const DESIGN_CHECKPOINT: Partial<Record<Stage, Checkpoint>> = {
  stories: "stories",
  spec: "spec",
  architecture: "architecture",
  "db-design": "db-design",
  ux: "ux",
  "test-list": "test-list",
};

/**
 * The paths whose text a handler must put in `PushedCommit.files`: `.consort/**`, test files, code
 * files (the classifier refuses test code in production code) and the runner's configuration files.
 */
export function pathsToRead(changes: ChangedPath[], config: ConsortConfig): string[] {
  const reads = globMatcher([...config.paths.tests, ...config.paths.code]);
  const commands = Object.values(configuredCommands(config.commands));
  const out = new Set<string>();
  for (const change of changes) {
    if (change.status === "removed") continue;
    if (change.path.startsWith(".consort/") || reads(change.path) || isRunnerConfigPath(change.path, commands))
      out.add(change.path);
  }
  return [...out];
}

/** The paths whose text before the commit a handler must put in `PushedCommit.before`: the runner configuration files it changed. */
export function runnerPathsToRead(changes: ChangedPath[], config: ConsortConfig): string[] {
  const commands = Object.values(configuredCommands(config.commands));
  const out = new Set<string>();
  for (const change of changes) {
    for (const path of [change.path, change.previousPath])
      if (path !== undefined && isRunnerConfigPath(path, commands)) out.add(path);
  }
  return [...out];
}

/**
 * Once the runner's configuration is frozen (the test-list gate has opened), the paths whose text
 * before each commit that changes anything outside `.consort/` a handler must also put in
 * `PushedCommit.before`: the package.json of the root and of each folder a command runs in,
 * whose scripts say which files the test command runs (see runnerReach). Empty before then, so
 * the design lane's pushes read nothing more.
 */
export function runnerPackagesToRead(changes: ChangedPath[], config: ConsortConfig, snapshot: TrackSnapshot): string[] {
  if (snapshot.context.gates["test-list"].status === "closed" || !changes.some(touchesBeyondConsort)) return [];
  return [
    "package.json",
    ...commandFolders(Object.values(configuredCommands(config.commands))).map((dir) => `${dir}/package.json`),
  ];
}

/** Start a track: the first snapshot (at `stories`) and its effects (fork the database branch, ask the Product Owner). */
export function createTrack(input: CreateTrackInput, config: ConsortConfig): TransitionResult {
  const parsed = CreateTrackInputSchema.safeParse(input);
  if (!parsed.success) {
    throw new Error(formatZodError(parsed.error, "cannot create a track", { inline: true }));
  }
  const [state, actions] = initialTransition(trackMachine, initialContext(parsed.data, config));
  const snapshot = toSnapshot(state);
  const effects = collectEffects(actions);
  return { snapshot, effects: [...effects, ...afterEffects(null, snapshot, config)] };
}

/**
 * Restore a persisted snapshot. Fails closed: an unknown schema version or a malformed snapshot
 * throws with what is wrong, so a handler fails its checks instead of guessing.
 */
export function restoreSnapshot(json: unknown): TrackSnapshot {
  const value = typeof json === "string" ? parseJson(json) : json;
  if (!value || typeof value !== "object") throw new SnapshotError("the track snapshot is not a JSON object");
  const version = (value as { schemaVersion?: unknown }).schemaVersion;
  if (version === undefined)
    throw new SnapshotError(
      "this is not a track snapshot: it has no schemaVersion",
      "pass a snapshot or a tracks/<id>.json file from the consort/state branch, or leave the state out to derive it from the branch's commits",
    );
  if (version === 1) return snapshotFromV1(value);
  if (version !== SNAPSHOT_SCHEMA_VERSION) {
    throw new SnapshotError(
      `track snapshot schema version ${JSON.stringify(version)} is not supported: this Consort reads version ${SNAPSHOT_SCHEMA_VERSION} (and converts version 1)`,
      typeof version === "number" && version > SNAPSHOT_SCHEMA_VERSION
        ? "upgrade Consort: the state was written by a newer version"
        : "the state file is damaged or not a Consort track: restore it from the consort/state history",
    );
  }
  const parsed = TrackSnapshotSchema.safeParse(value);
  if (!parsed.success) {
    throw new SnapshotError(
      formatZodError(parsed.error, "the track snapshot is malformed", { inline: true, limit: 8 }),
      "the state file is damaged: restore it from the consort/state history",
    );
  }
  return parsed.data;
}

/**
 * Convert a version-1 snapshot, whose frozen test entries held their texts, to the current
 * version: the same entries without the text, and each distinct text once by its hash. It decides
 * exactly as before; the next write is the current version.
 */
function snapshotFromV1(value: object): TrackSnapshot {
  const parsed = TrackSnapshotV1Schema.safeParse(value);
  if (!parsed.success) {
    throw new SnapshotError(
      formatZodError(parsed.error, "the track snapshot (version 1) is malformed", { inline: true, limit: 8 }),
      "the state file is damaged: restore it from the consort/state history",
    );
  }
  const { context, stage } = parsed.data;
  const frozenTests: TrackContext["frozenTests"] = {};
  const frozenTexts: TrackContext["frozenTexts"] = {};
  // In the order they were frozen: each file's text then starts with the one frozen before it.
  const latest = new Map<string, string>();
  for (const [key, { text, ...entry }] of Object.entries(context.frozenTests)) {
    // The hash is what the cycle re-checks on the runner: a text that does not match it is not the one frozen.
    if (hashFrozenText(text) !== entry.hash)
      throw new SnapshotError(
        `the track snapshot (version 1) is malformed: the frozen text of ${entry.file} (frozen by ${entry.test}) does not match its hash ${entry.hash}`,
        "the state file is damaged: restore it from the consort/state history",
      );
    frozenTests[key] = entry;
    addFrozenText(frozenTexts, entry.hash, text, latest.get(entry.file));
    latest.set(entry.file, entry.hash);
  }
  return { schemaVersion: SNAPSHOT_SCHEMA_VERSION, stage, context: { ...context, frozenTests, frozenTexts } };
}

export class SnapshotError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = "SnapshotError";
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new SnapshotError(`the track snapshot is not valid JSON: ${(error as Error).message}`);
  }
}

/** Decide one event: the next snapshot, the effects to run, and (when refused) every reason. */
export function transition(snapshot: TrackSnapshot, event: TrackEvent, config: ConsortConfig): TransitionResult {
  const parsed = TrackEventSchema.safeParse(event);
  if (!parsed.success) {
    return refuse(
      snapshot,
      config,
      zodProblems(parsed.error).map((problem) => `event ${problem}`),
    );
  }
  if (snapshot.stage === "done" || snapshot.stage === "abandoned") {
    return refuse(snapshot, config, [`the track has ended (${snapshot.stage}); nothing more happens on it`]);
  }
  const context: TrackContext = {
    ...snapshot.context,
    settings: { repairBound: config.repairBound, granularity: snapshot.context.settings.granularity },
  };
  const start = { ...snapshot, context };

  const translated = translate(start, event, config);
  if ("refused" in translated) return refuse(snapshot, config, translated.refused);

  let state: Snapshot = trackMachine.resolveState({ value: start.stage, context: start.context });
  const effects: Effect[] = [];
  for (const machineEvent of translated.events) {
    const [next, actions] = xstateTransition(trackMachine, state, machineEvent);
    if (next === state) {
      return refuse(snapshot, config, [
        `${describeEvent(event)} does not apply while the track is at ${snapshot.stage}`,
      ]);
    }
    state = next;
    effects.push(...collectEffects(actions));
  }
  const result = toSnapshot(state);
  const notes = translated.notes;
  if (notes.length > 0) effects.push({ type: "comment", body: notes.join("\n") });
  const all = [...effects, ...afterEffects(snapshot, result, config)];
  return translated.rejection
    ? { snapshot: result, effects: all, rejection: { reasons: translated.rejection } }
    : { snapshot: result, effects: all };
}

function refuse(snapshot: TrackSnapshot, _config: ConsortConfig, reasons: string[]): TransitionResult {
  return { snapshot, effects: [], rejection: { reasons } };
}

function describeEvent(event: TrackEvent): string {
  switch (event.type) {
    case "gate.approved":
    case "gate.withdrawn":
      return `${event.type} for the ${event.gate} gate`;
    case "renegotiate":
      return `renegotiating the ${event.scope}${event.scope === "design" ? ` from ${event.from ?? "spec"}` : ""}`;
    default:
      return event.type;
  }
}

type Translation = { events: MachineEvent[]; notes: string[]; rejection?: string[] } | { refused: string[] };

function translate(snapshot: TrackSnapshot, event: TrackEvent, config: ConsortConfig): Translation {
  const context = snapshot.context;
  switch (event.type) {
    case "push":
      return translatePush(snapshot, event, config);
    case "gate.approved": {
      const record = context.gates[event.gate];
      if (context.rejectedHead)
        return {
          refused: [
            `the branch holds rejected commit ${context.rejectedHead.sha.slice(0, 7)}: reset it to ${context.head.slice(0, 7)} before approving`,
          ],
        };
      if (record.status === "approved")
        return { refused: [`the ${event.gate} gate is already approved at ${record.approvedHash?.slice(0, 12)}`] };
      if (record.pendingHash === null || record.status === "closed")
        return { refused: [`the ${event.gate} gate is not open: the track is at ${snapshot.stage}`] };
      if (record.pendingHash !== event.manifestHash) {
        return {
          refused: [
            `the review approves manifest ${event.manifestHash.slice(0, 12)}, but the ${event.gate} gate waits for ${record.pendingHash.slice(0, 12)}: approve the current commit`,
          ],
        };
      }
      return {
        events: [
          {
            type: "GATE_APPROVED",
            at: event.at,
            gate: event.gate,
            approval: {
              approver: event.approver,
              reviewId: event.reviewId,
              commit: event.commit,
              manifestHash: event.manifestHash,
              at: event.at,
            },
          },
        ],
        notes: [],
      };
    }
    case "gate.withdrawn":
      if (context.gates[event.gate].status !== "approved")
        return { refused: [`the ${event.gate} gate is not approved, so there is nothing to withdraw`] };
      if (snapshot.stage === "promoting")
        return { refused: ["the pull request is merged: approvals no longer change anything"] };
      return {
        events: [{ type: "GATE_WITHDRAWN", at: event.at, gate: event.gate, reason: event.reason }],
        notes: [`**The ${event.gate} gate is withdrawn**: ${event.reason}. It needs approving again.`],
      };
    case "cycle.reported":
    case "deploy.reported":
    case "promotion.reported": {
      const pending = context.pendingDispatch;
      const step =
        event.type === "cycle.reported" ? event.step : event.type === "deploy.reported" ? "release" : "promote";
      if (!pending) return { refused: [`ignored report ${event.dispatchId}: no cycle is pending`] };
      if (pending.dispatchId !== event.dispatchId)
        return { refused: [`ignored report ${event.dispatchId}: the pending cycle is ${pending.dispatchId}`] };
      if (pending.step !== step)
        return {
          refused: [`ignored report ${event.dispatchId}: it reports ${step}, the pending cycle is ${pending.step}`],
        };
      if (event.type !== "promotion.reported" && event.commit !== pending.commit) {
        return {
          refused: [
            `ignored report ${event.dispatchId}: it ran on ${event.commit.slice(0, 7)}, the cycle was dispatched for ${pending.commit.slice(0, 7)}`,
          ],
        };
      }
      let outcome = event.outcome;
      let reasons = event.reasons;
      if (step === "red" && outcome === "valid") {
        const unknown = (currentUnit(context)?.tests ?? [])
          .filter((t) => context.testFiles[t.file] === undefined)
          .map((t) => t.file);
        if (unknown.length > 0) {
          outcome = "invalid";
          reasons = [
            ...reasons,
            `the text of ${[...new Set(unknown)].join(", ")} was never pushed on this track, so the test cannot be frozen: add the test in a RED commit`,
          ];
        }
      }
      if (
        step === "release" &&
        outcome === "valid" &&
        event.type === "deploy.reported" &&
        event.evidence.checks.some((c) => !c.ok)
      ) {
        outcome = "invalid";
        reasons = [
          ...reasons,
          ...event.evidence.checks
            .filter((c) => !c.ok)
            .map((c) => `verification ${c.name} failed${c.detail ? `: ${c.detail}` : ""}`),
        ];
      }
      const evidence = event.type === "promotion.reported" ? null : event.evidence;
      const runId = event.type === "promotion.reported" ? null : event.runId;
      return { events: [{ type: "CYCLE_REPORTED", at: event.at, step, outcome, runId, reasons, evidence }], notes: [] };
    }
    case "renegotiate":
      return {
        events: [
          {
            type: "RENEGOTIATE",
            at: event.at,
            by: event.by,
            scope: event.scope,
            from: event.from ?? "spec",
            reason: event.reason,
          },
        ],
        notes: [
          `**${event.by} reopened the ${event.scope === "design" ? `design from ${event.from ?? "spec"}` : "test list"}**: ${event.reason}. Gates that depended on it are withdrawn.`,
        ],
      };
    case "retry":
      return { events: [{ type: "RETRY", at: event.at, by: event.by }], notes: [] };
    case "merged":
      return { events: [{ type: "MERGED", at: event.at, commit: event.commit }], notes: [] };
    case "closed":
      return { events: [{ type: "CLOSED", at: event.at, by: event.by ?? null }], notes: [] };
    case "abandon":
      return { events: [{ type: "ABANDON", at: event.at, by: event.by, reason: event.reason }], notes: [] };
  }
}

/**
 * A force-push from the last accepted commit: taken only when the app verified it as the track's
 * accepted commits replayed onto the default branch's head, and the frozen files at the new head
 * are what the gates froze. Then it is an update from the default branch (the release is verified
 * again, migration conflicts are named); anything else rewritten is refused with the reason.
 */
function rebasedPush(
  snapshot: TrackSnapshot,
  push: PushEvent,
  events: MachineEvent[],
  rejected: (reasons: string[], withdraw?: FileGate | null) => Translation,
): Translation {
  const context = snapshot.context;
  const atHead = frozenAtHead(push, frozenState(context), acceptedTexts(context, []));
  const reasons = [...(push.problems ?? []), ...atHead.reasons];
  if (reasons.length > 0 || !push.rebased) return rejected(reasons, atHead.withdraw);
  const { onto, commits } = push.rebased;
  return updatedFromBase(
    push,
    events,
    { replayed: commits },
    `The branch is rebased onto ${context.baseBranch} at ${onto.slice(0, 7)}: its ${commits.length} commit(s) are the track's accepted ones replayed, and the track stays at ${snapshot.stage}.`,
  );
}

/**
 * The branch brought up to date with the default branch, by a merge (`merges`) or a verified rebase
 * (`replayed`): the head moves, no step was taken, and the release is verified again.
 */
function updatedFromBase(
  push: PushEvent,
  events: MachineEvent[],
  how: { merges: string[] } | { replayed: Array<{ from: string; to: string }> },
  note: string,
): Translation {
  return {
    events: [
      ...events,
      {
        type: "BRANCH_UPDATED",
        at: push.at,
        head: push.after,
        migrationConflicts: push.migrationConflicts ?? [],
        ...how,
      },
    ],
    notes: [note],
  };
}

/** What the push's head does to the frozen files against the accepted texts (nothing known without the head's blobs). */
function frozenAtHead(
  push: PushEvent,
  frozen: FrozenState,
  accepted: Record<string, string | null | undefined>,
): ReturnType<typeof frozenChangesAtHead> {
  if (!push.headBlobs) return { reasons: [], withdraw: null };
  return frozenChangesAtHead({ frozen, accepted, headBlobs: push.headBlobs, head: push.after });
}
function translatePush(snapshot: TrackSnapshot, push: PushEvent, config: ConsortConfig): Translation {
  const context = snapshot.context;
  const events: MachineEvent[] = [];
  const head = context.head;
  const short = (s: string) => s.slice(0, 7);
  const reset = `reset the branch to ${short(head)} (git push --force-with-lease origin ${head}:${context.branch})`;

  if (push.after === head) {
    if (context.rejectedHead)
      return {
        events: [{ type: "BRANCH_RESET", at: push.at }],
        notes: [`The branch is back at ${short(head)}: the rejected commits are gone.`],
      };
    return { refused: [`the push leaves the branch at ${short(head)}, the last accepted commit: nothing to decide`] };
  }
  const acceptedTree = context.rejectedHead?.acceptedTree ?? (push.before === head ? push.trees?.before : undefined);
  const rejected = (reasons: string[], withdraw: FileGate | null = null): Translation => ({
    events: [
      {
        type: "PUSH_REJECTED",
        at: push.at,
        sha: push.after,
        reasons,
        withdraw,
        ...(acceptedTree ? { acceptedTree } : {}),
      },
    ],
    notes: [
      // A change to a gate's frozen file sends the track back to that gate (docs/ARCHITECTURE.md, Gates).
      `**Push to ${short(push.after)} rejected** (${withdraw ? `the ${withdraw} gate is withdrawn and must be approved again` : `the track stays at ${snapshot.stage}`}):`,
      ...reasons.map((r) => `- ${r}`),
      "",
      `To continue, ${reset} and push the step again.`,
    ],
    rejection: reasons,
  });
  const frozen = frozenState(context);
  if (context.rejectedHead && push.before === context.rejectedHead.sha) {
    // On top of refused commits: a commit whose tree is the last accepted one's reverts them, and
    // the track goes on from it; anything else is still refused, its frozen files examined at the head.
    if (push.trees && acceptedTree === push.trees.after)
      return {
        events: [{ type: "BRANCH_RESET", at: push.at, head: push.after }],
        notes: [
          `The branch is back at the tree of ${short(head)}: ${short(push.after)} reverts the rejected commits, and the track goes on from it.`,
        ],
      };
    const atHead = frozenAtHead(push, frozen, acceptedTexts(context, []));
    return rejected(
      [`the branch still holds rejected commit ${short(context.rejectedHead.sha)}`, ...atHead.reasons],
      atHead.withdraw,
    );
  }
  if (push.before !== head) {
    return rejected([
      `the branch moved from ${short(push.before)}, not from the last accepted commit ${short(head)} (history was rewritten)`,
    ]);
  }
  if (context.rejectedHead) events.push({ type: "BRANCH_RESET", at: push.at });
  // Rewritten history: a rebase the app verified, or the reason it is none (a reset behind the head is neither).
  if (push.rebased || (push.forced && push.commits.length === 0 && (push.problems ?? []).length > 0))
    return rebasedPush(snapshot, push, events, rejected);
  if (push.commits.length === 0) return { refused: ["the push carries no commits"] };
  if (push.commits.at(-1)!.sha !== push.after)
    return {
      refused: [`the push's last commit ${short(push.commits.at(-1)!.sha)} is not its head ${short(push.after)}`],
    };

  const unit = currentUnit(context);
  const reasons: string[] = [...(push.problems ?? [])];
  let withdraw: FileGate | null = null;
  const artifacts: Record<string, string | null> = {};
  const testFiles: Record<string, string | null> = {};
  const isTest = globMatcher(config.paths.tests);
  const authors: string[] = [];
  const steps = push.commits.filter((commit) => !commit.merge);
  for (const commit of steps) {
    const verdict = classifyCommit({
      commit,
      stage: snapshot.stage,
      unit: unit?.id ?? null,
      config,
      frozen,
      pusher: push.pusher,
    });
    reasons.push(...verdict.reasons);
    for (const touched of verdict.frozenTouched) {
      if (touched.gate === "design") withdraw = "design";
      else if (withdraw === null && touched.gate === "test-list") withdraw = "test-list";
    }
    if (commit.authorLogin && !authors.includes(commit.authorLogin)) authors.push(commit.authorLogin);
    // The pusher took part in the step as much as its author: neither may approve the gate over it.
    if (push.pusher && !authors.includes(push.pusher)) authors.push(push.pusher);
    for (const change of commit.changes) {
      const paths =
        change.previousPath && change.previousPath !== change.path ? [change.previousPath, change.path] : [change.path];
      for (const path of paths) {
        const removed = change.status === "removed" || path !== change.path;
        const text = removed ? null : (commit.files[path] ?? null);
        if (path.startsWith(".consort/")) artifacts[path] = text;
        else if (isTest(path)) testFiles[path] = text;
      }
    }
  }
  const atHead = frozenAtHead(push, frozen, acceptedTexts(context, [artifacts, testFiles]));
  reasons.push(...atHead.reasons);
  if (atHead.withdraw === "design" || withdraw === null) withdraw = atHead.withdraw ?? withdraw;
  if (reasons.length > 0) return rejected(reasons, withdraw);
  if (steps.length === 0)
    return updatedFromBase(
      push,
      events,
      { merges: push.commits.filter((commit) => commit.merge).map((commit) => commit.sha) },
      `The branch is brought up to date with ${context.baseBranch} at ${short(push.after)}: the merged-in commits are not the track's, and the track stays at ${snapshot.stage}.`,
    );

  // Every commit is the step in turn: is the step's output complete?
  const merged: Record<string, string | undefined> = { ...context.artifacts };
  for (const [path, text] of Object.entries(artifacts)) merged[path] = text ?? undefined;
  let complete = true;
  let problems: string[] = [];
  let verdict: "accept" | "refactor" | null = null;
  const checkpoint = DESIGN_CHECKPOINT[snapshot.stage];
  if (checkpoint) {
    const result = validateArtifacts(merged, checkpoint, { testGlobs: config.paths.tests });
    complete = result.ok;
    problems = result.issues.map(formatIssue);
  } else if (snapshot.stage === "review" && unit) {
    const path = reviewPath(unit.id);
    const review = parseArtifact(path, merged[path], ReviewVerdict);
    if (review.value && review.value.unit !== unit.id) {
      complete = false;
      problems = [
        `${path} $.unit: the review names ${review.value.unit}, the unit in turn is ${unit.id} → set "unit": "${unit.id}"`,
      ];
    } else {
      complete = review.value !== undefined;
      problems = review.issues.map(formatIssue);
      verdict = review.value?.verdict ?? null;
    }
  }
  // Only the db-design step goes on to ux or not: every later push would parse the spec for nothing.
  const spec = snapshot.stage === "db-design" ? merged[ARTIFACT_PATHS.spec] : undefined;
  const needsUx =
    spec !== undefined &&
    (parseArtifact(ARTIFACT_PATHS.spec, spec, Spec).value?.stories.some((s) => s.userFacing) ?? false);
  events.push({
    type: "STEP_PUSHED",
    at: push.at,
    head: push.after,
    authors,
    artifacts,
    testFiles,
    complete,
    problems,
    needsUx,
    verdict,
  });
  const notes = complete
    ? []
    : [
        `**${snapshot.stage}: not complete yet** at ${short(push.after)}; the step stays open until these are fixed:`,
        ...problems.map((p) => `- ${p}`),
      ];
  return { events, notes };
}

/** The text the track accepted of each path (artifacts and test files), with a push's changes applied. */
function acceptedTexts(
  context: TrackContext,
  changes: Array<Record<string, string | null>>,
): Record<string, string | null | undefined> {
  return Object.assign({}, context.artifacts, context.testFiles, ...changes) as Record<
    string,
    string | null | undefined
  >;
}

function toSnapshot(state: Snapshot): TrackSnapshot {
  return { schemaVersion: SNAPSHOT_SCHEMA_VERSION, stage: state.value, context: state.context };
}

function collectEffects(actions: Array<{ type: string; params?: unknown }>): Effect[] {
  return actions.filter((a) => a.type === "emit").map((a) => a.params as Effect);
}

/**
 * What every transition restates: the checks, and the agent for a new step when agents are on. A
 * step is new when the stage changes: a renegotiation always lands at another stage, and the one
 * event that re-enters its own stage, a retry of a cycle stage, leaves the orchestrator to act.
 */
function afterEffects(before: TrackSnapshot | null, after: TrackSnapshot, config: ConsortConfig): Effect[] {
  const effects: Effect[] = [];
  const entered = before === null || before.stage !== after.stage;
  if (config.agents.enabled && entered && !after.context.rejectedHead) {
    const action = nextAction(after, config);
    if (action.actor === "agent" && action.role)
      effects.push({ type: "dispatchAgent", role: action.role, nextAction: action });
  }
  effects.push({ type: "updateChecks", commit: after.context.rejectedHead?.sha ?? after.context.head });
  return effects;
}
