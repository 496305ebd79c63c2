import { describe, expect, it, vi } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import { hashFrozenText, manifestHashFromHashes } from "../../src/gates/hash.js";
import {
  addAuthors,
  addFrozenText,
  cycleEffect,
  frozenState,
  frozenTextOf,
  gateManifestAt,
  initialContext,
  promoteManifest,
  resumeBuild,
  startDispatch,
  testListOf,
  withdrawFrom,
  withUnitEvidence,
} from "../../src/orchestrator/context.js";
import type { FrozenTestFile, GateRecord, TrackContext } from "../../src/orchestrator/types.js";
import { reach } from "./helpers/reach.js";
import { sha } from "./helpers/track.js";

/**
 * src/orchestrator/context.ts's pure helpers, called directly: what the machine's actions build
 * their contexts from. Each asserts the whole value it returns, so a changed field, a gate left
 * frozen or unfrozen, or a text lost from a snapshot shows.
 */

const at = "2026-11-30T12:00:00Z";
const input = {
  trackId: "acme/stockflow#12",
  branch: "feature/f1-stock",
  baseBranch: "main",
  head: sha(1),
  databaseBranch: "feature-f1-stock",
  parentDatabaseBranch: "main",
  at,
};
const closed: GateRecord = {
  status: "closed",
  pendingHash: null,
  approvedHash: null,
  files: {},
  authors: [],
  approvals: [],
  withdrawnReason: null,
};
const fresh = (): TrackContext => initialContext(input, defaultConfig());
const entry = (test: string, file: string, text: string): FrozenTestFile => ({
  file,
  hash: hashFrozenText(text),
  test,
  commit: sha(9),
});

describe("initialContext", () => {
  it("starts every gate closed and nothing recorded", () => {
    expect(fresh()).toEqual({
      trackId: "acme/stockflow#12",
      branch: "feature/f1-stock",
      baseBranch: "main",
      databaseBranch: "feature-f1-stock",
      parentDatabaseBranch: "main",
      head: sha(1),
      rejectedHead: null,
      createdAt: at,
      updatedAt: at,
      sequence: 0,
      artifacts: {},
      testFiles: {},
      settings: { repairBound: 3, granularity: "test" },
      gates: { design: closed, "test-list": closed, deploy: closed, promote: closed },
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
    });
  });
});

describe("testListOf", () => {
  it("is null without a test list, also on a fresh module's first call", async () => {
    vi.resetModules();
    const first = await import("../../src/orchestrator/context.js");
    expect(first.testListOf(fresh())).toBeNull();
    expect(testListOf(fresh())).toBeNull();
  });

  it.each([
    ["not JSON", "{tests"],
    ["JSON that is no test list", '{"tests": 3}'],
  ])("is null for a list that is %s", (_name, text) => {
    expect(testListOf({ ...fresh(), artifacts: { [ARTIFACT_PATHS.testList]: text } })).toBeNull();
  });
});

describe("frozen texts", () => {
  const h = (n: number) => String(n).repeat(64);

  it("addFrozenText stores a new text alone when it has no previous one", () => {
    const texts: TrackContext["frozenTexts"] = { [h(1)]: "a" };
    addFrozenText(texts, h(2), "ab");
    expect(texts).toEqual({ [h(1)]: "a", [h(2)]: "ab" });
  });

  it("addFrozenText holds a previous text the new one starts with as its prefix, and re-points the older prefixes", () => {
    const texts: TrackContext["frozenTexts"] = { [h(9)]: "other" };
    addFrozenText(texts, h(1), "a");
    addFrozenText(texts, h(2), "ab", h(1));
    expect(texts).toEqual({ [h(9)]: "other", [h(1)]: { of: h(2), length: 1 }, [h(2)]: "ab" });
    addFrozenText(texts, h(3), "abc", h(2));
    expect(texts).toEqual({
      [h(9)]: "other",
      [h(1)]: { of: h(3), length: 1 },
      [h(2)]: { of: h(3), length: 2 },
      [h(3)]: "abc",
    });
  });

  it("addFrozenText leaves a text already held as it is, even as a prefix", () => {
    const texts: TrackContext["frozenTexts"] = { [h(1)]: { of: h(2), length: 1 }, [h(2)]: "ab" };
    addFrozenText(texts, h(1), "a", h(2));
    expect(texts).toEqual({ [h(1)]: { of: h(2), length: 1 }, [h(2)]: "ab" });
  });

  it.each([
    ["names itself", 1],
    ["is not held", 8],
  ])("addFrozenText stores the text alone when its previous text %s", (_name, previous) => {
    const texts: TrackContext["frozenTexts"] = {};
    addFrozenText(texts, h(1), "a", h(previous));
    expect(texts).toEqual({ [h(1)]: "a" });
  });

  it("addFrozenText does not make a prefix of a previous text the new one does not start with", () => {
    const texts: TrackContext["frozenTexts"] = { [h(1)]: "x" };
    addFrozenText(texts, h(2), "ab", h(1));
    expect(texts).toEqual({ [h(1)]: "x", [h(2)]: "ab" });
  });

  it("addFrozenText does not chain a prefix to a previous text that is itself a prefix", () => {
    const texts: TrackContext["frozenTexts"] = { [h(1)]: { of: h(2), length: 1 }, [h(2)]: "ab" };
    addFrozenText(texts, h(3), "abc", h(1));
    expect(texts).toEqual({ [h(1)]: { of: h(2), length: 1 }, [h(2)]: "ab", [h(3)]: "abc" });
  });

  const withTexts = (frozenTexts: TrackContext["frozenTexts"]): TrackContext => ({ ...fresh(), frozenTexts });
  const file = (hash: string): FrozenTestFile => ({ file: "test/a.test.ts", hash, test: "T4", commit: sha(9) });
  const missing = "the frozen text of test/a.test.ts (frozen by T4) is missing from the track's snapshot";

  it("frozenTextOf reads a text held whole, or a prefix as long as its text", () => {
    const context = withTexts({ [h(1)]: { of: h(2), length: 2 }, [h(2)]: "ab", [h(3)]: { of: h(2), length: 1 } });
    expect([
      frozenTextOf(context, file(h(2))),
      frozenTextOf(context, file(h(1))),
      frozenTextOf(context, file(h(3))),
    ]).toEqual(["ab", "ab", "a"]);
  });

  it.each([
    ["is not held", {}],
    ["is a prefix of a text not held", { [h(1)]: { of: h(2), length: 1 } }],
    ["is a prefix longer than its text", { [h(1)]: { of: h(2), length: 3 }, [h(2)]: "ab" }],
    ["is a prefix of a prefix", { [h(1)]: { of: h(2), length: 1 }, [h(2)]: { of: h(3), length: 2 }, [h(3)]: "abc" }],
    ["is named only by the record's prototype", {}, "constructor"],
  ])("frozenTextOf throws, naming the file and the test, when the text %s", (_name, texts, hash = h(1)) => {
    expect(() => frozenTextOf(withTexts(texts as TrackContext["frozenTexts"]), file(hash))).toThrow(new Error(missing));
  });
});

describe("frozenState", () => {
  it("in the design lane: the open design gate's files, no test, the runner's configuration not frozen", () => {
    const sim = reach("design-gate");
    expect(frozenState(sim.context)).toEqual({
      gated: Object.fromEntries(
        Object.entries(sim.context.gates.design.files).map(([path, hash]) => [path, { hash, gate: "design" }]),
      ),
      tests: {},
      runnerConfig: false,
    });
  });

  it("a closed gate freezes nothing, whatever files its record still names", () => {
    const context = fresh();
    const stale = { ...context.gates.design, files: { [ARTIFACT_PATHS.spec]: "f".repeat(64) } };
    expect(frozenState({ ...context, gates: { ...context.gates, design: stale } })).toEqual({
      gated: {},
      tests: {},
      runnerConfig: false,
    });
  });

  it("each file's latest freeze, and the earliest test that froze anything, whatever the record's order", () => {
    const context: TrackContext = {
      ...fresh(),
      testFiles: { "test/a.test.ts": "a1a2", "test/b.test.ts": "b1" },
      frozenTests: {
        T12: entry("T12", "test/a.test.ts", "a1a2"),
        T3: entry("T3", "test/b.test.ts", "b1"),
        T10: entry("T10", "test/a.test.ts", "a1"),
      },
      frozenTexts: { [hashFrozenText("a1a2")]: "a1a2", [hashFrozenText("b1")]: "b1", [hashFrozenText("a1")]: "a1" },
    };
    expect(frozenState(context)).toEqual({
      gated: {},
      tests: { "test/a.test.ts": "a1a2", "test/b.test.ts": "b1" },
      runnerConfig: false,
      baseTests: { by: "T3", known: ["test/a.test.ts", "test/b.test.ts"] },
    });
  });

  it("the latest freeze of a file wins when it comes first in the record too", () => {
    const context: TrackContext = {
      ...fresh(),
      frozenTests: { T2: entry("T2", "test/a.test.ts", "old"), T11: entry("T11", "test/a.test.ts", "new") },
      frozenTexts: { [hashFrozenText("old")]: "old", [hashFrozenText("new")]: "new" },
    };
    expect(frozenState(context)).toMatchObject({ tests: { "test/a.test.ts": "new" }, baseTests: { by: "T2" } });
  });
});

describe("withdrawFrom", () => {
  it("withdraw: the gate and the approved file gates below it are withdrawn, the release gates closed, evidence dropped", () => {
    const sim = reach("deploy-gate");
    const before = sim.context;
    const next = withdrawFrom(before, "design", "the review was dismissed", "withdraw");
    expect(next.gates).toEqual({
      design: { ...before.gates.design, status: "withdrawn", withdrawnReason: "the review was dismissed" },
      "test-list": {
        ...before.gates["test-list"],
        status: "withdrawn",
        withdrawnReason: "the design gate was withdrawn (the review was dismissed)",
      },
      deploy: {
        ...before.gates.deploy,
        status: "closed",
        files: {},
        pendingHash: null,
        withdrawnReason: "the design gate was withdrawn (the review was dismissed)",
      },
      promote: before.gates.promote,
    });
    expect([next.deployEvidence, next.pendingDispatch]).toEqual([null, null]);
  });

  it("reopen: the gate and every gate below it close and unfreeze; a gate already closed keeps its record", () => {
    const sim = reach("deploy-gate");
    const before = sim.context;
    const next = withdrawFrom(before, "test-list", "T1 asks too much", "reopen");
    expect(before.gates["test-list"].approvedHash).not.toBeNull();
    expect(next.gates).toEqual({
      design: before.gates.design,
      "test-list": {
        ...before.gates["test-list"],
        status: "closed",
        files: {},
        pendingHash: null,
        approvedHash: null,
        withdrawnReason: "T1 asks too much",
      },
      deploy: {
        ...before.gates.deploy,
        status: "closed",
        files: {},
        pendingHash: null,
        withdrawnReason: "the test-list gate was reopened (T1 asks too much)",
      },
      promote: before.gates.promote,
    });
    expect(next.deployEvidence).toBeNull();
  });

  it("leaves a pending file gate below pending", () => {
    const sim = reach("test-list-gate");
    const next = withdrawFrom(sim.context, "design", "dismissed", "withdraw");
    expect(next.gates["test-list"]).toEqual(sim.context.gates["test-list"]);
    expect(next.gates.design.status).toBe("withdrawn");
  });

  it("a gate it closes drops its approved hash: closed is not reached, whatever was approved before", () => {
    const sim = reach("promote-gate");
    const before = sim.context;
    const approved = before.gates.deploy;
    expect(approved.status).toBe("approved");
    const next = withdrawFrom(before, "deploy", "dismissed", "withdraw");
    expect(next.gates.deploy).toEqual({
      ...approved,
      status: "closed",
      files: {},
      pendingHash: null,
      approvedHash: null,
      withdrawnReason: "dismissed",
    });
  });

  it("a release gate withdrawn by a person reopens pending with no approved hash, its approvals kept as history", () => {
    const sim = reach("promote-gate");
    const approved = sim.context.gates.deploy;
    sim.expectAccepted(sim.send({ type: "gate.withdrawn", at, gate: "deploy", reason: "dismissed" }));
    expect(sim.stage).toBe("deploy-gate");
    // The same deploy evidence, so the same manifest: only a new approval may approve it.
    expect(sim.context.gates.deploy).toEqual({
      ...approved,
      status: "pending",
      approvedHash: null,
      withdrawnReason: "dismissed",
    });
    expect(sim.context.gates.promote).toMatchObject({ status: "closed", pendingHash: null, approvedHash: null });
  });

  it.each(["deploy", "promote"] as const)("from the %s gate keeps the deploy evidence", (gate) => {
    const sim = reach("merging");
    const next = withdrawFrom(sim.context, gate, "dismissed", "withdraw");
    expect(next.deployEvidence).toEqual(sim.context.deployEvidence);
    expect(next.deployEvidence).not.toBeNull();
    expect(next.gates.promote).toMatchObject({ status: "closed", pendingHash: null, files: {} });
  });
});

describe("promoteManifest", () => {
  it("hashes the head and the deploy evidence together", () => {
    const sim = reach("promote-gate");
    const files = { head: hashFrozenText(sim.context.head), "deploy-evidence": sim.context.deployEvidence!.hash };
    expect(promoteManifest(sim.context)).toEqual({ files, hash: manifestHashFromHashes(files) });
    expect(sim.context.gates.promote.pendingHash).toBe(manifestHashFromHashes(files));
  });

  it("names no evidence as none", () => {
    const files = { head: hashFrozenText(sha(1)), "deploy-evidence": "none" };
    expect(promoteManifest(fresh())).toEqual({ files, hash: manifestHashFromHashes(files) });
  });
});

describe("resumeBuild", () => {
  it("with no test list has no units", () => {
    expect(resumeBuild(fresh())).toMatchObject({ units: [], unitIndex: 0, evidence: {} });
  });

  it("drops the evidence of the unit in turn when it has no verified RED", () => {
    const sim = reach("red");
    const unit = sim.context.units[0]!;
    const started = withUnitEvidence(sim.context, (ev) => ({ ...ev, green: null }));
    expect(Object.keys(started.evidence)).toEqual([unit.id]);
    const resumed = resumeBuild(started);
    expect([resumed.unitIndex, resumed.evidence]).toEqual([0, {}]);
  });

  it("keeps a unit in turn's verified RED, its frozen entries and their texts, prefixes with what they point at", () => {
    const sim = reach("green");
    const context = sim.context;
    const [key, kept] = Object.entries(context.frozenTests)[0]!;
    const longer = "x".repeat(5000);
    const frozenTexts = {
      ...context.frozenTexts,
      [kept.hash]: { of: "e".repeat(64), length: 3 },
      ["e".repeat(64)]: longer,
    };
    const next = resumeBuild({ ...context, frozenTexts });
    expect(next.frozenTests).toEqual({ [key]: kept });
    expect(next.frozenTexts).toEqual({ [kept.hash]: { of: "e".repeat(64), length: 3 }, ["e".repeat(64)]: longer });
    expect(next.evidence[context.units[0]!.id]).toMatchObject({ green: null, review: null, complete: false });
    expect(next.evidence[context.units[0]!.id]!.red).toEqual(context.evidence[context.units[0]!.id]!.red);
  });
});

describe("startDispatch and cycleEffect", () => {
  it("a RED cycle: the unit in turn, the head, its tests, none green yet, every frozen file", () => {
    const sim = reach("red");
    const next = startDispatch(sim.context, "red", at);
    expect(next.pendingDispatch).toEqual({
      dispatchId: "acme/stockflow#12#1",
      step: "red",
      commit: sim.context.head,
      unit: "T1",
    });
    const frozen = { ...sim.context.gates.design.files, ...sim.context.gates["test-list"].files };
    expect(cycleEffect(next)).toEqual({
      type: "dispatchCycle",
      dispatchId: "acme/stockflow#12#1",
      step: "red",
      commit: sim.context.head,
      unit: "T1",
      tests: sim.context.units[0]!.tests,
      greenTests: [],
      frozen,
      databaseBranch: "feature-f1-stock",
    });
  });

  it("the release cycle: every test, none as green tests, the frozen test files too", () => {
    const sim = reach("deploying");
    const effect = cycleEffect(sim.context);
    expect(effect).toMatchObject({
      step: "release",
      unit: "release",
      tests: sim.context.units.flatMap((u) => u.tests),
      greenTests: [],
    });
    expect(Object.keys(effect.frozen).sort()).toEqual(
      [
        ...Object.keys(sim.context.gates.design.files),
        ...Object.keys(sim.context.gates["test-list"].files),
        "test/stock.test.ts",
      ].sort(),
    );
  });

  it("a cycle for the second unit names the first one's tests as green", () => {
    const sim = reach("refactor-verify");
    sim.report("valid");
    expect([sim.stage, sim.context.unitIndex]).toEqual(["red", 1]);
    expect(cycleEffect(startDispatch(sim.context, "red", at))).toMatchObject({
      unit: "T2",
      tests: sim.context.units[1]!.tests,
      greenTests: sim.context.units[0]!.tests,
    });
  });

  it("the promotion runs on the merged commit, or the head when none is recorded; no cycle effect for it", () => {
    const sim = reach("merging");
    const merged = startDispatch({ ...sim.context, mergedCommit: sha(77) }, "promote", at);
    expect(merged.pendingDispatch).toEqual({
      dispatchId: `acme/stockflow#12#${sim.context.sequence + 1}`,
      step: "promote",
      commit: sha(77),
      unit: "promote",
    });
    expect(startDispatch(sim.context, "promote", at).pendingDispatch?.commit).toBe(sim.context.head);
    // Any other cycle runs on the head, whatever was merged.
    expect(startDispatch({ ...sim.context, mergedCommit: sha(77) }, "release", at).pendingDispatch?.commit).toBe(
      sim.context.head,
    );
    expect(() => cycleEffect(merged)).toThrow(
      new Error("no cycle is pending: a cycle is dispatched on entering a verify or release stage"),
    );
    expect(() => cycleEffect(fresh())).toThrow(
      new Error("no cycle is pending: a cycle is dispatched on entering a verify or release stage"),
    );
  });

  it("with no unit in turn, a cycle names unit none and no tests", () => {
    const context = startDispatch(fresh(), "green", at);
    expect(context.pendingDispatch).toEqual({
      dispatchId: "acme/stockflow#12#1",
      step: "green",
      commit: sha(1),
      unit: "none",
    });
    expect(context.cycles).toEqual([
      {
        dispatchId: "acme/stockflow#12#1",
        step: "green",
        unit: "none",
        commit: sha(1),
        dispatchedAt: at,
        runId: null,
        outcome: null,
        reasons: [],
        reportedAt: null,
        evidence: null,
      },
    ]);
    expect(cycleEffect(context)).toMatchObject({ unit: "none", tests: [], greenTests: [], frozen: {} });
  });
});

describe("unit evidence and authors", () => {
  it("withUnitEvidence with no unit in turn changes nothing", () => {
    const context = fresh();
    expect(withUnitEvidence(context, (ev) => ({ ...ev, complete: true }))).toBe(context);
  });

  it("addAuthors adds each login once per gate, in order", () => {
    const context = addAuthors(fresh(), ["design", "deploy"], ["a", "b", "a"]);
    expect(addAuthors(context, ["design"], ["b", "c"]).gates).toMatchObject({
      design: { authors: ["a", "b", "c"] },
      "test-list": { authors: [] },
      deploy: { authors: ["a", "b"] },
    });
  });
});

describe("gateManifestAt", () => {
  it("the design gate: the manifest of the texts at the reviewed commit, its pending hash when unchanged", () => {
    const sim = reach("design-gate");
    const texts = { ...sim.context.artifacts };
    expect(gateManifestAt(sim.context, "design", sim.context.head, texts)).toBe(sim.context.gates.design.pendingHash);
    expect(gateManifestAt(sim.context, "design", sim.context.head, { ...texts, [ARTIFACT_PATHS.spec]: "{}" })).not.toBe(
      sim.context.gates.design.pendingHash,
    );
    expect(gateManifestAt(sim.context, "design", sim.context.head, {})).toBeUndefined();
  });

  it.each(["deploy", "promote"] as const)("the %s gate: its pending hash on the head, nothing elsewhere", (gate) => {
    const sim = reach(gate === "deploy" ? "deploy-gate" : "promote-gate");
    expect(gateManifestAt(sim.context, gate, sim.context.head)).toBe(sim.context.gates[gate].pendingHash);
    expect(gateManifestAt(sim.context, gate, sha(4242))).toBeUndefined();
  });

  it("a closed release gate has no manifest, even on the head", () => {
    expect(gateManifestAt(fresh(), "promote", sha(1))).toBeUndefined();
  });

  it("a file gate that froze no file has no manifest", () => {
    expect(gateManifestAt(fresh(), "design", sha(1), {})).toBeUndefined();
  });
});
