import { execFileSync, spawn, spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { benchRuns, measure, printJson, printTable, wantsJson } from "./lib.js";

/**
 * `npm run bench:cli`: what a person or an agent waits for before the CLI answers: `consort
 * --version` from the built lib/, and the MCP server's answer to `initialize` (and to the
 * `tools/list` that follows, which waits for the tools to load), each a fresh process, against
 * a bare `node -e 0` started the same way. The same --version run from src/ through tsx (what
 * every call cost before lib/) is the row the built one is compared with.
 */

const RUNS = benchRuns(10);
const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const bin = resolve(root, "bin/consort.js");
execFileSync(process.execPath, [resolve(root, "scripts/build-lib.mjs"), "--if-stale"], { stdio: "inherit" });

function run(args: string[]): void {
  const result = spawnSync(process.execPath, args, { cwd: root, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${result.stderr}`);
  if (result.stderr !== "") throw new Error(`node ${args.join(" ")} wrote to stderr: ${result.stderr}`);
}

const rpc = (id: number, method: string, params: object) =>
  `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;

/** Spawn `consort mcp`, send `initialize` (and with `list`, then `tools/list`), resolve on the last answer. */
function mcpSession(list: boolean): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, "mcp", "-C", root], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    const awaited = list ? 2 : 1;
    let out = "";
    child.on("error", fail);
    child.on("exit", (code) => fail(new Error(`consort mcp exited (${code}) before answering: ${out}`)));
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (!out.includes(`"id":${awaited}`)) return;
      if (!out.includes('"tools":[') && list) return fail(new Error(`tools/list gave no tools: ${out}`));
      child.removeAllListeners("exit");
      child.kill();
      done();
    });
    child.stdin.write(
      rpc(1, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      }),
    );
    if (list) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      child.stdin.write(rpc(2, "tools/list", {}));
    }
  });
}

const rows = [
  await measure("node -e 0", () => run(["-e", "0"]), { runs: RUNS }),
  await measure("consort --version (lib/)", () => run([bin, "--version"]), { runs: RUNS }),
  await measure(
    "consort --version (src/ through tsx)",
    () => run(["--import", "tsx", resolve(root, "src/cli/main.ts"), "--version"]),
    { runs: Math.min(RUNS, 5) },
  ),
  await measure("consort mcp: initialize answered", () => mcpSession(false), { runs: RUNS }),
  await measure("consort mcp: tools listed", () => mcpSession(true), { runs: RUNS }),
];

const by = (name: string) => rows.find((row) => row.name === name)!;
if (!wantsJson()) printTable(`CLI start-up, fresh process each, ${RUNS} runs`, rows, { baseline: "node -e 0" });
printJson({
  cli_version_ms: Number(by("consort --version (lib/)").median.toFixed(1)),
  mcp_initialize_ms: Number(by("consort mcp: initialize answered").median.toFixed(1)),
  mcp_tools_list_ms: Number(by("consort mcp: tools listed").median.toFixed(1)),
  cli_version_tsx_ms: Number(by("consort --version (src/ through tsx)").median.toFixed(1)),
  node_baseline_ms: Number(by("node -e 0").median.toFixed(1)),
});
