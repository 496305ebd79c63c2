import { describe, expect, it } from "vitest";
import { RunCycleOutput } from "../../src/tools/run-cycle.js";
import { DbBranchOutput } from "../../src/tools/db-branch.js";
import { call, errorText } from "./mcp-client.js";
import { toolsOnCheckout } from "./fixture.js";

describe("run_cycle: real cycles of examples/stockflow on the embedded Postgres", () => {
  // examples/stockflow with T7's failing test written and S2 not implemented yet.
  const tools = toolsOnCheckout({ stage: "t7-red" });

  it("verifies the RED of T7: it fails by an assertion while T1-T6 still pass, and drops its branch", async () => {
    const progress: string[] = [];
    const result = await call(tools.client, "run_cycle", { step: "red", tests: ["T7"] }, 120_000, (message) =>
      progress.push(message),
    );
    expect(result.isError).toBeFalsy();
    const output = RunCycleOutput.parse(result.structuredContent);
    expect(output.reasons).toEqual([]);
    expect(output.verdict).toBe("verified");
    expect(output.tests.find((test) => test.id === "T7")).toMatchObject({ role: "turn", outcome: "failed-assertion" });
    expect(output.tests.filter((test) => test.role === "earlier").map((test) => [test.id, test.outcome])).toEqual(
      ["T1", "T2", "T3", "T4", "T5", "T6"].map((id) => [id, "passed"]),
    );
    expect(output.database).toMatchObject({ provider: "postgres", dropped: true });
    expect(output.uncommittedChanges).toEqual([]);
    // It says plainly what it does not check of the commit, which the app does on push.
    expect(output.note).toContain(
      "does not apply the app's role and path rules to the commit under test (its Consort-Role trailer, whose turn it is, which paths that role may change now",
    );
    expect(output.plan).toEqual({
      from: "arguments",
      trackId: null,
      testsInTurn: ["T7"],
      earlierGreen: ["T1", "T2", "T3", "T4", "T5", "T6"],
      frozenTestFiles: [],
    });

    // The client heard each slow step as it started (MCP progress notifications).
    expect(progress).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^forking /),
        expect.stringMatching(/^migrating: /),
        expect.stringMatching(/^testing: /),
        expect.stringMatching(/^dropping /),
      ]),
    );

    const { branches } = DbBranchOutput.parse(
      (await call(tools.client, "db_branch", { action: "list" })).structuredContent,
    );
    expect(branches?.map((branch) => branch.name)).not.toContain(output.database.cycleBranch);
  }, 120_000);

  it("answers a test id that is not in the test list with a tool error", async () => {
    const result = await call(tools.client, "run_cycle", { step: "red", tests: ["T99"] });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toContain("T99 is not in the test list");
  });

  it("answers a red step without tests with a tool error saying where the ids come from", async () => {
    const result = await call(tools.client, "run_cycle", { step: "red" });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toMatch(
      /^INVALID_CYCLE: A red cycle needs the test ids in turn\.\nWhat to do: Pass tests/,
    );
  });
});
