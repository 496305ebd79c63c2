import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolContext } from "../../src/tools/context.js";
import { callTool, defineTool, ToolError } from "../../src/tools/registry.js";

const context = new ToolContext({
  repoPath: process.cwd(),
  state: { kind: "none" },
  createProvider: async () => {
    throw new Error("not used by these tools");
  },
});

const echo = defineTool({
  name: "echo",
  title: "Echo",
  description: "Returns what it is given.",
  input: z.object({ text: z.string(), times: z.number().int().optional() }).strict(),
  output: z.object({ text: z.string() }),
  readOnly: true,
  idempotent: true,
  async run(input) {
    return { text: input.text.repeat(input.times ?? 1) };
  },
});

const refuses = defineTool({
  name: "refuses",
  title: "Refuses",
  description: "Always fails the way a handler reports a problem.",
  input: z.object({}),
  output: z.object({}),
  readOnly: true,
  idempotent: true,
  async run() {
    throw new ToolError("The track has no state yet.", "Push a commit with a Consort-Role trailer first.", "NO_STATE");
  },
});

const lies = defineTool({
  name: "lies",
  title: "Lies",
  description: "Returns something its output schema does not allow.",
  input: z.object({}),
  output: z.object({ count: z.number() }),
  readOnly: true,
  idempotent: true,
  async run() {
    return { count: "three" } as unknown as { count: number };
  },
});

const tools = [echo, refuses, lies];

describe("callTool", () => {
  it("runs a valid call and returns the handler's output", async () => {
    expect(await callTool(tools, "echo", { text: "ab", times: 2 }, context)).toEqual({
      ok: true,
      output: { text: "abab" },
    });
  });

  it("reads a null optional argument (OpenAI strict mode) as not given", async () => {
    expect(await callTool(tools, "echo", { text: "ab", times: null }, context)).toEqual({
      ok: true,
      output: { text: "ab" },
    });
  });

  it("reports a null required argument as missing", async () => {
    const outcome = await callTool(tools, "echo", { text: null }, context);
    expect(outcome).toMatchObject({ ok: false, error: { code: "INVALID_INPUT" } });
    expect(!outcome.ok && outcome.error.message).toContain("text:");
  });

  it("passes a handler's ToolError on with its code and hint", async () => {
    expect(await callTool(tools, "refuses", {}, context)).toEqual({
      ok: false,
      error: {
        code: "NO_STATE",
        message: "The track has no state yet.",
        hint: "Push a commit with a Consort-Role trailer first.",
      },
    });
  });

  it("never passes on a result that breaks the tool's own output schema", async () => {
    const outcome = await callTool(tools, "lies", {}, context);
    expect(outcome).toMatchObject({ ok: false, error: { code: "INTERNAL_ERROR" } });
    expect(!outcome.ok && outcome.error.message).toContain("count");
  });

  it("checks the checkout is there before a tool that reads it runs, and only then", async () => {
    let ran = 0;
    const reads = defineTool({
      name: "reads",
      title: "Reads",
      description: "Reads the checkout.",
      input: z.object({}),
      output: z.object({}),
      readOnly: true,
      idempotent: true,
      readsCheckout: true,
      async run() {
        ran += 1;
        return {};
      },
    });
    const nowhere = new ToolContext({
      repoPath: "/nonexistent/consort-checkout",
      state: { kind: "none" },
      createProvider: async () => {
        throw new Error("not used by these tools");
      },
    });
    expect(await callTool([reads, echo], "reads", {}, nowhere)).toEqual({
      ok: false,
      error: {
        code: "NO_CHECKOUT",
        message: "The repository path /nonexistent/consort-checkout does not exist or is not a folder.",
        hint: "Start the server with -C pointing at a local checkout.",
      },
    });
    expect(ran).toBe(0);
    expect(await callTool([reads, echo], "echo", { text: "a" }, nowhere)).toEqual({ ok: true, output: { text: "a" } });
    expect(await callTool([reads], "reads", {}, context)).toEqual({ ok: true, output: {} });
    expect(ran).toBe(1);
  });
});
