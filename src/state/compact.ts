import { createHash } from "node:crypto";
import { z } from "zod";
import { reviewPath } from "../artifacts/paths.js";
import { gitBlobId } from "../gates/hash.js";
import { buildUnits, effectiveFrozenTests, firstFrozenTest, testListOf } from "../orchestrator/index.js";
import type { TrackContext, TrackSnapshot } from "../orchestrator/index.js";
import { canonicalJson } from "./seal.js";
import { TamperedStateError } from "./errors.js";
import { CycleRecord, TrackId, trackPath, type TrackState } from "./schema.js";

/**
 * The state file holds what the next decision needs, bounded whatever the track's length (issue
 * #34). Its snapshot is stored compact: every text git already holds (the accepted artifacts and
 * test files, the frozen test texts) by its blob id, the build units and each unit's test list as
 * "those of the approved test list", and what a finished unit leaves behind (its cycles, its frozen
 * test entries, its review) in an append-only record, `tracks/<id>/units/<n>.json`, written once in
 * the same commit as the state and named in the sealed state by its sha256, read only when asked
 * for (the board, the evidence JSON, status) or when the decision needs it (approving the test list
 * again resumes the build from every unit's evidence). A file without `stored` is the full form
 * every earlier version wrote: it opens as it is, and the next write compacts it.
 */

const BlobId = z.string().regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/, "a git blob id");
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 hex digest");

/** A finished unit's record: what the state no longer holds of it. */
export const UnitRecord = z
  .object({
    trackId: TrackId,
    unit: z.string().min(1),
    n: z.number().int().positive(),
    /** What the unit proved (its evidence in the snapshot), null when it has none. */
    evidence: z.unknown(),
    /** The snapshot's cycles of the unit (checked by the orchestrator when restored). */
    cycles: z.array(z.unknown()),
    /** The state's own record of those cycles (run ids, request hashes). */
    ledger: z.array(CycleRecord),
    /** The frozen test entries the unit's verified REDs made, by key. */
    frozenTests: z.record(z.string(), z.unknown()),
    /** frozen text hash → blob id, for those entries. */
    frozenTexts: z.record(z.string(), BlobId),
    /** path → blob id of the unit's review. */
    reviews: z.record(z.string(), BlobId),
    /** blob id → commit, as in the state. */
    commits: z.record(BlobId, z.string()),
  })
  .strict();
export type UnitRecord = z.infer<typeof UnitRecord>;

/** What the compact snapshot left out and where it is: inside the snapshot, so a snapshot not expanded fails its schema. */
export const StoredForm = z
  .object({
    version: z.literal(1),
    /** path → blob id of each accepted `.consort/**` text (the snapshot's `artifacts`). */
    artifacts: z.record(z.string(), BlobId),
    /** path → blob id of each accepted test file text (the snapshot's `testFiles`). */
    testFiles: z.record(z.string(), BlobId),
    /** frozen text hash → blob id of each frozen text held whole (prefixes stay in the snapshot). */
    frozenTexts: z.record(z.string(), BlobId),
    /** blob id → the track's accepted commit where the store first found it. */
    commits: z.record(BlobId, z.string()),
    /** The units are those of the test list in `artifacts`, at the snapshot's granularity. */
    unitsFromTestList: z.boolean(),
    /** Units whose evidence is for exactly the unit's tests (left out of the evidence). */
    evidenceTests: z.array(z.string()),
    /**
     * unit id → its finished record, whose canonical text hashes to `sha256`: in `pending` of this
     * file; else, with `heldIn`, in `pending` of the earlier version of this file that is that git
     * blob; else the file `tracks/<id>/units/<n>.json` (as written before records were held inline).
     */
    records: z.record(
      z.string(),
      z.object({ n: z.number().int().positive(), sha256: Sha256, heldIn: BlobId.optional() }).strict(),
    ),
    /** How many records the track has written: the next is `recordCount + 1`. */
    recordCount: z.number().int().min(0),
    /**
     * The records of the units this version finished, inline: the step that ends a unit writes one
     * file (one Contents API PUT), and the next version names this one's blob instead (`heldIn`).
     */
    pending: z.record(z.string(), UnitRecord).optional(),
  })
  .strict();
export type StoredForm = z.infer<typeof StoredForm>;

/**
 * The largest record a version holds inline: the one unit a step ends. Records of several units at
 * once (a file written in full before records, compacted on its first write) are written as files.
 */
const INLINE_RECORD_BYTES = 32 * 1024;

/** The path of a track's nth finished-unit record on the state branch. */
export function unitRecordPath(trackId: string, n: number): string {
  return `tracks/${TrackId.parse(trackId)}/units/${n}.json`;
}

const serialiseRecord = (record: UnitRecord): string =>
  `${JSON.stringify(JSON.parse(canonicalJson(record)), null, 2)}\n`;
const recordHash = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

/** Texts by blob id: every text the store compacted or fetched (a blob id names its content, so any repository's is the same). */
export type TextsByBlob = Map<string, string>;

type Snapshot = TrackSnapshot & { stored?: StoredForm };

/** Whether a stored snapshot is a track snapshot this module knows how to compact (a foreign or older shape passes through). */
function isTrackSnapshot(value: unknown): value is Snapshot {
  if (value === null || typeof value !== "object") return false;
  const { schemaVersion, context } = value as { schemaVersion?: unknown; context?: Record<string, unknown> };
  return (
    schemaVersion === 2 &&
    context !== undefined &&
    typeof context.artifacts === "object" &&
    typeof context.testFiles === "object" &&
    typeof context.frozenTexts === "object" &&
    typeof context.frozenTests === "object" &&
    typeof context.evidence === "object" &&
    Array.isArray(context.units) &&
    Array.isArray(context.cycles)
  );
}

/** The compact form of a state's snapshot, if it has one. */
export function storedFormOf(state: TrackState): StoredForm | undefined {
  const snapshot = state.snapshot as { stored?: unknown } | null;
  if (snapshot === null || typeof snapshot !== "object" || snapshot.stored === undefined) return undefined;
  return StoredForm.parse(snapshot.stored);
}

/** Every blob id a compact state refers to: what `expand` needs in `texts`. */
function blobsOf(stored: StoredForm): string[] {
  return [
    ...new Set([
      ...Object.values(stored.artifacts),
      ...Object.values(stored.testFiles),
      ...Object.values(stored.frozenTexts),
    ]),
  ];
}

class MissingTextError extends Error {
  constructor(readonly blob: string) {
    super(`the text of blob ${blob} is not at hand`);
    this.name = "MissingTextError";
  }
}

function textOf(texts: TextsByBlob, blob: string): string {
  const text = texts.get(blob);
  if (text === undefined) throw new MissingTextError(blob);
  return text;
}

/**
 * The state as the app works with it: the snapshot's texts, units and evidence tests put back from
 * `texts` (which must hold every blob of `blobsOf`). The finished units' records are merged in by
 * `withRecords`. Returns the state and its stored form (undefined for a file written in full).
 */
export function expand(state: TrackState, texts: TextsByBlob): { state: TrackState; stored?: StoredForm } {
  const stored = storedFormOf(state);
  if (!stored) return { state };
  const { stored: _stored, ...snapshot } = state.snapshot as Snapshot;
  const context = snapshot.context;
  const artifacts: Record<string, string> = {};
  for (const [path, blob] of Object.entries(stored.artifacts)) artifacts[path] = textOf(texts, blob);
  const testFiles: Record<string, string> = {};
  for (const [path, blob] of Object.entries(stored.testFiles)) testFiles[path] = textOf(texts, blob);
  const frozenTexts: TrackContext["frozenTexts"] = { ...context.frozenTexts };
  for (const [hash, blob] of Object.entries(stored.frozenTexts)) frozenTexts[hash] = textOf(texts, blob);
  let next: TrackContext = { ...context, artifacts, testFiles, frozenTexts };
  if (stored.unitsFromTestList) next = { ...next, units: unitsOfList(next) };
  if (stored.evidenceTests.length > 0) {
    const evidence = { ...next.evidence };
    const unitTests = new Map(next.units.map((unit) => [unit.id, unit.tests]));
    for (const id of stored.evidenceTests) {
      const tests = unitTests.get(id);
      if (evidence[id] && tests) evidence[id] = { ...evidence[id], tests };
    }
    next = { ...next, evidence };
  }
  return { state: { ...state, snapshot: { ...snapshot, context: next } }, stored };
}

const dispatchNumber = (dispatchId: string) => Number(dispatchId.slice(dispatchId.lastIndexOf("#") + 1)) || 0;
const byDispatch = <T extends { dispatchId: string }>(a: T, b: T) =>
  dispatchNumber(a.dispatchId) - dispatchNumber(b.dispatchId);

/**
 * Merge finished units' records (each already checked against its hash) into an expanded state:
 * their cycles, frozen entries and texts, and reviews, wherever the state does not hold them.
 */
export function withRecords(state: TrackState, records: readonly UnitRecord[], texts: TextsByBlob): TrackState {
  if (records.length === 0 || !isTrackSnapshot(state.snapshot)) return state;
  const snapshot = state.snapshot;
  const context = snapshot.context;
  const cycles = [...context.cycles];
  const ledger = [...state.cycles];
  const known = new Set(cycles.map((c) => c.dispatchId));
  const inLedger = new Set(ledger.map((c) => c.dispatchId));
  const frozenTests = { ...context.frozenTests };
  const frozenTexts = { ...context.frozenTexts };
  const artifacts = { ...context.artifacts };
  const evidence = { ...context.evidence };
  for (const record of records) {
    if (record.evidence !== null && !Object.hasOwn(evidence, record.unit))
      evidence[record.unit] = record.evidence as TrackContext["evidence"][string];
    for (const cycle of record.cycles as TrackContext["cycles"]) {
      if (known.has(cycle.dispatchId)) continue;
      cycles.push(cycle);
      known.add(cycle.dispatchId);
    }
    for (const entry of record.ledger) {
      if (inLedger.has(entry.dispatchId)) continue;
      ledger.push(entry);
      inLedger.add(entry.dispatchId);
    }
    for (const [key, entry] of Object.entries(record.frozenTests))
      if (!Object.hasOwn(frozenTests, key)) frozenTests[key] = entry as TrackContext["frozenTests"][string];
    for (const [hash, blob] of Object.entries(record.frozenTexts))
      if (!Object.hasOwn(frozenTexts, hash)) frozenTexts[hash] = textOf(texts, blob);
    for (const [path, blob] of Object.entries(record.reviews))
      if (!Object.hasOwn(artifacts, path)) artifacts[path] = textOf(texts, blob);
  }
  cycles.sort(byDispatch);
  ledger.sort(byDispatch);
  return {
    ...state,
    cycles: ledger,
    snapshot: { ...snapshot, context: { ...context, cycles, frozenTests, frozenTexts, artifacts, evidence } },
  };
}

/** Every blob id the records refer to: what `withRecords` needs in `texts`. */
function recordBlobs(records: readonly UnitRecord[]): string[] {
  return [...new Set(records.flatMap((r) => [...Object.values(r.frozenTexts), ...Object.values(r.reviews)]))];
}

/** What the state holds of one unit that its record can hold instead. */
interface UnitPart {
  evidence: TrackContext["evidence"][string] | null;
  cycles: TrackContext["cycles"];
  ledger: CycleRecord[];
  frozenTests: TrackContext["frozenTests"];
  review: { path: string; text: string } | undefined;
}

function partOf(context: TrackContext, ledger: readonly CycleRecord[], unit: string, tests: Set<string>): UnitPart {
  const cycles = context.cycles.filter((c) => c.unit === unit);
  const ids = new Set(cycles.map((c) => c.dispatchId));
  const frozenTests: TrackContext["frozenTests"] = {};
  for (const [key, entry] of Object.entries(context.frozenTests)) if (tests.has(entry.test)) frozenTests[key] = entry;
  const path = reviewPath(unit);
  const text = context.artifacts[path];
  return {
    evidence: context.evidence[unit] ?? null,
    cycles,
    ledger: ledger.filter((c) => ids.has(c.dispatchId)),
    frozenTests,
    review: text === undefined ? undefined : { path, text },
  };
}

const isEmpty = (part: UnitPart) =>
  part.evidence === null &&
  part.cycles.length === 0 &&
  Object.keys(part.frozenTests).length === 0 &&
  part.review === undefined;

/** The text of a frozen entry's hash: held whole, or as the prefix of another. */
function frozenText(texts: TrackContext["frozenTexts"], hash: string): string | undefined {
  const stored = Object.hasOwn(texts, hash) ? texts[hash] : undefined;
  if (stored === undefined || typeof stored === "string") return stored;
  const base = Object.hasOwn(texts, stored.of) ? texts[stored.of] : undefined;
  return typeof base === "string" ? base.slice(0, stored.length) : undefined;
}

/** What `compact` is told of the version it replaces. */
export interface CompactBasis {
  /** The stored form of the version read (undefined for a new track or a file written in full). */
  stored: StoredForm | undefined;
  /** The records merged into the state read, by unit: present exactly when the state was read with its history. */
  loaded: ReadonlyMap<string, UnitRecord> | undefined;
  /**
   * The git blob id of the version read, as stored: the records it holds inline (`pending`) are
   * then named by it. Unknown, they stay inline (nothing is lost, the next write names them).
   */
  blob?: string | undefined;
}

export interface Compacted {
  state: TrackState;
  /** Records to write with the state, in the same commit (path → text): only when too many finished at once to hold inline. */
  records: Array<{ path: string; text: string }>;
  /** Every text the compact state and its new records refer to, by blob id (for the store's cache). */
  texts: TextsByBlob;
}

/**
 * The compact form of a state the app produced from an expanded one: the inverse of `expand` and
 * `withRecords`. A unit before the one in turn is finished: what the state holds of it goes into
 * a new record, unless the record it already has holds exactly that (or, read without history, the
 * state holds nothing more of it). A unit that has a record but is no longer finished (the test
 * list was approved again) keeps its data in the state, and its record is no longer named.
 */
export function compact(state: TrackState, basis: CompactBasis, commitFor: string): Compacted {
  const texts: TextsByBlob = new Map();
  if (!isTrackSnapshot(state.snapshot)) return { state, records: [], texts };
  const { stored: _old, ...snapshot } = state.snapshot;
  const context = snapshot.context;
  const previous = basis.stored;
  const knownCommits = new Map(Object.entries(previous?.commits ?? {}));
  for (const record of basis.loaded?.values() ?? [])
    for (const [blob, commit] of Object.entries(record.commits))
      if (!knownCommits.has(blob)) knownCommits.set(blob, commit);
  const refIn = (commits: Record<string, string>) => (text: string) => {
    const blob = blobIdOf(text);
    texts.set(blob, text);
    commits[blob] = knownCommits.get(blob) ?? commitFor;
    return blob;
  };
  // The state holds every unit's data when it was read with its history, or was never compact.
  const whole = basis.loaded !== undefined || previous === undefined;
  const finished = context.units.slice(0, context.unitIndex);
  const records: StoredForm["records"] = {};
  const made: Array<{ record: UnitRecord; text: string }> = [];
  const moved = new Set<string>();
  let recordCount = previous?.recordCount ?? 0;
  for (const unit of finished) {
    const existing = previous?.records[unit.id];
    // Read without its history, the state holds nothing more of a unit with a record than the record does.
    if (existing && !whole) {
      records[unit.id] = existing;
      moved.add(unit.id);
      continue;
    }
    const part = partOf(context, state.cycles, unit.id, new Set(unit.tests.map((t) => t.id)));
    const loaded = basis.loaded?.get(unit.id);
    if (existing && loaded && samePart(loaded, part)) {
      records[unit.id] = existing;
      moved.add(unit.id);
      continue;
    }
    if (isEmpty(part)) continue;
    const n = ++recordCount;
    const commits: Record<string, string> = {};
    const ref = refIn(commits);
    const frozenTexts: Record<string, string> = {};
    for (const entry of Object.values(part.frozenTests)) {
      const text = frozenText(context.frozenTexts, entry.hash);
      if (text === undefined) throw new MissingTextError(entry.hash);
      frozenTexts[entry.hash] = ref(text);
    }
    const record: UnitRecord = {
      trackId: state.trackId,
      unit: unit.id,
      n,
      evidence: part.evidence,
      cycles: part.cycles,
      ledger: part.ledger,
      frozenTests: part.frozenTests,
      frozenTexts,
      reviews: part.review ? { [part.review.path]: ref(part.review.text) } : {},
      commits,
    };
    const text = serialiseRecord(record);
    made.push({ record, text });
    records[unit.id] = { n, sha256: recordHash(text) };
    moved.add(unit.id);
  }
  // Read without its history, a state does not hold what its records do: they stay named.
  if (previous && !whole)
    for (const [id, record] of Object.entries(previous.records)) if (!records[id]) records[id] = record;
  const { pending, written } = placeRecords(state.trackId, made, records, previous, basis.blob);

  const unitOf = unitOfTest(context.units);
  const isMoved = (test: string) => {
    const index = unitOf.get(test);
    return index !== undefined && index < context.unitIndex && moved.has(context.units[index]!.id);
  };
  const keep = new Set<string>([
    ...Object.values(effectiveFrozenTests(context)).map((e) => e.test + "\u0000" + e.file),
    ...(firstFrozenTest(context) ? [firstFrozenTest(context)!.test + "\u0000" + firstFrozenTest(context)!.file] : []),
  ]);
  const frozenTests: TrackContext["frozenTests"] = {};
  for (const [key, entry] of Object.entries(context.frozenTests))
    if (!isMoved(entry.test) || keep.has(entry.test + "\u0000" + entry.file)) frozenTests[key] = entry;
  const commits: Record<string, string> = {};
  const ref = refIn(commits);
  const heldTexts: TrackContext["frozenTexts"] = {};
  const storedTexts: Record<string, string> = {};
  const hold = (hash: string) => {
    const text = context.frozenTexts[hash];
    if (text === undefined) throw new MissingTextError(hash);
    if (typeof text === "string") storedTexts[hash] = ref(text);
    else {
      heldTexts[hash] = text;
      const base = context.frozenTexts[text.of];
      if (typeof base !== "string") throw new MissingTextError(text.of);
      storedTexts[text.of] = ref(base);
    }
  };
  for (const entry of Object.values(frozenTests)) hold(entry.hash);

  const movedReviews = new Set([...moved].map(reviewPath));
  const artifacts: Record<string, string> = {};
  for (const [path, text] of Object.entries(context.artifacts))
    if (!movedReviews.has(path)) artifacts[path] = ref(text);
  const testFiles: Record<string, string> = {};
  for (const [path, text] of Object.entries(context.testFiles)) testFiles[path] = ref(text);

  const movedCycles = new Set(context.cycles.filter((c) => moved.has(c.unit)).map((c) => c.dispatchId));
  const unitsFromTestList = context.units.length > 0 && sameJson(unitsOfList(context), context.units);
  const unitTests = new Map(context.units.map((u) => [u.id, u.tests]));
  const evidence: TrackContext["evidence"] = {};
  const evidenceTests: string[] = [];
  for (const [id, entry] of Object.entries(context.evidence)) {
    if (moved.has(id)) continue;
    if (unitTests.has(id) && sameJson(unitTests.get(id), entry.tests)) {
      evidence[id] = { ...entry, tests: [] };
      evidenceTests.push(id);
    } else evidence[id] = entry;
  }
  const stored: StoredForm = {
    version: 1,
    artifacts,
    testFiles,
    frozenTexts: storedTexts,
    commits,
    unitsFromTestList,
    evidenceTests,
    records,
    recordCount,
    ...(pending ? { pending } : {}),
  };
  const slim: TrackContext = {
    ...context,
    artifacts: {},
    testFiles: {},
    frozenTests,
    frozenTexts: heldTexts,
    units: unitsFromTestList ? [] : context.units,
    evidence,
    cycles: context.cycles.filter((c) => !movedCycles.has(c.dispatchId)),
  };
  return {
    state: {
      ...state,
      cycles: state.cycles.filter((c) => !movedCycles.has(c.dispatchId)),
      snapshot: { ...snapshot, context: slim, stored },
    },
    records: written,
    texts,
  };
}

/**
 * Where the records go: the new ones inline in this version (`pending`), unless too large, then as
 * files in the same commit; the ones the version read held inline are named by its blob, or, that
 * unknown, held inline again. Every record is in the commit that names it, so no crash between two
 * writes loses one.
 */
function placeRecords(
  trackId: string,
  made: ReadonlyArray<{ record: UnitRecord; text: string }>,
  records: StoredForm["records"],
  previous: StoredForm | undefined,
  blob: string | undefined,
): { pending: Record<string, UnitRecord> | undefined; written: Compacted["records"] } {
  const pending: Record<string, UnitRecord> = {};
  let written: Compacted["records"] = [];
  // One unit ends per step; more at once is a file written before records, compacted on its first write.
  if (made.length === 1 && Buffer.byteLength(made[0]!.text) <= INLINE_RECORD_BYTES)
    for (const { record } of made) pending[record.unit] = record;
  else written = made.map(({ record, text }) => ({ path: unitRecordPath(trackId, record.n), text }));
  for (const [unit, named] of Object.entries(records)) {
    const held = previous?.pending?.[unit];
    // Only the very record the version read named: a unit finished again has a record of its own.
    if (named.heldIn !== undefined || held === undefined || previous?.records[unit] !== named) continue;
    if (blob !== undefined) records[unit] = { ...named, heldIn: blob };
    else pending[unit] = held;
  }
  return { pending: Object.keys(pending).length > 0 ? pending : undefined, written };
}

/** Whether a loaded record holds exactly what the state holds of its unit. */
function samePart(record: UnitRecord, part: UnitPart): boolean {
  const review = part.review ? { [part.review.path]: blobIdOf(part.review.text) } : {};
  return (
    canonicalJson([record.evidence, record.cycles, record.ledger, record.frozenTests, record.reviews]) ===
    canonicalJson([part.evidence, part.cycles, part.ledger, part.frozenTests, review])
  );
}

/** Git blob ids of texts compacted before: the same text object comes back on every write. */
const blobIds = new Map<string, string>();
function blobIdOf(text: string): string {
  let blob = blobIds.get(text);
  if (blob === undefined) {
    blob = gitBlobId(text);
    if (blobIds.size >= 2048) blobIds.clear();
    blobIds.set(text, blob);
  }
  return blob;
}

/** How many referenced texts a process keeps (a test file or an artifact each: a few KB). */
const TEXTS_KEPT = 4096;
/**
 * Texts compact states refer to, by git blob id, for every reader of the process: a blob id names
 * its content, so a text kept is the text whoever asks (texts compacted or read are kept).
 */
export const keptTexts: TextsByBlob = new Map();
export function keepText(blob: string, text: string): void {
  keptTexts.delete(blob);
  keptTexts.set(blob, text);
  if (keptTexts.size > TEXTS_KEPT) keptTexts.delete(keptTexts.keys().next().value!);
}

/** Where a reader finds what a compact state refers to: texts by blob id, and record files by path (at the state's commit). */
export interface StoredSource {
  texts(blobs: readonly string[]): Promise<TextsByBlob>;
  /** The texts of record files, all asked at once (undefined where there is none). */
  records(paths: readonly string[]): Promise<ReadonlyMap<string, string | undefined>>;
  /** The state branch commit read, for the refusal. */
  commit?: string | undefined;
}

/** Texts from this process's kept texts, else from `read` (checked against its blob id and kept). */
export async function textsFrom(
  blobs: readonly string[],
  read: (blob: string) => Promise<string | undefined>,
): Promise<TextsByBlob> {
  const out: TextsByBlob = new Map();
  for (const blob of blobs) {
    let text = keptTexts.get(blob);
    if (text === undefined) {
      text = await read(blob);
      if (text === undefined || gitBlobId(text) !== blob) continue;
      keepText(blob, text);
    }
    out.set(blob, text);
  }
  return out;
}

/**
 * A stored state as the app works with it: its texts put back and, with `history`, its finished
 * units' records (each checked against the hash the sealed state names) merged in; `basis` is what
 * the next write compacts against. Fails closed (TamperedStateError) on a record that is missing,
 * altered or malformed, and on a text none of the references yield.
 */
export async function expandStored(
  trackId: string,
  stored: TrackState,
  history: boolean,
  source: StoredSource,
): Promise<{ state: TrackState; basis: CompactBasis }> {
  const path = trackPath(trackId);
  const refuse = (problem: string, at = path) => new TamperedStateError(trackId, at, [problem], source.commit);
  let form: StoredForm | undefined;
  try {
    form = storedFormOf(stored);
  } catch {
    throw refuse("its snapshot's stored form is malformed");
  }
  if (!form) return { state: stored, basis: { stored: undefined, loaded: undefined } };
  try {
    const { state } = expand(stored, await source.texts(blobsOf(form)));
    if (!history) return { state, basis: { stored: form, loaded: undefined } };
    const loaded = await readRecords(trackId, form, source, refuse);
    const records = [...loaded.values()].sort((a, b) => a.n - b.n);
    const merged = withRecords(state, records, await source.texts(recordBlobs(records)));
    return { state: merged, basis: { stored: form, loaded } };
  } catch (error) {
    if (error instanceof MissingTextError)
      throw refuse(`it refers to a text by blob ${error.blob.slice(0, 12)} that cannot be read from the repository`);
    throw error;
  }
}

/**
 * Every finished unit's record a compact state names, each checked against the sha256 the sealed
 * state names: held inline in this version, in an earlier version's blob, or in a record file (the
 * files asked for at once, the blobs too).
 */
async function readRecords(
  trackId: string,
  form: StoredForm,
  source: StoredSource,
  refuse: (problem: string, at?: string) => TamperedStateError,
): Promise<Map<string, UnitRecord>> {
  const named = Object.entries(form.records);
  const paths = named
    .filter(([unit, r]) => !r.heldIn && !form.pending?.[unit])
    .map(([, r]) => unitRecordPath(trackId, r.n));
  const blobs = [...new Set(named.flatMap(([, r]) => (r.heldIn ? [r.heldIn] : [])))];
  const [files, versions] = await Promise.all([
    paths.length > 0 ? source.records(paths) : new Map<string, string | undefined>(),
    blobs.length > 0 ? source.texts(blobs) : new Map<string, string>(),
  ]);
  const heldBy = new Map<string, unknown>();
  const loaded = new Map<string, UnitRecord>();
  for (const [unit, ref] of named) {
    let at = unitRecordPath(trackId, ref.n);
    let text: string | undefined;
    const inline = form.pending?.[unit];
    if (inline) text = serialiseRecord(inline);
    else if (ref.heldIn) {
      at = `${trackPath(trackId)} as blob ${ref.heldIn.slice(0, 12)}`;
      if (!heldBy.has(ref.heldIn)) heldBy.set(ref.heldIn, parseJson(versions.get(ref.heldIn) ?? ""));
      const held = (heldBy.get(ref.heldIn) as { snapshot?: { stored?: { pending?: Record<string, unknown> } } })
        ?.snapshot?.stored?.pending?.[unit];
      const parsed = held === undefined ? undefined : UnitRecord.safeParse(held);
      text = parsed?.success ? serialiseRecord(parsed.data) : undefined;
    } else text = files.get(at);
    if (text === undefined) throw refuse(`the record of unit ${unit}, ${at}, is missing`);
    if (recordHash(text) !== ref.sha256)
      throw refuse(
        `the record of unit ${unit}, ${at}, is not the one the sealed state names (sha256 ${ref.sha256.slice(0, 12)})`,
      );
    const record = UnitRecord.safeParse(parseJson(text));
    if (!record.success || record.data.unit !== unit || record.data.trackId !== trackId || record.data.n !== ref.n)
      throw refuse(`the record of unit ${unit} is malformed`, at);
    loaded.set(unit, record.data);
  }
  return loaded;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether two JSON values are equal whatever the order of their keys (a stored file's are sorted). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => sameJson(item, b[i]));
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every(
    (key) =>
      Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]),
  );
}

/** The units of the test list last read, by its parsed list and granularity: every delivery of a track rebuilds the same. */
let lastUnits: { list: unknown; granularity: string; units: TrackContext["units"] } | undefined;
function unitsOfList(context: TrackContext): TrackContext["units"] {
  const list = testListOf(context);
  const granularity = context.settings.granularity;
  if (lastUnits?.list !== list || lastUnits.granularity !== granularity)
    lastUnits = { list, granularity, units: buildUnits(list ?? [], granularity) };
  return lastUnits.units;
}

/** Each test's unit, by index, per units array. */
const unitIndexes = new WeakMap<TrackContext["units"], Map<string, number>>();
function unitOfTest(units: TrackContext["units"]): Map<string, number> {
  let known = unitIndexes.get(units);
  if (!known) {
    const map = new Map<string, number>();
    units.forEach((unit, index) => unit.tests.forEach((test) => map.set(test.id, index)));
    unitIndexes.set(units, map);
    known = map;
  }
  return known;
}
