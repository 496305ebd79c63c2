import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { readCheckoutConfig } from "../src/config/load.js";
import { createMcpServer } from "../src/mcp/server.js";
import { createTrack, nextAction, restoreSnapshot, transition, type TrackSnapshot } from "../src/orchestrator/index.js";
import { trackIdForBranch } from "../src/state/index.js";
import { consortTools, ToolContext } from "../src/tools/index.js";
import { localPushes } from "../src/tools/local-push.js";
import { benchRuns, measure, printJson, printTable, tailEntry, wantsJson } from "./lib.js";

/**
 * `npm run bench:tools`: what an agent waits for per tool call over MCP (in-memory transport, so
 * the number is our work, not a pipe's), against the bare engine call it wraps. The track is
 * StockFlow F1 driven through the real machine to RED for T1; state comes from a snapshot file.
 * Database tools are left out: their time is the provider's (see bench:branch, bench:cycle).
 */

const RUNS = benchRuns(30);
const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const checkout = mkdtempSync(join(tmpdir(), "consort-bench-tools-"));
cpSync(join(root, "examples/stockflow"), checkout, {
  recursive: true,
  filter: (src) => !/[/\\](node_modules|\.consort)$/.test(src),
});
symlinkSync(join(root, "node_modules"), join(checkout, "node_modules"), "dir");
const git = (...args: string[]) =>
  execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@consort.invalid", ...args], { cwd: checkout })
    .toString()
    .trim();
git("init", "-q", "-b", "main");
git("add", "-A");
git("commit", "-q", "-m", "StockFlow before F1's design");
git("checkout", "-q", "-b", "f1-record-stock");

const { config } = readCheckoutConfig(checkout);
const trackId = trackIdForBranch("f1-record-stock");
let at = Date.parse("2026-11-30T06:00:00Z");
const tick = () => new Date((at += 60_000)).toISOString();
let snapshot: TrackSnapshot = createTrack(
  {
    trackId,
    branch: "f1-record-stock",
    baseBranch: "main",
    head: git("rev-parse", "HEAD"),
    databaseBranch: "f1-record-stock",
    parentDatabaseBranch: "consort_root",
    at: tick(),
  },
  config,
).snapshot;

const design = (name: string) => readFileSync(join(root, "examples/stockflow/.consort", name), "utf8");
const step = async (role: string, file: string, text: string) => {
  execFileSync("mkdir", ["-p", join(checkout, ".consort")]);
  writeFileSync(join(checkout, file), text);
  git("add", file);
  git("commit", "-q", "-m", `${role} step\n\nConsort-Role: ${role}`);
  const pushed = await localPushes(checkout, snapshot, config, { at: tick(), defaultBranch: "main" });
  const refused = pushed.steps.find((step) => step.result.rejection)?.result.rejection;
  if (refused) throw new Error(`${role}: ${refused.reasons.join("; ")}`);
  snapshot = pushed.snapshot;
};
const approve = (gate: "design" | "test-list") => {
  snapshot = transition(
    snapshot,
    {
      type: "gate.approved",
      at: tick(),
      gate,
      manifestHash: snapshot.context.gates[gate].pendingHash!,
      approver: "lead",
      reviewId: 1,
      commit: snapshot.context.head,
    },
    config,
  ).snapshot;
};
const { nfrs: _nfrs, ...stories } = JSON.parse(design("spec.json")) as Record<string, unknown>;
await step("product-owner", ".consort/spec.json", JSON.stringify(stories, null, 2));
await step("spec-author", ".consort/spec.json", design("spec.json"));
await step("architect", ".consort/architecture.json", design("architecture.json"));
await step("dba", ".consort/db-design.json", design("db-design.json"));
approve("design");
await step("test-strategist", ".consort/test-list.json", design("test-list.json"));
approve("test-list");
if (snapshot.stage !== "red") throw new Error(`expected the track at red, it is at ${snapshot.stage}`);

const statePath = join(checkout, "..", `${trackId}-bench-snapshot.json`);
writeFileSync(statePath, JSON.stringify(snapshot));
const context = new ToolContext({
  repoPath: checkout,
  state: { kind: "file", path: statePath },
  createProvider: async () => {
    throw new Error("the benchmark calls no database tool");
  },
});
const server = createMcpServer(consortTools, context);
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
const client = new Client({ name: "bench", version: "1" });
await server.connect(serverSide);
await client.connect(clientSide);
await client.listTools();

const call =
  (name: string, args: Record<string, unknown> = {}) =>
  async () => {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  };
const rows = [
  await measure(
    "engine: nextAction (no I/O)",
    () => nextAction(restoreSnapshot(JSON.parse(readFileSync(statePath, "utf8"))), config),
    { runs: RUNS, warmup: 3 },
  ),
  await measure("mcp: next_action", call("next_action"), { runs: RUNS, warmup: 3 }),
  await measure("mcp: track_status", call("track_status"), { runs: RUNS, warmup: 3 }),
  await measure("mcp: validate_artifacts", call("validate_artifacts"), { runs: RUNS, warmup: 3 }),
  await measure("mcp: explain_rejection", call("explain_rejection"), { runs: RUNS, warmup: 3 }),
  await measure(
    "mcp: malformed call",
    async () => {
      const result = await client.callTool({ name: "db_branch", arguments: { action: "explode" } });
      if (!result.isError) throw new Error("a malformed call was accepted");
    },
    { runs: RUNS, warmup: 3 },
  ),
];
await client.close();
await server.close();
rmSync(checkout, { recursive: true, force: true });
rmSync(statePath, { force: true });

const by = (name: string) => rows.find((row) => row.name === name)!;
if (!wantsJson())
  printTable(`Tool calls over MCP (in-memory), ${RUNS} runs each`, rows, { baseline: "engine: nextAction (no I/O)" });
printJson({
  next_action_ms_median: by("mcp: next_action").median,
  ...tailEntry("next_action_ms", by("mcp: next_action")),
  track_status_ms_median: by("mcp: track_status").median,
  validate_artifacts_ms_median: by("mcp: validate_artifacts").median,
  explain_rejection_ms_median: by("mcp: explain_rejection").median,
  engine_next_action_ms_median: by("engine: nextAction (no I/O)").median,
});
