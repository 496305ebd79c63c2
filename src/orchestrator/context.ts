import { ARTIFACT_PATHS, DESIGN_GATE_FILES } from "../artifacts/paths.js";
import { TestList, type TestListEntry } from "../contracts/test-list.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { hashFrozenText, manifestHashFromHashes } from "../gates/hash.js";
import { FILE_GATES, GATE_NAMES, type FileGate } from "../contracts/gates.js";
import { currentUnit } from "../contracts/track.js";
import type { FrozenState } from "../gates/freeze.js";
import type {
  BuildUnit,
  CreateTrackInput,
  CycleStep,
  DispatchCycleEffect,
  FrozenTestFile,
  GateName,
  GateRecord,
  TrackContext,
  UnitEvidence,
} from "./types.js";

/** Pure helpers over the track context: units, frozen files, gates and their cascade. */

function closedGate(): GateRecord {
  return {
    status: "closed",
    pendingHash: null,
    approvedHash: null,
    files: {},
    authors: [],
    approvals: [],
    withdrawnReason: null,
  };
}

export function initialContext(input: CreateTrackInput, config: ConsortConfig): TrackContext {
  return {
    trackId: input.trackId,
    branch: input.branch,
    baseBranch: input.baseBranch,
    databaseBranch: input.databaseBranch,
    parentDatabaseBranch: input.parentDatabaseBranch,
    head: input.head,
    rejectedHead: null,
    createdAt: input.at,
    updatedAt: input.at,
    sequence: 0,
    artifacts: {},
    testFiles: {},
    settings: { repairBound: config.repairBound, granularity: config.granularity },
    gates: Object.fromEntries(GATE_NAMES.map((gate) => [gate, closedGate()])) as Record<GateName, GateRecord>,
    units: [],
    unitIndex: 0,
    evidence: {},
    attempts: 0,
    frozenTests: {},
    frozenTexts: {},
    pendingDispatch: null,
    cycles: [],
    deployEvidence: null,
    blocked: null,
    mergedCommit: null,
    ended: null,
    lastProblem: [],
  };
}

/**
 * The last test list read, by its text: approving the test-list gate asks for the units once per
 * stage it may resume at and once more to build them, each a parse of the whole list.
 */
let lastList: { text: string; tests: readonly TestListEntry[] | null } | undefined;

/** The approved (or pending) test list in the context, or null when absent or invalid. */
export function testListOf(context: TrackContext): readonly TestListEntry[] | null {
  const text = context.artifacts[ARTIFACT_PATHS.testList];
  if (text === undefined) return null;
  if (lastList?.text === text) return lastList.tests;
  let tests: readonly TestListEntry[] | null;
  try {
    const parsed = TestList.safeParse(JSON.parse(text));
    tests = parsed.success ? parsed.data.tests : null;
  } catch {
    tests = null;
  }
  lastList = { text, tests };
  return tests;
}

/** Build units in list order: one per test, or one per acceptance criterion (its tests in list order). */
export function buildUnits(tests: readonly TestListEntry[], granularity: "test" | "ac"): BuildUnit[] {
  if (granularity === "test") return tests.map((test) => ({ id: test.id, tests: [test] }));
  const units: BuildUnit[] = [];
  const byAc = new Map<string, BuildUnit>();
  for (const test of tests) {
    let unit = byAc.get(test.ac);
    if (!unit) {
      unit = { id: test.ac, tests: [] };
      byAc.set(test.ac, unit);
      units.push(unit);
    }
    unit.tests.push(test);
  }
  return units;
}

/** The tests of `units`, in order (a loop: flatMap is ten times slower over a long track's units). */
function testsOf(units: readonly BuildUnit[]): TestListEntry[] {
  const tests: TestListEntry[] = [];
  for (const unit of units) for (const test of unit.tests) tests.push(test);
  return tests;
}

/** Tests of the units already complete: they must stay green. */
export function greenTests(context: TrackContext): TestListEntry[] {
  return testsOf(context.units.slice(0, context.unitIndex));
}

const testNumber = (id: string) => Number(id.slice(1));

interface FrozenTestIndex {
  /** path → the entry of the latest verified RED that froze the file. */
  effective: Readonly<Record<string, FrozenTestFile>>;
  /** The entry of the earliest test whose RED froze anything (the first such in the record on a tie). */
  first: FrozenTestFile | undefined;
}

/**
 * The index of each frozen-test record already read. A record is replaced on every change, never
 * changed in place, and a long track holds an entry per test file per verified RED, read by the
 * push's classification, the dispatch, its request and the state's projection alike: once is enough.
 */
const indexOf = new WeakMap<TrackContext["frozenTests"], FrozenTestIndex>();

function frozenTestIndex(context: TrackContext): FrozenTestIndex {
  const known = indexOf.get(context.frozenTests);
  if (known) return known;
  const effective: Record<string, FrozenTestFile> = {};
  const latest = new Map<string, number>();
  let first: FrozenTestFile | undefined;
  let lowest = Infinity;
  // By key: Object.values of a record this large (V8 keeps it as a hash table) takes twice as long.
  const record = context.frozenTests;
  for (const key of Object.keys(record)) {
    const entry = record[key]!;
    const number = testNumber(entry.test);
    const current = latest.get(entry.file);
    if (current === undefined || number > current) {
      effective[entry.file] = entry;
      latest.set(entry.file, number);
    }
    if (first === undefined || number < lowest) {
      first = entry;
      lowest = number;
    }
  }
  const index = { effective: Object.freeze(effective), first };
  indexOf.set(context.frozenTests, index);
  return index;
}

/** The entry of the earliest test whose verified RED froze anything (what the base's test files are frozen by). */
export function firstFrozenTest(context: TrackContext): FrozenTestFile | undefined {
  return frozenTestIndex(context).first;
}

/** The frozen text of each test file: the one frozen by the latest verified RED touching it. */
export function effectiveFrozenTests(context: TrackContext): Readonly<Record<string, FrozenTestFile>> {
  return frozenTestIndex(context).effective;
}

/**
 * The text a frozen test entry froze. A restored snapshot holds every entry's text (its schema
 * checks it); one that does not cannot be decided on, so this throws rather than guess.
 */
export function frozenTextOf(context: TrackContext, entry: FrozenTestFile): string {
  const text = storedText(context.frozenTexts, entry.hash);
  if (text === undefined)
    throw new Error(`the frozen text of ${entry.file} (frozen by ${entry.test}) is missing from the track's snapshot`);
  return text;
}

type FrozenTexts = TrackContext["frozenTexts"];

/** The text stored under `hash`, a prefix reference followed; undefined when it is not held. */
function storedText(texts: FrozenTexts, hash: string): string | undefined {
  const stored = Object.hasOwn(texts, hash) ? texts[hash] : undefined;
  if (stored === undefined || typeof stored === "string") return stored;
  const base = Object.hasOwn(texts, stored.of) ? texts[stored.of] : undefined;
  return typeof base === "string" && stored.length <= base.length ? base.slice(0, stored.length) : undefined;
}

/**
 * Add `text`, hashed `hash`, to `texts` (changed in place: a copy the caller owns). `previous`
 * names the text the file had frozen before: when the new one starts with it (a RED appends to a
 * frozen file), the previous text, and every text stored as a prefix of it, becomes a prefix of
 * the new one, so a file's texts are held once however many REDs froze it.
 */
export function addFrozenText(texts: FrozenTexts, hash: string, text: string, previous?: string): void {
  if (Object.hasOwn(texts, hash)) return;
  texts[hash] = text;
  if (previous === undefined || previous === hash || !Object.hasOwn(texts, previous)) return;
  const before = texts[previous];
  if (typeof before !== "string" || !text.startsWith(before)) return;
  texts[previous] = { of: hash, length: before.length };
  for (const key of Object.keys(texts)) {
    const stored = texts[key]!;
    if (typeof stored !== "string" && stored.of === previous) texts[key] = { of: hash, length: stored.length };
  }
}

/** Frozen files as commit classification needs them. Gate files stay frozen from the moment the gate opens. */
export function frozenState(context: TrackContext): FrozenState {
  const gated: FrozenState["gated"] = {};
  for (const gate of FILE_GATES) {
    const record = context.gates[gate];
    if (record.status === "closed") continue;
    for (const [path, hash] of Object.entries(record.files)) gated[path] = { hash, gate };
  }
  const tests: Record<string, string> = {};
  for (const [path, entry] of Object.entries(effectiveFrozenTests(context))) tests[path] = frozenTextOf(context, entry);
  const runnerConfig = context.gates["test-list"].status !== "closed";
  const { first } = frozenTestIndex(context);
  if (!first) return { gated, tests, runnerConfig };
  return { gated, tests, runnerConfig, baseTests: { by: first.test, known: Object.keys(context.testFiles) } };
}

/** path → sha256 of every frozen file, for the cycle to re-check on the runner. */
function frozenHashes(context: TrackContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const gate of FILE_GATES) {
    if (context.gates[gate].status !== "closed") Object.assign(out, context.gates[gate].files);
  }
  for (const [path, entry] of Object.entries(effectiveFrozenTests(context))) out[path] = entry.hash;
  return out;
}

/** The files a gate freezes, hashed, from the accepted artifacts. */
function gateFiles(context: TrackContext, gate: FileGate): Record<string, string> {
  const paths = gate === "design" ? DESIGN_GATE_FILES : [ARTIFACT_PATHS.testList];
  const files: Record<string, string> = {};
  for (const path of paths) {
    const text = context.artifacts[path];
    if (text !== undefined) files[path] = hashFrozenText(text);
  }
  return files;
}

/** Open a gate at a manifest: pending (or still `withdrawn`, which says it was approved before). */
export function openGate(
  context: TrackContext,
  gate: GateName,
  manifest: { files: Record<string, string>; hash: string },
): TrackContext {
  const record = context.gates[gate];
  return {
    ...context,
    gates: {
      ...context.gates,
      [gate]: {
        ...record,
        status: record.status === "withdrawn" ? "withdrawn" : "pending",
        files: manifest.files,
        pendingHash: manifest.hash,
      },
    },
  };
}

export function designManifest(context: TrackContext): { files: Record<string, string>; hash: string } {
  const files = gateFiles(context, "design");
  return { files, hash: manifestHashFromHashes(files) };
}

export function testListManifest(context: TrackContext): { files: Record<string, string>; hash: string } {
  const files = gateFiles(context, "test-list");
  return { files, hash: manifestHashFromHashes(files) };
}

/** The promote gate approves this head with this deploy evidence: one hash over both. */
export function promoteManifest(context: TrackContext): { files: Record<string, string>; hash: string } {
  const files = { head: hashFrozenText(context.head), "deploy-evidence": context.deployEvidence?.hash ?? "none" };
  return { files, hash: manifestHashFromHashes(files) };
}

/**
 * Withdraw `gate` and cascade down the lane: design → test list → build evidence (the deploy
 * evidence and the deploy and promote gates, which are redone after any build change).
 * `withdraw`: an approved gate needs approving again at its manifest. `reopen`: the owners redo the
 * work, so the gate and the design gates below it close and their files are no longer frozen.
 */
export function withdrawFrom(
  context: TrackContext,
  gate: GateName,
  reason: string,
  mode: "withdraw" | "reopen",
): TrackContext {
  const gates = { ...context.gates };
  const from = GATE_NAMES.indexOf(gate);
  GATE_NAMES.forEach((name, index) => {
    if (index < from) return;
    const record = gates[name];
    const why =
      index === from ? reason : `the ${gate} gate was ${mode === "reopen" ? "reopened" : "withdrawn"} (${reason})`;
    if (name === "deploy" || name === "promote" || mode === "reopen") {
      // Closed is not reached: no manifest, and no approved hash for the evidence or an agent to read
      // as approved when the gate opens again (its approvals stay, as history).
      if (record.status !== "closed")
        gates[name] = {
          ...record,
          status: "closed",
          files: {},
          pendingHash: null,
          approvedHash: null,
          withdrawnReason: why,
        };
    } else if (record.status === "approved") {
      gates[name] = { ...record, status: "withdrawn", withdrawnReason: why };
    }
  });
  const deployEvidence = from < GATE_NAMES.indexOf("deploy") ? null : context.deployEvidence;
  return { ...context, gates, deployEvidence, pendingDispatch: null };
}

/**
 * After the test list is (re-)approved: keep the evidence of units whose tests are unchanged, in
 * order, from the start; the first changed unit and everything after it start again. Frozen test
 * texts go with the evidence they belong to.
 */
export function resumeBuild(context: TrackContext): TrackContext {
  const tests = testListOf(context) ?? [];
  const units = buildUnits(tests, context.settings.granularity);
  const evidence: Record<string, UnitEvidence> = {};
  let unitIndex = 0;
  for (const unit of units) {
    const previous = context.evidence[unit.id];
    if (!previous || JSON.stringify(previous.tests) !== JSON.stringify(unit.tests)) break;
    if (previous.complete) {
      evidence[unit.id] = previous;
      unitIndex++;
      continue;
    }
    // The unit in turn keeps a verified RED, nothing after it.
    if (previous.red) evidence[unit.id] = { ...previous, green: null, review: null, refactor: null, complete: false };
    break;
  }
  const keptTests = new Set(
    Object.values(evidence)
      .filter((e) => e.red)
      .flatMap((e) => e.tests.map((t) => t.id)),
  );
  // By the test whose RED froze them: a helper's entry is keyed by its path as well (see recordRed).
  const frozenTests = Object.fromEntries(
    Object.entries(context.frozenTests).filter(([, entry]) => keptTests.has(entry.test)),
  );
  // The texts of the entries kept (and the texts they are prefixes of), and no other.
  const frozenTexts: FrozenTexts = {};
  for (const entry of Object.values(frozenTests)) {
    const stored = context.frozenTexts[entry.hash]!;
    frozenTexts[entry.hash] = stored;
    if (typeof stored !== "string") frozenTexts[stored.of] = context.frozenTexts[stored.of]!;
  }
  return { ...context, units, unitIndex, evidence, frozenTests, frozenTexts, attempts: 0, blocked: null };
}

/** Start a cycle: a deterministic dispatch id and the pending record. */
export function startDispatch(context: TrackContext, step: CycleStep | "promote", at: string): TrackContext {
  const sequence = context.sequence + 1;
  const dispatchId = `${context.trackId}#${sequence}`;
  const unit = step === "release" || step === "promote" ? step : (currentUnit(context)?.id ?? "none");
  const commit = step === "promote" ? (context.mergedCommit ?? context.head) : context.head;
  return {
    ...context,
    sequence,
    pendingDispatch: { dispatchId, step, commit, unit },
    cycles: [
      ...context.cycles,
      {
        dispatchId,
        step,
        unit,
        commit,
        dispatchedAt: at,
        runId: null,
        outcome: null,
        reasons: [],
        reportedAt: null,
        evidence: null,
      },
    ],
  };
}

/** The dispatch effect for the pending cycle. */
export function cycleEffect(context: TrackContext): DispatchCycleEffect {
  const pending = context.pendingDispatch;
  if (!pending || pending.step === "promote")
    throw new Error("no cycle is pending: a cycle is dispatched on entering a verify or release stage");
  const unit = currentUnit(context);
  const release = pending.step === "release";
  return {
    type: "dispatchCycle",
    dispatchId: pending.dispatchId,
    step: pending.step,
    commit: pending.commit,
    unit: pending.unit,
    tests: release ? testsOf(context.units) : (unit?.tests ?? []),
    greenTests: release ? [] : greenTests(context),
    frozen: frozenHashes(context),
    databaseBranch: context.databaseBranch,
  };
}

/** The evidence record of `unit` (the unit in turn), created empty on first use. */
function unitEvidence(context: TrackContext, unit: BuildUnit): UnitEvidence {
  return (
    context.evidence[unit.id] ?? {
      tests: unit.tests,
      red: null,
      green: null,
      review: null,
      refactor: null,
      complete: false,
    }
  );
}

export function withUnitEvidence(
  context: TrackContext,
  change: (evidence: UnitEvidence) => UnitEvidence,
): TrackContext {
  const unit = currentUnit(context);
  if (!unit) return context;
  return { ...context, evidence: { ...context.evidence, [unit.id]: change(unitEvidence(context, unit)) } };
}

/** Add logins to a gate's author list (no duplicates, stable order). */
export function addAuthors(context: TrackContext, gates: GateName[], logins: string[]): TrackContext {
  if (logins.length === 0) return context;
  const next = { ...context.gates };
  for (const gate of gates) {
    const authors = [...next[gate].authors];
    for (const login of logins) if (!authors.includes(login)) authors.push(login);
    next[gate] = { ...next[gate], authors };
  }
  return { ...context, gates: next };
}

/**
 * The manifest hash of `gate` at a commit, for tying a review to what it approves: for the design
 * and test-list gates, the hash over the texts (at that commit) of the files the gate froze; for
 * the deploy and promote gates, which approve the track's verified head, the pending hash when the
 * review is on that head. `undefined` when it cannot be computed (fail closed: the review does not count).
 * The one rule for it: src/engine/approvals.ts reads the texts at each reviewed commit and asks this.
 */
export function gateManifestAt(
  context: TrackContext,
  gate: GateName,
  commit: string,
  texts: Record<string, string | undefined> = {},
): string | undefined {
  const record = context.gates[gate];
  if (gate === "deploy" || gate === "promote")
    return commit === context.head ? (record.pendingHash ?? undefined) : undefined;
  const paths = Object.keys(record.files);
  if (paths.length === 0) return undefined;
  const hashes: Record<string, string> = {};
  for (const path of paths) {
    const text = texts[path];
    if (text === undefined) return undefined;
    hashes[path] = hashFrozenText(text);
  }
  return manifestHashFromHashes(hashes);
}
