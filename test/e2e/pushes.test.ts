import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { checkTable, summaryOf, violationsOn } from "./support/checks.js";
import * as F from "./support/feature.js";
import { AGENTS, LEAD, Scenario, type Checkpoint } from "./support/scenario.js";

/**
 * Pushes as GitHub really sends them, checked against git rather than the payload: a payload that
 * leaves out a commit, a merge whose file lists are empty, "Update branch", pushes on top of a
 * refused commit, and a revert back to the last accepted tree. Each scenario forks from the RED
 * step (design and test list approved) or a gate before it, which take no cycle to reach.
 */

const s = new Scenario();
let atDesignGate: Checkpoint;
let atTestListGate: Checkpoint;
let atRed: Checkpoint;

beforeAll(async () => {
  await s.openTrack();
  await s.step("spec-author", { ".consort/spec.json": F.SPEC });
  await s.step("architect", { ".consort/architecture.json": F.ARCHITECTURE });
  await s.step("dba", { ".consort/db-design.json": F.DB_DESIGN });
  atDesignGate = s.checkpoint();
  await s.review(LEAD, "APPROVED");
  await s.step("test-strategist", { ".consort/test-list.json": F.TEST_LIST });
  expect(s.snapshot().stage).toBe("test-list-gate");
  atTestListGate = s.checkpoint();
  await s.review(LEAD, "APPROVED");
  expect(s.snapshot().stage).toBe("red");
  atRed = s.checkpoint();
}, 300_000);

afterAll(async () => {
  await s.dispose();
});

const short = (sha: string) => sha.slice(0, 7);
const SPEC_CHANGED = F.SPEC.replace("location", "place");
const LEAD_IDENTITY = { name: LEAD, email: `${LEAD}@users.noreply.github.com`, login: LEAD };

/** A commit on main, as another feature's merge would land there. */
function landOnMain(files: Record<string, string>): string {
  return s.repo.commitOn("main", LEAD_IDENTITY, "Another feature lands\n", files).sha;
}

describe("pushes are verified against git, not the payload", () => {
  test("a payload that leaves out its oldest commit does not hide it: the commit is read from git and refused", async () => {
    s.restore(atRed);
    const before = s.head();
    const early = s.commit("driver", F.GREEN_T1);
    s.commit("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
    const payload = s.pushPayload(before);
    payload.commits.shift();
    await s.deliver("push", payload);

    const snapshot = s.snapshot();
    expect([snapshot.stage, snapshot.context.head, snapshot.context.pendingDispatch]).toEqual(["red", before, null]);
    expect(violationsOn(s.world.check(s.head(), "consort/discipline"))).toEqual([
      `${short(early)}: not this role's turn: the track is at red, which is the Navigator's (navigator); the commit claims driver`,
      `${short(early)}: path migrations/${F.MIGRATION_ID}.down.sql is not driver's to change at red (allowed now: test/**; never: .consort/**)`,
      `${short(early)}: path migrations/${F.MIGRATION_ID}.up.sql is not driver's to change at red (allowed now: test/**; never: .consort/**)`,
    ]);
    expect(s.world.mock.violations).toEqual([]);
  });

  test("a merge whose payload lists no files cannot slip in a change main never made", async () => {
    s.restore(atRed);
    const before = s.head();
    landOnMain({ "docs/NEWS.md": "Stock by batch\n" });
    const merge = s.repo.mergeOn(
      s.branch,
      s.repo.branchHead("main")!,
      "Merge branch 'main'\n\nConsort-Role: navigator\n",
      AGENTS.navigator,
      { "src/routes/backdoor.ts": "export const open = true;\n" },
    );
    await s.push(before);

    expect(s.snapshot().context.head).toBe(before);
    expect(violationsOn(s.world.check(merge, "consort/discipline"))).toEqual([
      `${short(merge)}: merges main but also changes src/routes/backdoor.ts, which main did not: make such a change a step of its own`,
    ]);
  });

  test("a merge cannot change a file only main changed, nor drop main's change to it: git's merge takes main's text", async () => {
    s.restore(atRed);
    const before = s.head();
    landOnMain({ "src/services/prices.ts": "export const price = (sku: string) => 0;\n", "docs/NEWS.md": "Prices\n" });
    const merge = s.repo.mergeOn(
      s.branch,
      s.repo.branchHead("main")!,
      "Merge branch 'main'\n\nConsort-Role: navigator\n",
      AGENTS.navigator,
      // Main's new module, with a line main never wrote; and main's news left out.
      {
        "src/services/prices.ts": "export const price = (sku: string) => 0;\nexport const open = true;\n",
        "docs/NEWS.md": null,
      },
    );
    await s.push(before);

    expect(s.snapshot().context.head).toBe(before);
    expect(violationsOn(s.world.check(merge, "consort/discipline"))).toEqual([
      `${short(merge)}: merges main but leaves docs/NEWS.md, src/services/prices.ts other than main made them, though only main changed them since the track forked: take main's text in the merge, and make any change of your own a step`,
    ]);
    expect(s.world.mock.violations).toEqual([]);
  });

  test("a merge of a branch that is not main is refused: only the default branch may be merged into a track", async () => {
    s.restore(atRed);
    const before = s.head();
    s.repo.setBranch("scratch", s.repo.branchHead("main")!);
    const other = s.repo.commitOn("scratch", AGENTS.driver, "Code from elsewhere\n", F.GREEN_T1).sha;
    const merge = s.repo.mergeOn(
      s.branch,
      other,
      "Merge branch 'scratch'\n\nConsort-Role: navigator\n",
      AGENTS.navigator,
    );
    await s.push(before);

    expect(s.snapshot().context.head).toBe(before);
    expect(violationsOn(s.world.check(merge, "consort/discipline"))).toEqual([
      `${short(merge)}: merges ${short(other)}, which is not on main: a track takes merges of main only ("Update branch"); rebuild the branch without it`,
    ]);
  });

  test('"Update branch" merges main in: the merged commits are not the track\'s, and the track goes on from the merge', async () => {
    s.restore(atRed);
    landOnMain({ "docs/NEWS.md": "Stock by batch\n" });
    const merge = await s.updateBranch();

    const snapshot = s.snapshot();
    expect([snapshot.stage, snapshot.context.head, snapshot.context.rejectedHead]).toEqual(["red", merge, null]);
    expect(checkTable(s.world, merge)).toMatchObject({
      "consort/design": "success",
      "consort/test-list": "success",
      "consort/discipline": "success",
    });
    // The RED step on top of the merge is the track's next step, and is taken.
    await s.step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
    expect(s.snapshot().stage).toBe("red-verify");
    expect(s.world.mock.violations).toEqual([]);
  });
});

describe("a rebase onto main", () => {
  test("the track's accepted commits replayed on main's head are taken as an update: the gates stay approved and the track goes on", async () => {
    s.restore(atRed);
    const accepted = s.head();
    landOnMain({ "docs/NEWS.md": "Stock by batch\n" });
    const rebased = s.repo.rebaseOn(s.branch, s.repo.branchHead("main")!, AGENTS.navigator);
    await s.push(accepted, { forced: true });

    const snapshot = s.snapshot();
    expect([snapshot.stage, snapshot.context.head, snapshot.context.rejectedHead]).toEqual(["red", rebased, null]);
    expect(snapshot.context.lastProblem).toEqual([]);
    expect(checkTable(s.world, rebased)).toMatchObject({
      "consort/design": "success",
      "consort/test-list": "success",
      "consort/discipline": "success",
    });
    await s.step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
    expect(s.snapshot().stage).toBe("red-verify");
    expect(s.world.mock.violations).toEqual([]);
  });

  test("a replay that also changes a file is history rewritten: refused, naming the commit and the file", async () => {
    s.restore(atRed);
    const accepted = s.head();
    landOnMain({ "docs/NEWS.md": "Stock by batch\n" });
    const rebased = s.repo.rebaseOn(s.branch, s.repo.branchHead("main")!, AGENTS.navigator);
    const replay = s.repo.commitInfo(rebased)!;
    const amended = s.repo.writeCommit(
      s.repo.writeTree(replay.tree, [
        { path: "src/routes/backdoor.ts", mode: "100644", sha: s.repo.writeBlob("export const open = true;\n") },
      ]),
      replay.parents,
      replay.message,
      replay.author,
      AGENTS.navigator,
    );
    s.repo.setBranch(s.branch, amended, rebased);
    await s.push(accepted, { forced: true });

    expect([s.snapshot().stage, s.snapshot().context.head]).toEqual(["red", accepted]);
    expect(violationsOn(s.world.check(amended, "consort/discipline"))).toEqual([
      `history was rewritten: ${short(amended)} is not a replay of the accepted ${short(accepted)}: it also changes src/routes/backdoor.ts`,
    ]);
  });

  test("a rebase that leaves out an accepted commit is refused, saying how many the track had", async () => {
    s.restore(atRed);
    const accepted = s.head();
    landOnMain({ "docs/NEWS.md": "Stock by batch\n" });
    const rebased = s.repo.rebaseOn(s.branch, s.repo.branchHead("main")!, AGENTS.navigator);
    const dropped = s.repo.commitInfo(rebased)!.parents[0]!;
    s.repo.setBranch(s.branch, dropped, rebased);
    await s.push(accepted, { forced: true });

    expect(s.snapshot().context.head).toBe(accepted);
    const own = s.repo.revList(accepted, s.repo.branchHead("main")!).length;
    expect(violationsOn(s.world.check(dropped, "consort/discipline"))).toEqual([
      `history was rewritten: ${short(dropped)} holds ${own - 1} commit(s) of its own on main, where the track had ${own} accepted since it left main`,
      // The commit left out was the test list's: the head no longer holds what its gate froze.
      `.consort/test-list.json: frozen by the test-list gate, but at ${short(dropped)} it is not the text the gate froze (changed beneath this push); restore it`,
    ]);
  });
});

describe("every check describes the head it is posted on", () => {
  test("a frozen spec changed on top of a refused commit withdraws the design gate on that head", async () => {
    s.restore(atRed);
    const accepted = s.head();
    const refused = await s.step("driver", F.GREEN_T1);
    expect(s.snapshot().context.rejectedHead?.sha).toBe(refused);
    const sneaky = await s.step("navigator", { ".consort/spec.json": SPEC_CHANGED });

    const snapshot = s.snapshot();
    expect([snapshot.stage, snapshot.context.head, snapshot.context.gates.design.status]).toEqual([
      "design-gate",
      accepted,
      "withdrawn",
    ]);
    expect(s.world.check(sneaky, "consort/design").conclusion).toBe("failure");
    expect(violationsOn(s.world.check(sneaky, "consort/discipline"))).toEqual([
      `the branch still holds rejected commit ${short(refused)}`,
      `.consort/spec.json: frozen by the design gate, but at ${short(sneaky)} it is not the text the gate froze (changed beneath this push); restore it`,
    ]);
  });

  test("a push of code only on top of a refused frozen-file change still names the frozen file on its head", async () => {
    // The compare from the refused head lists no frozen path, but nothing vouches for the refused head: its tree is read.
    s.restore(atRed);
    const refused = await s.step("navigator", { ".consort/spec.json": SPEC_CHANGED });
    expect(s.snapshot().context.rejectedHead?.sha).toBe(refused);
    const onTop = await s.step("driver", F.GREEN_T1);

    expect(s.snapshot().context.rejectedHead?.sha).toBe(onTop);
    expect(violationsOn(s.world.check(onTop, "consort/discipline"))).toEqual([
      `the branch still holds rejected commit ${short(refused)}`,
      `.consort/spec.json: frozen by the design gate, but at ${short(onTop)} it is not the text the gate froze (changed beneath this push); restore it`,
    ]);
    expect(s.world.mock.violations).toEqual([]);
  });

  test("a revert of the refused commit is recognised: the track goes on from the revert", async () => {
    s.restore(atRed);
    const accepted = s.head();
    const refused = await s.step("driver", F.GREEN_T1);
    const revert = s.commit(
      "navigator",
      Object.fromEntries(
        Object.keys(F.GREEN_T1).map((path) => [path, s.repo.fileAt(accepted, path)?.toString("utf8") ?? null]),
      ),
      { subject: `Revert ${short(refused)}` },
    );
    await s.push(refused);

    const snapshot = s.snapshot();
    expect([snapshot.stage, snapshot.context.head, snapshot.context.rejectedHead]).toEqual(["red", revert, null]);
    expect(s.world.check(revert, "consort/discipline").conclusion).toBe("success");
    await s.step("navigator", { [F.INDEX_TEST_FILE]: F.RED_T1 });
    expect(s.snapshot().stage).toBe("red-verify");
  });
});

describe("what a reviewer reads while a gate waits", () => {
  test("the test-list check and the PR comment show the list waiting for approval", async () => {
    s.restore(atTestListGate);
    const head = s.head();
    const list = (JSON.parse(F.TEST_LIST) as { tests: Array<{ id: string; title: string }> }).tests;
    const run = s.world.check(head, "consort/test-list");
    expect([run.status, run.conclusion]).toEqual(["in_progress", null]);
    const comment = s.world.appComments(s.pull!.number).at(-1)!.body;
    for (const text of [summaryOf(run), comment]) {
      expect(text).not.toContain("The test list is not written yet");
      for (const test of list) expect(text).toContain(test.title);
    }
  });

  test("a branch reset to the last accepted commit after a refusal takes the gate's approval again", async () => {
    s.restore(atDesignGate);
    const accepted = s.head();
    const refused = await s.step("driver", F.GREEN_T1);
    expect(s.snapshot().context.rejectedHead?.sha).toBe(refused);
    await s.resetTo(accepted);
    expect(s.snapshot().context.rejectedHead).toBeNull();
    await s.review(LEAD, "APPROVED");

    const snapshot = s.snapshot();
    expect([snapshot.stage, snapshot.context.gates.design.status]).toEqual(["test-list", "approved"]);
    expect(s.world.check(accepted, "consort/design").conclusion).toBe("success");
  });
});

describe("a branch's first push", () => {
  // A scenario of its own for each: a new branch, on a repository where it never existed.
  let f: Scenario;
  beforeEach(() => {
    f = new Scenario();
  });
  afterEach(async () => {
    await f.dispose();
  });
  const NO_COMMIT = "0".repeat(40);

  /** A person pushes a new branch holding commits: GitHub sends a push with `created` and a zero `before`. */
  function branchWith(role: Parameters<Scenario["commit"]>[0], files: Record<string, string>) {
    const fork = f.repo.branchHead("main")!;
    f.repo.setBranch(f.branch, fork);
    const sha = f.commit(role, files);
    return { fork, sha, payload: { ...f.pushPayload(fork), before: NO_COMMIT, created: true } };
  }

  test("a push that arrives before its create starts the track and its commit is classified; the create and a redelivery change nothing", async () => {
    const { sha, payload } = branchWith("product-owner", { ".consort/spec.json": F.STORIES });
    const delivery = await f.deliver("push", payload);
    expect([f.snapshot().stage, f.snapshot().context.head]).toEqual(["spec", sha]);
    const written = f.world.stateHead();

    await f.deliver("push", payload, delivery);
    await f.createBranchEvent();
    expect(f.world.stateHead()).toBe(written);
    expect(f.world.check(sha, "consort/discipline").conclusion).toBe("success");
    expect(f.world.mock.violations).toEqual([]);
  });

  test("pushes delivered out of order: the later one takes both steps from git, and the late one changes nothing", async () => {
    await f.createBranch();
    const fork = f.head();
    f.commit("product-owner", { ".consort/spec.json": F.STORIES });
    const first = f.pushPayload(fork);
    const stories = f.head();
    const spec = f.commit("spec-author", { ".consort/spec.json": F.SPEC });
    await f.deliver("push", f.pushPayload(stories));

    expect([f.snapshot().stage, f.snapshot().context.head, f.snapshot().context.rejectedHead]).toEqual([
      "architecture",
      spec,
      null,
    ]);
    expect(f.world.check(spec, "consort/discipline").conclusion).toBe("success");
    const written = f.world.stateHead();
    await f.deliver("push", first);
    expect(f.world.stateHead()).toBe(written);
    expect(f.world.mock.violations).toEqual([]);
  });

  test("a commit the branch was created with is classified, not taken as the track's start", async () => {
    const { fork, sha, payload } = branchWith("driver", F.GREEN_T1);
    await f.createBranchEvent();
    await f.deliver("push", payload);

    const snapshot = f.snapshot();
    expect([snapshot.stage, snapshot.context.head, snapshot.context.rejectedHead?.sha]).toEqual(["stories", fork, sha]);
    expect(f.world.check(sha, "consort/discipline").conclusion).toBe("failure");
  });
});
