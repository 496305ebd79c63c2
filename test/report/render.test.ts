import { describe, expect, it } from "vitest";
import { TRACK_CHECKS } from "../../src/gates/checks.js";
import { CHECK_NAMES } from "../../src/contracts/gates.js";
import {
  CHECK_ACTIONS,
  CheckAction,
  COMMENT_LIMIT,
  OUTPUT_LIMIT,
  renderCheckRuns,
  renderComment,
  renderFailingCheckRuns,
  renderTamperedCheckRuns,
  renderTamperedComment,
  type CheckView,
  type RenderedCheckRun,
} from "../../src/report/index.js";
import { check, DESIGN_HASH, HEAD, midBuildReport, releaseReport } from "./fixtures.js";

const byName = (runs: RenderedCheckRun[], name: string) => runs.find((r) => r.name === name)!;
const outcomeOf = (r: RenderedCheckRun) => (r.status === "completed" ? r.conclusion : r.status);

describe("check runs of a track mid-build", () => {
  const runs = renderCheckRuns(midBuildReport());

  it("renders the seven contract checks in order", () => {
    expect(runs.map((r) => r.name)).toEqual([...CHECK_NAMES]);
    expect(runs.map(outcomeOf)).toEqual([
      "success",
      "success",
      "in_progress",
      "in_progress",
      "in_progress",
      "success",
      "success",
    ]);
  });

  it("shows the design gate's approval, frozen files and who approved when on which commit", () => {
    const design = byName(runs, "consort/design");
    expect(design.output.title).toBe("Approved by @lee at 5d1e6a7");
    expect(design.output.summary).toBe(
      [
        "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
        "### Design gate\n\nApproved at the current frozen hash.",
        `### Frozen files\n\nManifest \`${DESIGN_HASH}\` frozen at [\`aaaaaaa\`](https://github.com/acme/shop/commit/${"a".repeat(40)}).\n\n` +
          "| File | sha256 |\n| --- | --- |\n" +
          `| \`.consort/spec.json\` | \`${"1".repeat(64)}\` |\n| \`.consort/architecture.json\` | \`${"2".repeat(64)}\` |\n| \`.consort/db-design.json\` | \`${"3".repeat(64)}\` |`,
        "### Approvals\n\n| Who | When | Commit | Frozen hash |\n| --- | --- | --- | --- |\n" +
          `| [@lee](https://github.com/acme/shop/pull/7#pullrequestreview-11) | 2026-11-30T05:20:00Z | [\`aaaaaaa\`](https://github.com/acme/shop/commit/${"a".repeat(40)}) | \`5d1e6a7\` |`,
      ].join("\n\n"),
    );
    expect(design.actions).toEqual([]);
  });

  it("shows every test's RED and GREEN evidence with run links on the build check, escaping table cells", () => {
    const build = byName(runs, "consort/build");
    expect(build.output.title).toBe("T2 (2 of 3): green");
    expect(build.output.summary).toContain(
      "| `T1` | `S1-AC1` | placing an order reserves stock | `test/orders.test.ts` | reviewed | ✅ valid on [`1111111`](https://github.com/acme/shop/actions/runs/901): fails by assertion: expected 1 reservation, got 0 | ✅ valid on [`2222222`](https://github.com/acme/shop/actions/runs/902): T1 passes |",
    );
    expect(build.output.summary).toContain(
      "| `T2` | `S1-AC2` | an order over stock is refused \\| with 409 | `test/orders.test.ts` | red | ✅ valid on [`3333333`](https://github.com/acme/shop/actions/runs/903): fails by assertion | ⏳ running on [`c0ffee0`](https://github.com/acme/shop/actions/runs/904) |",
    );
    expect(build.output.summary).toContain(
      "| `T3` | `S2-AC1` | cancelling releases stock | `test/cancel.test.ts` | pending | — | — |",
    );
    expect(build.output.summary).toContain("> The database was rebuilt from the seed on a hosted runner");
  });

  it("neutralises Markdown and HTML an agent put in a test title", () => {
    const report = midBuildReport();
    report.tests[2]!.title = "cancels <!-- consort:sticky track=x --> and\n| breaks | the table";
    const summary = byName(renderCheckRuns(report), "consort/build").output.summary;
    expect(summary).toContain(
      "| `T3` | `S2-AC1` | cancels &lt;!-- consort:sticky track=x --> and \\| breaks \\| the table | `test/cancel.test.ts` | pending | — | — |",
    );
  });

  it("lists the test list on its gate check without evidence columns", () => {
    const summary = byName(runs, "consort/test-list").output.summary;
    expect(summary).toContain(
      "| Test | AC | Title | File |\n| --- | --- | --- | --- |\n| `T1` | `S1-AC1` | placing an order reserves stock | `test/orders.test.ts` |",
    );
    expect(summary).toContain("[`bbbbbbb`](https://github.com/acme/shop/commit/" + "b".repeat(40) + ") | `7e57115` |");
  });

  it("puts the caller's schema diff on consort/schema", () => {
    const schema = byName(runs, "consort/schema");
    expect(schema.output.title).toBe("Schema diff ready, nothing breaks");
    expect(schema.output.summary).toContain(
      "### Schema diff against the parent\n\n| Table | Change |\n| --- | --- |\n| `orders` | added column `reserved_qty integer not null default 0` |",
    );
  });
});

describe("conclusions show the decided state and fail closed", () => {
  it("an approval at a hash that is no longer current fails the gate with the reason", () => {
    const report = midBuildReport();
    report.checks["consort/design"] = check(
      "failure",
      "Approval is for other files",
      "The approval at 5d1e6a7 does not match the current frozen hash fffffff: approve again at the current commit.",
    );
    const run = byName(renderCheckRuns(report), "consort/design");
    expect(outcomeOf(run)).toBe("failure");
    expect(run.output.title).toBe("Approval is for other files");
    expect(run.output.summary).toContain(
      "The approval at 5d1e6a7 does not match the current frozen hash fffffff: approve again at the current commit.",
    );
  });

  it("a check waiting for something is in progress, never a passing conclusion, and failure and success are conclusions", () => {
    const statuses: Array<[CheckView["status"], string]> = [
      ["pending", "in_progress"],
      ["failure", "failure"],
      ["success", "success"],
    ];
    for (const name of TRACK_CHECKS) {
      for (const [status, outcome] of statuses) {
        const report = midBuildReport();
        report.checks[name] = check(status, "t", "r");
        const run = byName(renderCheckRuns(report), name);
        expect([name, outcomeOf(run)]).toEqual([name, outcome]);
        expect(run.output.title).toBe("t");
      }
    }
  });

  it("a blocked build fails and offers the re-run and renegotiate buttons", () => {
    const report = midBuildReport();
    report.checks["consort/build"] = {
      ...check("failure", "Blocked at T2: a person must decide", "T2 failed GREEN 3 times (repair bound 3)."),
      actions: [CHECK_ACTIONS.rerunCycle, CHECK_ACTIONS.renegotiate],
    };
    const build = byName(renderCheckRuns(report), "consort/build");
    expect(outcomeOf(build)).toBe("failure");
    expect(build.actions).toEqual([CHECK_ACTIONS.rerunCycle, CHECK_ACTIONS.renegotiate]);
  });

  it("a discipline violation fails consort/discipline with the commit, rule and path", () => {
    const report = midBuildReport();
    report.checks["consort/discipline"] = check(
      "failure",
      "Commit c0ffee0 refused: reset the branch to 1111111",
      "T1's frozen test gained `.skip`",
    );
    report.discipline = {
      violations: [
        { commit: HEAD, rule: "frozen-test", path: "test/orders.test.ts", message: "T1's frozen test gained `.skip`" },
      ],
    };
    const run = byName(renderCheckRuns(report), "consort/discipline");
    expect(outcomeOf(run)).toBe("failure");
    expect(run.output.title).toBe("Commit c0ffee0 refused: reset the branch to 1111111");
    expect(run.output.summary).toContain(
      "| [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001) | `frozen-test` | `test/orders.test.ts` | T1's frozen test gained `.skip` |",
    );
  });

  it("a schema change that breaks existing rows fails consort/schema", () => {
    const report = midBuildReport();
    report.schema = {
      state: "ready",
      diffMarkdown: "…",
      breaking: ["`orders.note` becomes NOT NULL but 1,204 rows hold NULL"],
    };
    const run = byName(renderCheckRuns(report), "consort/schema");
    expect([outcomeOf(run), run.output.title]).toEqual(["failure", "1 change(s) would break existing rows"]);
    expect(run.output.summary).toContain(
      "### Changes that break existing rows\n\n- `orders.note` becomes NOT NULL but 1,204 rows hold NULL",
    );
  });
});

describe("a tampered state file", () => {
  const view = {
    repository: "acme/shop",
    trackId: "feature-orders-1a2b3c4d",
    branch: "feature/orders",
    headSha: HEAD,
    path: "tracks/feature-orders-1a2b3c4d.json",
    problems: ["signature does not match the content (edited outside the app, or sealed with another key)"],
    stateCommit: "9".repeat(40),
  };

  it("fails every check, saying so, with the re-seal button", () => {
    const runs = renderTamperedCheckRuns(view);
    expect(runs.map((r) => [r.name, outcomeOf(r), r.output.title])).toEqual(
      CHECK_NAMES.map((n) => [n, "failure", "State file is tampered"]),
    );
    for (const run of runs) {
      expect(run.actions).toEqual([
        { label: "Re-seal state", description: "Admins: restore the last sealed state", identifier: "reseal" },
      ]);
      expect(run.output.summary).toContain(
        "- signature does not match the content (edited outside the app, or sealed with another key)",
      );
      expect(run.output.summary).toContain(
        "`consort state reseal feature-orders-1a2b3c4d`: that restores the newest version this app sealed (moving the branch back past any commit the app did not write), shows what it dropped, and the track goes on from there.",
      );
    }
  });

  it("says so in the sticky comment too", () => {
    const body = renderTamperedComment(view);
    expect(body.split("\n")[0]).toBe("<!-- consort:sticky track=feature-orders-1a2b3c4d -->");
    expect(body).toContain("## Consort: track `feature-orders-1a2b3c4d` is stopped");
    expect(body).toContain("(state commit `9999999`) failed verification");
  });

  it("every button fits GitHub's limits (label 20, description 40, identifier 20)", () => {
    for (const action of Object.values(CHECK_ACTIONS)) expect(CheckAction.safeParse(action).success).toBe(true);
    expect(
      CheckAction.safeParse({ label: "Re-seal the state file now", description: "x", identifier: "reseal" }).success,
    ).toBe(false);
  });
});

describe("GitHub's size limits", () => {
  it("cuts an oversized summary at a line with a note, leaving room for the writer's marker", () => {
    const report = midBuildReport();
    report.schema.diffMarkdown = Array.from(
      { length: 3000 },
      (_, i) => `| \`table_${i}\` | added column \`c_${i}\` ${"x".repeat(20)} |`,
    ).join("\n");
    const schema = byName(renderCheckRuns(report), "consort/schema");
    expect(schema.output.summary.length).toBeLessThanOrEqual(OUTPUT_LIMIT - 100);
    expect(schema.output.summary).toMatch(
      /\| added column `c_\d+` x{20} \|\n\n> \*\*Truncated:\*\* \d+ bytes did not fit GitHub's limit of 65435\. The full record is in `tracks\/feature-orders-1a2b3c4d\.json` on the `consort\/state` branch\.$/,
    );
    const comment = renderComment(report);
    expect(comment.length).toBeLessThanOrEqual(COMMENT_LIMIT);
    expect(comment).toMatch(/> \*\*Truncated:\*\*/);
  });
});

describe("the sticky PR comment", () => {
  const body = renderComment(midBuildReport());

  it("starts with the hidden marker and shows the lane: done, now, next", () => {
    expect(body.split("\n")[0]).toBe("<!-- consort:sticky track=feature-orders-1a2b3c4d -->");
    expect(body).toContain(
      "### Lane\n\n✅ Stories → ✅ Spec → ✅ Architecture → ✅ DB design → ✅ Design gate → ✅ Test list → ✅ Test-list gate → ✅ T1 → ▶️ **T2 green** (driver makes T2 pass) → T2 review → Deploy preview → Deploy gate → Promote gate",
    );
  });

  it("shows the next action, the gates, the tests with evidence, frozen hashes, approvals and the schema diff", () => {
    expect(body).toContain(
      "### Next action\n\n**driver**: Make T2 pass: change only app code and migrations.\n\n- Commit with the trailer `Consort-Role: driver`\n- T2 lives in test/orders.test.ts",
    );
    expect(body).toContain(
      "| Design gate | ✅ Approved by @lee at 5d1e6a7 |\n| Test-list gate | ✅ Approved by @kim at 7e57115 |\n| Deploy gate | ⏳ Not reached yet |",
    );
    expect(body).toContain("| `T2` | `S1-AC2` | an order over stock is refused \\| with 409 |");
    expect(body).toContain("<details><summary>Design gate: manifest <code>5d1e6a7</code></summary>");
    expect(body).toContain(
      `| Test-list gate | @kim | 2026-11-30T05:40:00Z | [\`bbbbbbb\`](https://github.com/acme/shop/commit/${"b".repeat(40)}) | \`7e57115\` |`,
    );
    expect(body).toContain("<details><summary>Schema diff</summary>\n\n| Table | Change |");
  });
});

/**
 * Each check run and the comment whole, for two tracks as unlike as the renderer can be given: every
 * heading, table, mark, note and button is what a person (and branch protection) reads.
 */
describe("the whole rendered text", () => {
  const midBuildRuns: RenderedCheckRun[] = [
    {
      name: "consort/design",
      status: "completed",
      conclusion: "success",
      output: {
        title: "Approved by @lee at 5d1e6a7",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "### Design gate",
          "",
          "Approved at the current frozen hash.",
          "",
          "### Frozen files",
          "",
          "Manifest `5d1e6a7c00000000000000000000000000000000000000000000000000000000` frozen at [`aaaaaaa`](https://github.com/acme/shop/commit/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa).",
          "",
          "| File | sha256 |",
          "| --- | --- |",
          "| `.consort/spec.json` | `1111111111111111111111111111111111111111111111111111111111111111` |",
          "| `.consort/architecture.json` | `2222222222222222222222222222222222222222222222222222222222222222` |",
          "| `.consort/db-design.json` | `3333333333333333333333333333333333333333333333333333333333333333` |",
          "",
          "### Approvals",
          "",
          "| Who | When | Commit | Frozen hash |",
          "| --- | --- | --- | --- |",
          "| [@lee](https://github.com/acme/shop/pull/7#pullrequestreview-11) | 2026-11-30T05:20:00Z | [`aaaaaaa`](https://github.com/acme/shop/commit/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa) | `5d1e6a7` |",
        ].join("\n"),
      },
      actions: [],
    },
    {
      name: "consort/test-list",
      status: "completed",
      conclusion: "success",
      output: {
        title: "Approved by @kim at 7e57115",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "### Test-list gate",
          "",
          "Approved at the current frozen hash.",
          "",
          "### Frozen files",
          "",
          "Manifest `7e57115e11111111111111111111111111111111111111111111111111111111` frozen at [`bbbbbbb`](https://github.com/acme/shop/commit/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb).",
          "",
          "| File | sha256 |",
          "| --- | --- |",
          "| `.consort/test-list.json` | `4444444444444444444444444444444444444444444444444444444444444444` |",
          "",
          "### Test list",
          "",
          "| Test | AC | Title | File |",
          "| --- | --- | --- | --- |",
          "| `T1` | `S1-AC1` | placing an order reserves stock | `test/orders.test.ts` |",
          "| `T2` | `S1-AC2` | an order over stock is refused \\| with 409 | `test/orders.test.ts` |",
          "| `T3` | `S2-AC1` | cancelling releases stock | `test/cancel.test.ts` |",
          "",
          "### Approvals",
          "",
          "| Who | When | Commit | Frozen hash |",
          "| --- | --- | --- | --- |",
          "| @kim | 2026-11-30T05:40:00Z | [`bbbbbbb`](https://github.com/acme/shop/commit/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb) | `7e57115` |",
        ].join("\n"),
      },
      actions: [],
    },
    {
      name: "consort/build",
      status: "in_progress",
      output: {
        title: "T2 (2 of 3): green",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "### Build",
          "",
          "T2 GREEN is being verified in run 904.",
          "",
          "> The database was rebuilt from the seed on a hosted runner: weaker evidence than a persistent branch.",
          "",
          "### Tests",
          "",
          "| Test | AC | Title | File | Status | RED | GREEN |",
          "| --- | --- | --- | --- | --- | --- | --- |",
          "| `T1` | `S1-AC1` | placing an order reserves stock | `test/orders.test.ts` | reviewed | ✅ valid on [`1111111`](https://github.com/acme/shop/actions/runs/901): fails by assertion: expected 1 reservation, got 0 | ✅ valid on [`2222222`](https://github.com/acme/shop/actions/runs/902): T1 passes |",
          "| `T2` | `S1-AC2` | an order over stock is refused \\| with 409 | `test/orders.test.ts` | red | ✅ valid on [`3333333`](https://github.com/acme/shop/actions/runs/903): fails by assertion | ⏳ running on [`c0ffee0`](https://github.com/acme/shop/actions/runs/904) |",
          "| `T3` | `S2-AC1` | cancelling releases stock | `test/cancel.test.ts` | pending | — | — |",
        ].join("\n"),
      },
      actions: [],
    },
    {
      name: "consort/deploy",
      status: "in_progress",
      output: {
        title: "Not reached yet",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "### Deploy gate",
          "",
          "The track has not reached the deploy gate yet.",
          "",
          "### Deploy evidence",
          "",
          "_No release verified yet._",
          "",
          "### Approvals",
          "",
          "_No approvals yet._",
        ].join("\n"),
      },
      actions: [],
      placeholder: true,
    },
    {
      name: "consort/promote",
      status: "in_progress",
      output: {
        title: "Not reached yet",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "### Promote gate",
          "",
          "The track has not reached the promote gate yet.",
          "",
          "### Approvals",
          "",
          "_No approvals yet._",
        ].join("\n"),
      },
      actions: [],
      placeholder: true,
    },
    {
      name: "consort/discipline",
      status: "completed",
      conclusion: "success",
      output: {
        title: "Every commit was the step in turn, by its role, on its own paths",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "_No violations._",
        ].join("\n"),
      },
      actions: [],
    },
    {
      name: "consort/schema",
      status: "completed",
      conclusion: "success",
      output: {
        title: "Schema diff ready, nothing breaks",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "### Schema diff against the parent",
          "",
          "| Table | Change |",
          "| --- | --- |",
          "| `orders` | added column `reserved_qty integer not null default 0` |",
        ].join("\n"),
      },
      actions: [],
    },
  ];
  const midBuildComment = [
    "<!-- consort:sticky track=feature-orders-1a2b3c4d -->",
    "",
    "## Consort: track `feature-orders-1a2b3c4d`",
    "",
    "At [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001) on `feature/orders`.",
    "",
    "> The database was rebuilt from the seed on a hosted runner: weaker evidence than a persistent branch.",
    "",
    "### Lane",
    "",
    "✅ Stories → ✅ Spec → ✅ Architecture → ✅ DB design → ✅ Design gate → ✅ Test list → ✅ Test-list gate → ✅ T1 → ▶️ **T2 green** (driver makes T2 pass) → T2 review → Deploy preview → Deploy gate → Promote gate",
    "",
    "### Next action",
    "",
    "**driver**: Make T2 pass: change only app code and migrations.",
    "",
    "- Commit with the trailer `Consort-Role: driver`",
    "- T2 lives in test/orders.test.ts",
    "",
    "### Gates",
    "",
    "| Gate | State |",
    "| --- | --- |",
    "| Design gate | ✅ Approved by @lee at 5d1e6a7 |",
    "| Test-list gate | ✅ Approved by @kim at 7e57115 |",
    "| Deploy gate | ⏳ Not reached yet |",
    "| Promote gate | ⏳ Not reached yet |",
    "",
    "### Tests",
    "",
    "| Test | AC | Title | File | Status | RED | GREEN |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    "| `T1` | `S1-AC1` | placing an order reserves stock | `test/orders.test.ts` | reviewed | ✅ valid on [`1111111`](https://github.com/acme/shop/actions/runs/901): fails by assertion: expected 1 reservation, got 0 | ✅ valid on [`2222222`](https://github.com/acme/shop/actions/runs/902): T1 passes |",
    "| `T2` | `S1-AC2` | an order over stock is refused \\| with 409 | `test/orders.test.ts` | red | ✅ valid on [`3333333`](https://github.com/acme/shop/actions/runs/903): fails by assertion | ⏳ running on [`c0ffee0`](https://github.com/acme/shop/actions/runs/904) |",
    "| `T3` | `S2-AC1` | cancelling releases stock | `test/cancel.test.ts` | pending | — | — |",
    "",
    "### Frozen hashes",
    "",
    "<details><summary>Design gate: manifest <code>5d1e6a7</code></summary>",
    "",
    "Manifest `5d1e6a7c00000000000000000000000000000000000000000000000000000000` frozen at [`aaaaaaa`](https://github.com/acme/shop/commit/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa).",
    "",
    "| File | sha256 |",
    "| --- | --- |",
    "| `.consort/spec.json` | `1111111111111111111111111111111111111111111111111111111111111111` |",
    "| `.consort/architecture.json` | `2222222222222222222222222222222222222222222222222222222222222222` |",
    "| `.consort/db-design.json` | `3333333333333333333333333333333333333333333333333333333333333333` |",
    "",
    "</details>",
    "",
    "<details><summary>Test-list gate: manifest <code>7e57115</code></summary>",
    "",
    "Manifest `7e57115e11111111111111111111111111111111111111111111111111111111` frozen at [`bbbbbbb`](https://github.com/acme/shop/commit/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb).",
    "",
    "| File | sha256 |",
    "| --- | --- |",
    "| `.consort/test-list.json` | `4444444444444444444444444444444444444444444444444444444444444444` |",
    "",
    "</details>",
    "",
    "### Approvals",
    "",
    "| Gate | Who | When | Commit | Frozen hash |",
    "| --- | --- | --- | --- | --- |",
    "| Design gate | [@lee](https://github.com/acme/shop/pull/7#pullrequestreview-11) | 2026-11-30T05:20:00Z | [`aaaaaaa`](https://github.com/acme/shop/commit/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa) | `5d1e6a7` |",
    "| Test-list gate | @kim | 2026-11-30T05:40:00Z | [`bbbbbbb`](https://github.com/acme/shop/commit/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb) | `7e57115` |",
    "",
    "### Schema",
    "",
    "<details><summary>Schema diff</summary>",
    "",
    "| Table | Change |",
    "| --- | --- |",
    "| `orders` | added column `reserved_qty integer not null default 0` |",
    "",
    "</details>",
  ].join("\n");
  const releaseRuns: RenderedCheckRun[] = [
    {
      name: "consort/design",
      status: "completed",
      conclusion: "failure",
      output: {
        title: "Approval is for other files",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://ghe.example/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "### Design gate",
          "",
          "Approve again.",
          "",
          "At the current commit.",
          "",
          "### Frozen files",
          "",
          "_Nothing frozen yet._",
          "",
          "### Approvals",
          "",
          "_No approvals yet._",
          "",
          "> @ann is not an approver.",
          ">",
          "> @bob approved another commit.",
        ].join("\n"),
      },
      actions: [],
    },
    {
      name: "consort/test-list",
      status: "in_progress",
      output: {
        title: "Waiting for approval",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://ghe.example/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "### Test-list gate",
          "",
          "",
          "",
          "### Frozen files",
          "",
          "_Nothing frozen yet._",
          "",
          "### Test list",
          "",
          "| Test | AC | Title | File |",
          "| --- | --- | --- | --- |",
          "| `T1` | — | reserves stock | `test/orders.test.ts` |",
          "",
          "### Approvals",
          "",
          "_No approvals yet._",
        ].join("\n"),
      },
      actions: [],
    },
    {
      name: "consort/build",
      status: "completed",
      conclusion: "failure",
      output: {
        title: `${"B".repeat(254)}…`,
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://ghe.example/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "### Build",
          "",
          "Blocked.",
          "",
          "### Tests",
          "",
          "| Test | AC | Title | File | Status | RED | GREEN |",
          "| --- | --- | --- | --- | --- | --- | --- |",
          "| `T1` | — | reserves stock | `test/orders.test.ts` | green | ⚠️ error on `6666666`: runner crashed | ❌ invalid on `5555555` |",
        ].join("\n"),
      },
      actions: [CHECK_ACTIONS.rerunCycle, CHECK_ACTIONS.renegotiate, CHECK_ACTIONS.reseal],
    },
    {
      name: "consort/deploy",
      status: "in_progress",
      output: {
        title: "Waiting for approval",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://ghe.example/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "### Deploy gate",
          "",
          "Approve the release.",
          "",
          "### Deploy evidence",
          "",
          "Release verified (preview https://preview.example/orders, database branch `br-orders`, [run](https://ghe.example/acme/shop/actions/runs/950))",
          "",
          "> Ran unconfined.",
          ">",
          "> On a hosted runner.",
          "",
          "| Check | Result | Detail |",
          "| --- | --- | --- |",
          "| smoke \\| home | ✅ |  |",
          "| migrations | ❌ | replay failed |",
          "",
          "### Approvals",
          "",
          "_No approvals yet._",
        ].join("\n"),
      },
      actions: [],
    },
    {
      name: "consort/promote",
      status: "completed",
      conclusion: "success",
      output: {
        title: "Promoted",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://ghe.example/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "### Promote gate",
          "",
          "",
          "",
          "### Approvals",
          "",
          "_No approvals yet._",
        ].join("\n"),
      },
      actions: [],
    },
    {
      name: "consort/discipline",
      status: "completed",
      conclusion: "failure",
      output: {
        title: "Commit c0ffee0 refused",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://ghe.example/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "The state cannot be read.",
          "",
          "Try again.",
        ].join("\n"),
      },
      actions: [],
    },
    {
      name: "consort/schema",
      status: "completed",
      conclusion: "failure",
      output: {
        title: "Schema check failed",
        summary: [
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://ghe.example/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
          "",
          "The substrate could not compare the schemas.",
          "",
          "Database facts from the persistent branch.",
        ].join("\n"),
      },
      actions: [],
    },
  ];
  const releaseComment = [
    "<!-- consort:sticky track=feature-orders-1a2b3c4d -->",
    "",
    "## Consort: track `feature-orders-1a2b3c4d`",
    "",
    "At [`c0ffee0`](https://ghe.example/acme/shop/commit/c0ffee0000000000000000000000000000000001) on `feature/orders`.",
    "",
    "### Lane",
    "",
    "✅ Stories → ▶️ **Deploy gate**",
    "",
    "### Next action",
    "",
    "**person**: Approve the deploy gate.",
    "",
    "### Gates",
    "",
    "| Gate | State |",
    "| --- | --- |",
    "| Design gate | ❌ Approval is for other files |",
    "| Test-list gate | ⏳ Waiting for approval |",
    "| Deploy gate | ⏳ Waiting for approval |",
    "| Promote gate | ✅ Promoted |",
    "",
    "### Tests",
    "",
    "| Test | AC | Title | File | Status | RED | GREEN |",
    "| --- | --- | --- | --- | --- | --- | --- |",
    "| `T1` | — | reserves stock | `test/orders.test.ts` | green | ⚠️ error on `6666666`: runner crashed | ❌ invalid on `5555555` |",
    "",
    "### Frozen hashes",
    "",
    "_Nothing frozen yet._",
    "",
    "### Approvals",
    "",
    "_No approvals yet._",
    "",
    "### Schema",
    "",
    "_No schema diff yet._",
    "",
    "### Where the facts come from",
    "",
    "Database facts from the persistent branch.",
  ].join("\n");

  it("of a track mid-build", () => {
    expect(renderCheckRuns(midBuildReport())).toEqual(midBuildRuns);
    expect(renderComment(midBuildReport())).toBe(midBuildComment);
  });

  it("of a track at its deploy gate: failures marked as failures, nothing frozen, evidence and refusals shown", () => {
    expect(renderCheckRuns(releaseReport())).toEqual(releaseRuns);
    expect(renderComment(releaseReport())).toBe(releaseComment);
  });

  it("of a tampered state file", () => {
    const [first] = renderTamperedCheckRuns({
      repository: "acme/shop",
      trackId: "feature-orders-1a2b3c4d",
      branch: "feature/orders",
      headSha: HEAD,
      path: "tracks/feature-orders-1a2b3c4d.json",
      problems: ["signature does not match", "schema: missing field"],
      stateCommit: "9".repeat(40),
    });
    expect(first!.output.summary).toBe(
      [
        "The state file `tracks/feature-orders-1a2b3c4d.json` of track `feature-orders-1a2b3c4d` on `consort/state` (state commit `9999999`) failed verification, so nothing advances and every Consort check fails.",
        "**What failed**\n\n- signature does not match\n- schema: missing field",
        "Only the app writes that branch. A repository admin re-seals the track with the **Re-seal state** button or `consort state reseal feature-orders-1a2b3c4d`: that restores the newest version this app sealed (moving the branch back past any commit the app did not write), shows what it dropped, and the track goes on from there. Nothing else brings it back: an edited file is never signed as it stands.",
      ].join("\n\n"),
    );
  });
});

describe("consort/schema in each state of the comparison", () => {
  const schemaRun = (schema: ReturnType<typeof midBuildReport>["schema"]) => {
    const report = midBuildReport();
    report.schema = schema;
    return byName(renderCheckRuns(report), "consort/schema");
  };
  const header =
    "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001).";

  it("not computed yet: in progress, and only holding a place", () => {
    expect(schemaRun({ state: "pending" })).toEqual({
      name: "consort/schema",
      status: "in_progress",
      output: { title: "Schema diff not computed yet", summary: header },
      actions: [],
      placeholder: true,
    });
  });
  it("failed: a failure with its reason, whatever diff it holds", () => {
    expect(schemaRun({ state: "failed", reason: "No database.", diffMarkdown: "| a |" })).toEqual({
      name: "consort/schema",
      status: "completed",
      conclusion: "failure",
      output: {
        title: "Schema check failed",
        summary: `${header}\n\nNo database.\n\n### Schema diff against the parent\n\n| a |`,
      },
      actions: [],
    });
  });
  it("ready with no diff: a success that says no schema changed", () => {
    expect(schemaRun({ state: "ready" })).toEqual({
      name: "consort/schema",
      status: "completed",
      conclusion: "success",
      output: { title: "No schema change", summary: header },
      actions: [],
    });
  });
  it("breaking changes listed one a line, each failing the check", () => {
    const run = schemaRun({ state: "ready", breaking: ["`a` is dropped", "`b` becomes NOT NULL"] });
    expect([outcomeOf(run), run.output.title, run.output.summary]).toEqual([
      "failure",
      "2 change(s) would break existing rows",
      `${header}\n\n### Changes that break existing rows\n\n- \`a\` is dropped\n- \`b\` becomes NOT NULL`,
    ]);
  });
});

describe("consort/discipline", () => {
  it("a pending discipline check says so and is written, not only holding a place", () => {
    const report = midBuildReport();
    report.checks["consort/discipline"] = check("pending", "Reading the push", "Commits are being read.");
    const run = byName(renderCheckRuns(report), "consort/discipline");
    expect(run).toEqual({
      name: "consort/discipline",
      status: "in_progress",
      output: {
        title: "Reading the push",
        summary:
          "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001).\n\nCommits are being read.",
      },
      actions: [],
    });
  });
  it("violations are a table, with a dash where no path applies, even beside the check's details", () => {
    const report = midBuildReport();
    report.checks["consort/discipline"] = check("failure", "Refused", "See the table.");
    report.discipline = { violations: [{ commit: HEAD, rule: "trailer", message: "no trailer" }] };
    expect(byName(renderCheckRuns(report), "consort/discipline").output.summary).toBe(
      [
        "Track `feature-orders-1a2b3c4d` on `feature/orders` at [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001).",
        "| Commit | Rule | Path | What happened |\n| --- | --- | --- | --- |\n| [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001) | `trailer` | — | no trailer |",
      ].join("\n\n"),
    );
  });
});

describe("the comment without notes or steps to list", () => {
  it("shows a next action without details, and an ended track's", () => {
    const report = midBuildReport();
    report.nextAction = { role: "person", summary: "Approve." };
    delete report.notes;
    const body = renderComment(report);
    expect(body).toContain("### Next action\n\n**person**: Approve.\n\n### Gates");
    expect(body).toContain(
      "At [`c0ffee0`](https://github.com/acme/shop/commit/c0ffee0000000000000000000000000000000001) on `feature/orders`.\n\n### Lane",
    );
    delete report.nextAction;
    expect(renderComment(report)).toContain("### Next action\n\n_Nothing to do: the track has ended._\n\n### Gates");
  });
});

describe("what is shown where there is nothing yet", () => {
  it("a track with no test list, and no step in progress", () => {
    const report = midBuildReport();
    report.tests = [];
    report.lane = { done: [{ id: "stories", label: "Stories" }], now: null, next: [{ id: "spec", label: "Spec" }] };
    expect(byName(renderCheckRuns(report), "consort/test-list").output.summary).toContain(
      "### Test list\n\n_The test list is not written yet._\n\n### Approvals",
    );
    expect(renderComment(report)).toContain("### Lane\n\n✅ Stories → Spec\n\n### Next action");
  });
  it("a tampered state file with no state commit to name", () => {
    const [first] = renderTamperedCheckRuns({
      repository: "acme/shop",
      trackId: "t1",
      branch: "feature/orders",
      headSha: HEAD,
      path: "tracks/t1.json",
      problems: ["unreadable"],
    });
    expect(first!.output.summary.split("\n\n")[0]).toBe(
      "The state file `tracks/t1.json` of track `t1` on `consort/state` failed verification, so nothing advances and every Consort check fails.",
    );
  });
  it("failing every check for configuration Consort cannot trust: no buttons unless given", () => {
    expect(
      renderFailingCheckRuns("Bad configuration", "Fix it.", "t1").map((r) => [r.name, outcomeOf(r), r.actions]),
    ).toEqual(CHECK_NAMES.map((name) => [name, "failure", []]));
  });
});

describe("lists of several, and evidence with only what is known", () => {
  it("joins the build's details and notes, and the comment's notes, one by one", () => {
    const report = midBuildReport();
    report.checks["consort/build"] = check("pending", "t", "First.", "Second.");
    report.notes = ["One.", "Two."];
    expect(byName(renderCheckRuns(report), "consort/build").output.summary).toContain(
      "### Build\n\nFirst.\n\nSecond.\n\n> One.\n>\n> Two.\n\n### Tests",
    );
    expect(renderComment(report)).toContain("on `feature/orders`.\n\n> One.\n>\n> Two.\n\n### Lane");
  });
  it("a release with no preview, run, notes or checks, and a frozen manifest with no files", () => {
    const report = releaseReport();
    report.deploy = { summary: "Release verified", databaseBranch: "br-orders", checks: [] };
    report.frozen = [{ gate: "design", manifestHash: "f".repeat(64), commit: "a".repeat(40), files: [] }];
    const runs = renderCheckRuns(report);
    expect(byName(runs, "consort/deploy").output.summary).toContain(
      "### Deploy evidence\n\nRelease verified (database branch `br-orders`)\n\n_No verification ran._\n\n### Approvals",
    );
    expect(byName(runs, "consort/design").output.summary).toContain(
      `frozen at [\`aaaaaaa\`](https://ghe.example/acme/shop/commit/${"a".repeat(40)}).\n\n_No files._`,
    );
  });
  it("a title of GitHub's limit exactly is kept whole", () => {
    const report = midBuildReport();
    report.checks["consort/build"] = check("pending", "t".repeat(255));
    expect(byName(renderCheckRuns(report), "consort/build").output.title).toBe("t".repeat(255));
  });
});
