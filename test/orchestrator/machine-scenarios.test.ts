import { describe, expect, it } from "vitest";
import { ARTIFACT_PATHS } from "../../src/artifacts/paths.js";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { checkStates } from "../../src/gates/checks.js";
import {
  createTrack,
  eventProblems,
  describeLane,
  nextAction,
  renderLane,
  restoreSnapshot,
  transition,
} from "../../src/orchestrator/index.js";
import type { DispatchAgentEffect, TrackSnapshot } from "../../src/orchestrator/types.js";
import { edited, stockflowFiles, stockflowText } from "./fixtures/stockflow.js";
import { reach } from "./helpers/reach.js";
import { sha, TrackSim, twoTestList } from "./helpers/track.js";

const at = "2026-11-30T12:00:00Z";
const checks = (sim: TrackSim) => Object.fromEntries(checkStates(sim.snapshot).map((c) => [c.name, c.status]));

describe("a frozen design file changes after the gate", () => {
  it("rejects the commit, withdraws design → test list → build evidence, and resumes where it was once re-approved at the same hash", () => {
    const sim = reach("green");
    const designHash = sim.context.gates.design.approvedHash;
    const listHash = sim.context.gates["test-list"].approvedHash;
    const result = sim.push({ role: "driver", files: { "src/services/stock.ts": "x", [ARTIFACT_PATHS.spec]: "{}" } });

    expect(result.rejection?.reasons).toEqual([
      expect.stringContaining("touches frozen file .consort/spec.json, approved at the design gate"),
    ]);
    expect(sim.stage).toBe("design-gate");
    expect(sim.context.gates.design.status).toBe("withdrawn");
    expect(sim.context.gates["test-list"].status).toBe("withdrawn");
    expect(checks(sim)).toMatchObject({
      "consort/design": "failure",
      "consort/test-list": "failure",
      "consort/build": "failure",
      "consort/discipline": "failure",
    });
    const update = sim.last.effects.find((e) => e.type === "updateChecks");
    expect(update).toMatchObject({ commit: sim.context.rejectedHead!.sha });

    // Approving while the branch still holds the rejected commit is refused.
    expect(sim.approve("design").rejection?.reasons[0]).toMatch(/holds rejected commit/);

    sim.expectAccepted(sim.reset());
    expect(checks(sim)["consort/discipline"]).toBe("success");
    expect(sim.context.gates.design.pendingHash).toBe(designHash);
    sim.expectAccepted(sim.approve("design"));
    expect(sim.stage).toBe("test-list-gate");
    expect(sim.context.gates.design).toMatchObject({
      status: "approved",
      approvedHash: designHash,
      withdrawnReason: null,
    });
    expect(sim.context.gates.design.approvals).toHaveLength(2);
    expect(sim.context.gates["test-list"].pendingHash).toBe(listHash);
    sim.expectAccepted(sim.approve("test-list"));
    // T1's verified RED carried over: back to GREEN, not RED.
    expect(sim.stage).toBe("green");
    expect(sim.context.frozenTests.T1).toBeDefined();
  });

  it("tells the agent the gate is withdrawn, not that the track stays where it was", () => {
    const sim = reach("green");
    const head = sim.context.head;
    sim.push({ role: "driver", files: { [ARTIFACT_PATHS.spec]: "{}" } });
    const pushed = sim.context.rejectedHead!.sha.slice(0, 7);
    expect(sim.effects("comment")).toEqual([
      {
        type: "comment",
        body: [
          `**Push to ${pushed} rejected** (the design gate is withdrawn and must be approved again):`,
          `- ${pushed}: touches frozen file .consort/spec.json, approved at the design gate: reset the branch, or ask a person to renegotiate`,
          "",
          `To continue, reset the branch to ${head.slice(0, 7)} (git push --force-with-lease origin ${head}:${sim.context.branch}) and push the step again.`,
        ].join("\n"),
      },
    ]);
  });

  it("withdraws only the test-list gate when only the test list changes", () => {
    const sim = reach("red");
    sim.push({ role: "navigator", files: { [ARTIFACT_PATHS.testList]: "{}", "test/stock.test.ts": "x" } });
    expect(sim.stage).toBe("test-list-gate");
    expect(sim.context.gates.design.status).toBe("approved");
    expect(sim.context.gates["test-list"].status).toBe("withdrawn");
  });
});

describe("a push on top of a rejected commit", () => {
  it("is rejected too: nothing advances until the branch is reset", () => {
    const sim = reach("red");
    sim.push({ role: null, files: { "test/stock.test.ts": "x" } });
    expect(sim.context.rejectedHead).not.toBeNull();
    const onTop = sim.push({
      role: "navigator",
      files: { "test/stock.test.ts": "it('x', () => expect(1).toBe(2));\n" },
    });
    expect(onTop.rejection?.reasons).toEqual([expect.stringContaining("still holds rejected commit")]);
    expect(sim.stage).toBe("red");
  });

  it("a rewritten history is rejected with the reset command", () => {
    const sim = reach("red");
    const result = sim.send({ type: "push", at, before: sha(999), after: sha(1000), forced: true, commits: [] });
    expect(result.rejection?.reasons[0]).toMatch(/history was rewritten/);
    expect(result.effects).toContainEqual({
      type: "comment",
      body: expect.stringContaining(`git push --force-with-lease origin ${sim.context.head}:feature/f1-stock`),
    });
  });
});

describe("bounded repair", () => {
  it("blocks after the configured number of failed GREENs and lets a person grant another round", () => {
    const sim = reach("green", { repairBound: 3 });
    for (let round = 1; round <= 3; round++) {
      sim.expectAccepted(sim.push({ role: "driver", files: { "src/services/stock.ts": `// try ${round}\n` } }));
      sim.expectAccepted(sim.report("invalid", [`T1 still failing (${round})`]));
      expect(sim.stage).toBe(round < 3 ? "repair" : "blocked");
    }
    expect(sim.context.blocked).toEqual({ reason: "T1 still failing (3)", resume: "repair" });
    expect(checks(sim)["consort/build"]).toBe("failure");
    expect(nextAction(sim.snapshot, sim.config)).toMatchObject({
      actor: "person",
      task: expect.stringContaining("retry"),
    });
    sim.expectAccepted(sim.send({ type: "retry", at, by: "lead" }));
    expect(sim.stage).toBe("repair");
  });
});

describe("renegotiating the test list", () => {
  it("reopens the test-list gate and keeps evidence only for tests that did not change", () => {
    const sim = reach("red");
    // T1 done; then T2 cannot go green and the track blocks.
    sim.throughUnit();
    expect(sim.context.unitIndex).toBe(1);
    sim.expectAccepted(
      sim.push({
        role: "navigator",
        files: {
          "test/stock.test.ts": `${sim.context.testFiles["test/stock.test.ts"]}it("T2", () => expect(1).toBe(2));\n`,
        },
      }),
    );
    sim.expectAccepted(sim.report("valid"));
    for (let i = 0; i < 2; i++) {
      sim.expectAccepted(sim.push({ role: "driver", files: { "src/services/stock.ts": `// ${i}\n` } }));
      sim.expectAccepted(sim.report("invalid", ["T2 cannot pass as written"]));
    }
    expect(sim.stage).toBe("blocked");

    sim.expectAccepted(
      sim.send({ type: "renegotiate", at, by: "lead", scope: "test-list", reason: "T2 asks for the impossible" }),
    );
    expect(sim.stage).toBe("test-list");
    expect(sim.context.gates["test-list"].status).toBe("closed");
    const list = JSON.parse(sim.context.artifacts[ARTIFACT_PATHS.testList]!);
    list.tests[1].title = "filing stock > reads a filed record back with its code";
    sim.expectAccepted(
      sim.push({ role: "test-strategist", files: { [ARTIFACT_PATHS.testList]: JSON.stringify(list) } }),
    );
    sim.expectAccepted(sim.approve("test-list"));

    expect(sim.stage).toBe("red");
    expect(sim.context.unitIndex).toBe(1);
    expect(sim.context.evidence.T1?.complete).toBe(true);
    expect(sim.context.evidence.T2).toBeUndefined();
    expect(Object.keys(sim.context.frozenTests)).toEqual(["T1"]);
  });
});

describe("granularity per acceptance criterion", () => {
  it("builds one unit per AC with all its tests in turn", () => {
    const sim = new TrackSim(ConsortConfig.parse({ granularity: "ac" }));
    sim.throughDesign(
      edited(stockflowText.testList, (j) => {
        j.tests = [j.tests[0], { ...j.tests[0], id: "T2", title: "filing stock > stores the code" }, j.tests[1]].map(
          (t: object, i: number) => ({ ...t, id: `T${i + 1}` }),
        );
      }),
    );
    expect(sim.context.units.map((u) => [u.id, u.tests.map((t) => t.id)])).toEqual([
      ["S1-AC1", ["T1", "T2"]],
      ["S1-AC2", ["T3"]],
    ]);
    sim.throughUnit();
    expect(sim.context.evidence["S1-AC1"]?.complete).toBe(true);
    expect(Object.keys(sim.context.frozenTests)).toEqual(["T1", "T2"]);
  });
});

describe("agent dispatch", () => {
  it("asks the next role's agent with its NextAction when agents are enabled", () => {
    const config = ConsortConfig.parse({ agents: { enabled: true, command: "run-agent" } });
    const sim = new TrackSim(config);
    expect(sim.created.effects).toContainEqual(
      expect.objectContaining({ type: "dispatchAgent", role: "product-owner" }),
    );
    sim.throughDesign();
    const dispatch = sim.last.effects.find((e): e is DispatchAgentEffect => e.type === "dispatchAgent");
    expect(dispatch?.role).toBe("navigator");
    expect(dispatch?.nextAction).toMatchObject({
      stage: "red",
      unit: "T1",
      trailer: "Consort-Role: navigator",
      testsInTurn: [expect.objectContaining({ id: "T1" })],
    });
  });

  it("dispatches no agent when agents are off", () => {
    const sim = new TrackSim().throughDesign();
    expect(sim.results.flatMap((r) => r.effects).some((e) => e.type === "dispatchAgent")).toBe(false);
  });
});

describe("createTrack", () => {
  it("refuses input it cannot start a track from, naming the field", () => {
    expect(() =>
      createTrack(
        {
          trackId: "t",
          branch: "",
          baseBranch: "main",
          head: "not-a-sha",
          databaseBranch: "d",
          parentDatabaseBranch: "main",
          at,
        },
        ConsortConfig.parse({}),
      ),
    ).toThrow(/cannot create a track: branch: .*; head: a git commit sha/);
  });

  it("forks the track's database branch from its parent and starts at stories", () => {
    const sim = new TrackSim();
    expect(sim.stage).toBe("stories");
    expect(sim.created.effects[0]).toEqual({ type: "forkDatabase", branch: "feature-f1-stock", parent: "main" });
  });
});

describe("snapshots", () => {
  it("survive a JSON round trip and restore to the same decisions", () => {
    const sim = reach("green-verify");
    const restored = restoreSnapshot(JSON.stringify(sim.snapshot));
    expect(restored).toEqual(sim.snapshot);
    const a = transition(sim.snapshot, { type: "retry", at, by: "lead" }, sim.config);
    const b = transition(restored, { type: "retry", at, by: "lead" }, sim.config);
    expect(b).toEqual(a);
  });

  it("fail closed on an unknown version", () => {
    const sim = reach("red");
    expect(() => restoreSnapshot({ ...sim.snapshot, schemaVersion: 3 })).toThrow(
      /schema version 3 is not supported: this Consort reads version 2 \(and converts version 1\)/,
    );
    expect(() => restoreSnapshot({ ...sim.snapshot, schemaVersion: undefined })).toThrow(
      /this is not a track snapshot: it has no schemaVersion/,
    );
  });

  it("fail closed on a malformed snapshot, naming the field", () => {
    const sim = reach("red");
    const broken = JSON.parse(JSON.stringify(sim.snapshot)) as TrackSnapshot;
    (broken.context as unknown as Record<string, unknown>).unitIndex = -1;
    expect(() => restoreSnapshot(broken)).toThrow(/malformed: context\.unitIndex/);
    expect(() => restoreSnapshot({ ...sim.snapshot, stage: "skipping-ahead" })).toThrow(/malformed: stage/);
    expect(() => restoreSnapshot("{not json")).toThrow(/not valid JSON/);
  });

  it("are pure: the same snapshot and event always give the same result, and the input is not changed", () => {
    const sim = reach("red");
    const frozenInput = JSON.stringify(sim.snapshot);
    const event = {
      type: "push" as const,
      at,
      before: sim.context.head,
      after: sha(500),
      forced: false,
      commits: [
        {
          sha: sha(500),
          authorLogin: "nav-bot[bot]",
          message: "T1\n\nConsort-Role: navigator",
          changes: [{ path: "test/stock.test.ts", status: "added" as const }],
          files: { "test/stock.test.ts": "it('x', () => expect(1).toBe(2));\n" },
        },
      ],
    };
    const first = transition(sim.snapshot, event, sim.config);
    const second = transition(sim.snapshot, event, sim.config);
    expect(second).toEqual(first);
    expect(JSON.stringify(sim.snapshot)).toBe(frozenInput);
  });
});

describe("events are validated at the edge", () => {
  it("names every problem of a malformed event where it enters (the engine refuses it there)", () => {
    const malformed = { type: "gate.approved", at: "yesterday", gate: "design" };
    expect(eventProblems(malformed).join("\n")).toMatch(/event at/);
    expect(
      eventProblems({
        ...malformed,
        at: "2026-12-03T10:00:00.000Z",
        manifestHash: "a".repeat(64),
        approver: "pat",
        reviewId: 1,
        commit: "b".repeat(40),
      }),
    ).toEqual([]);
  });

  it("refuses an event of no known type without touching the snapshot", () => {
    const sim = reach("red");
    const result = transition(sim.snapshot, { type: "gate.forged", at: "yesterday" } as never, sim.config);
    expect(result.snapshot).toBe(sim.snapshot);
    expect(result.rejection?.reasons.join("\n")).toMatch(/"gate\.forged" is not an event the machine knows/);
  });
});

describe("describeLane", () => {
  it("shows done, now and next for a track in the build lane", () => {
    const sim = reach("green");
    const lane = describeLane(sim.snapshot);
    expect(lane.done).toContain("test-list gate (a person approves)");
    expect(lane.now).toBe("T1: green");
    expect(lane.next).toEqual([
      "T2: red → green → review",
      "preview deploy, verified",
      "deploy gate (a person approves)",
      "promote gate (a person approves)",
      "merge the pull request",
      "migrate the parent database",
    ]);
    expect(renderLane(sim.snapshot)).toContain("▶ T1: green");
  });

  it("shows a track blocked at the release where it stands", () => {
    const sim = reach("deploying");
    sim.report("invalid", ["GET /health: 502"]);
    const lane = describeLane(sim.snapshot);
    expect(lane.now).toBe("preview deploy, verified: blocked (GET /health: 502)");
    expect(lane.done).toContain("T2: red → green → review");
  });

  it("shows a track blocked in the build lane at its unit", () => {
    expect(describeLane(reach("blocked").snapshot).now).toBe("T1: blocked (T1 still fails)");
  });

  it("shows the design lane at its start", () => {
    const lane = describeLane(new TrackSim().snapshot);
    expect(lane.done).toEqual([]);
    expect(lane.now).toBe("stories and acceptance criteria (product-owner)");
  });
});

describe("StockFlow's full eight-test list", () => {
  it("is accepted by the test-list step and built in order", () => {
    const sim = new TrackSim();
    const files = stockflowFiles();
    sim.expectAccepted(
      sim.push({ role: "product-owner", files: { [ARTIFACT_PATHS.spec]: files[ARTIFACT_PATHS.spec]! } }),
    );
    sim.expectAccepted(
      sim.push({ role: "spec-author", files: { [ARTIFACT_PATHS.spec]: files[ARTIFACT_PATHS.spec]! } }),
    );
    sim.expectAccepted(
      sim.push({ role: "architect", files: { [ARTIFACT_PATHS.architecture]: files[ARTIFACT_PATHS.architecture]! } }),
    );
    sim.expectAccepted(
      sim.push({ role: "dba", files: { [ARTIFACT_PATHS.dbDesign]: files[ARTIFACT_PATHS.dbDesign]! } }),
    );
    expect(sim.stage).toBe("ux");
    sim.expectAccepted(sim.push({ role: "ux-designer", files: { [ARTIFACT_PATHS.ux]: files[ARTIFACT_PATHS.ux]! } }));
    sim.expectAccepted(sim.approve("design"));
    sim.expectAccepted(
      sim.push({ role: "test-strategist", files: { [ARTIFACT_PATHS.testList]: files[ARTIFACT_PATHS.testList]! } }),
    );
    sim.expectAccepted(sim.approve("test-list"));
    for (let i = 0; i < 8; i++) sim.throughUnit();
    expect(sim.stage).toBe("deploying");
    const release = sim.last.effects.find((e) => e.type === "dispatchCycle");
    expect(release).toMatchObject({ step: "release", unit: "release" });
  });
});

describe("gate authors", () => {
  it("records who wrote what each gate approves, for the approval rules", () => {
    const sim = reach("test-list-gate");
    expect(sim.context.gates.design.authors).toEqual(["po-bot[bot]", "spec-bot[bot]", "arch-bot[bot]", "dba-bot[bot]"]);
    expect(sim.context.gates["test-list"].authors).toEqual(["tests-bot[bot]"]);
  });

  it("counts the author of an incomplete step too", () => {
    const sim = reach("test-list");
    const untested = JSON.stringify({
      tests: [{ id: "T1", ac: "S1-AC1", file: "test/stock.test.ts", title: "files", kind: "behavior" }],
    });
    sim.expectAccepted(
      sim.push({ role: "test-strategist", author: "draft-bot[bot]", files: { [ARTIFACT_PATHS.testList]: untested } }),
    );
    expect(sim.stage).toBe("test-list");
    sim.expectAccepted(sim.push({ role: "test-strategist", files: { [ARTIFACT_PATHS.testList]: twoTestList } }));
    expect(sim.stage).toBe("test-list-gate");
    const authors = ["draft-bot[bot]", "tests-bot[bot]"];
    expect([sim.context.gates["test-list"].authors, sim.context.gates.deploy.authors.slice(-2)]).toEqual([
      authors,
      authors,
    ]);
  });
});

it("createTrack is deterministic", () => {
  const input = {
    trackId: "t",
    branch: "b",
    baseBranch: "main",
    head: sha(1),
    databaseBranch: "d",
    parentDatabaseBranch: "main",
    at,
  };
  expect(createTrack(input, ConsortConfig.parse({}))).toEqual(createTrack(input, ConsortConfig.parse({})));
});
