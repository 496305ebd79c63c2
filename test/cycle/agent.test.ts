import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { stringify } from "yaml";
import { ConsortConfig, ROLE_NAMES } from "../../src/config/consort-config.js";
import { runAgentAction } from "../../src/cycle/agent-action.js";
import { AGENT_RESULT_FILE, AgentRequest, AgentTurnResult } from "../../src/contracts/agent-turn.js";
import { runAgentTurn } from "../../src/cycle/agent-turn.js";
import { REPO_ROOT, git } from "./stockflow.js";

/** An agent turn in a real git checkout, the agent being a real shell command. */

let repo: string;
let roles: string;
beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), "consort-agent-repo-"));
  roles = await mkdtemp(join(tmpdir(), "consort-roles-"));
  await writeFile(join(roles, "driver.md"), "You are the Driver: make the failing test pass with the least code.\n");
  await git(repo, "init", "-q", "-b", "f1");
  await writeFile(join(repo, "README.md"), "stockflow\n");
  await git(repo, "add", "-A");
  await git(repo, "commit", "-q", "-m", "start");
});
afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
  await rm(roles, { recursive: true, force: true });
});

const agentConfig = (command: string) => ConsortConfig.parse({ agents: { enabled: true, command } });
const request = (over: Partial<AgentRequest> = {}) =>
  AgentRequest.parse({
    track: "f1",
    role: "driver",
    nextAction: { kind: "green", test: "T7" },
    allowedPaths: ["src/**", "migrations/**"],
    ...over,
  });

describe("an agent turn", () => {
  test("the agent gets its prompt, the NextAction and the allowed paths, and its change is committed with the Consort-Role trailer", async () => {
    const command =
      'mkdir -p src && { echo "$CONSORT_ROLE"; cat "$CONSORT_ROLE_PROMPT"; cat "$CONSORT_NEXT_ACTION"; echo "$CONSORT_ALLOWED_PATHS"; } > src/seen.txt';
    const result = await runAgentTurn(request(), { config: agentConfig(command), cwd: repo, rolesDir: roles });

    expect(result.reasons).toEqual([]);
    expect(result).toMatchObject({ verdict: "committed", files: ["src/seen.txt"], outside: [] });
    const seen = await readFile(join(repo, "src/seen.txt"), "utf8");
    expect(seen).toContain("driver\nYou are the Driver");
    expect(seen).toContain('"test": "T7"');
    expect(seen).toContain("src/**\nmigrations/**");
    expect(await git(repo, "rev-parse", "HEAD")).toBe(result.commit);
    expect(await git(repo, "log", "-1", "--format=%B")).toBe("consort(driver): green\n\nConsort-Role: driver");
    expect(await git(repo, "log", "-1", "--format=%(trailers:key=Consort-Role,valueonly)")).toBe("driver");
  });

  test("a change outside the allowed paths is refused and nothing is committed", async () => {
    const start = await git(repo, "rev-parse", "HEAD");
    const command = "mkdir -p src test && echo 'export {}' > src/a.ts && echo 'test.skip()' > test/a.test.ts";
    const result = await runAgentTurn(request(), { config: agentConfig(command), cwd: repo, rolesDir: roles });

    expect(result).toMatchObject({ verdict: "refused", commit: null, outside: ["test/a.test.ts"] });
    expect(result.reasons[0]).toContain("outside its allowed paths");
    expect(await git(repo, "rev-parse", "HEAD")).toBe(start);
  });

  test("an agent that commits by itself is refused: only Consort commits, after checking the paths", async () => {
    const command =
      "mkdir -p src && echo x > src/a.ts && git add -A && git -c user.name=a -c user.email=a@a commit -qm sneaky";
    const result = await runAgentTurn(request(), { config: agentConfig(command), cwd: repo, rolesDir: roles });

    expect(result.verdict).toBe("refused");
    expect(result.reasons.join("\n")).toContain("made commits by itself");
  });

  test("a role without a prompt file is refused before the agent runs", async () => {
    const result = await runAgentTurn(request({ role: "navigator" }), {
      config: agentConfig("touch src-ran"),
      cwd: repo,
      rolesDir: roles,
    });
    expect(result.verdict).toBe("refused");
    expect(result.reasons[0]).toContain("navigator.md is missing");
    expect(result.agent).toBeUndefined();
  });

  test("with agents disabled in the configuration nothing runs", async () => {
    const result = await runAgentTurn(request(), { config: ConsortConfig.parse({}), cwd: repo, rolesDir: roles });
    expect(result).toMatchObject({ verdict: "refused", reasons: [expect.stringContaining("agents are not enabled")] });
  });
});

describe("the agent action", () => {
  test("every role has its prompt shipped with the action", async () => {
    for (const role of ROLE_NAMES) {
      expect(
        (await readFile(join(REPO_ROOT, "actions/consort/roles", `${role}.md`), "utf8")).length,
        role,
      ).toBeGreaterThan(100);
    }
  });

  test("reads its inputs the way the runner passes them, writes the turn's result and sets committed", async () => {
    const work = await mkdtemp(join(tmpdir(), "consort-agent-action-"));
    try {
      await writeFile(
        join(work, "consort.yml"),
        stringify({ agents: { enabled: true, command: "mkdir -p src && echo 'export {}' > src/a.ts" } }),
      );
      const env = {
        GITHUB_WORKSPACE: work,
        INPUT_REQUEST: JSON.stringify(request()),
        "INPUT_WORKING-DIRECTORY": repo,
        INPUT_CONFIG: "consort.yml",
        "INPUT_RESULT-DIR": "out",
        GITHUB_OUTPUT: join(work, "github-output"),
        GITHUB_STEP_SUMMARY: join(work, "summary.md"),
      };
      await writeFile(env.GITHUB_OUTPUT, "");
      expect(await runAgentAction(env, join(REPO_ROOT, "actions/consort/roles"))).toBe(0);
      const result = AgentTurnResult.parse(JSON.parse(await readFile(join(work, "out", AGENT_RESULT_FILE), "utf8")));
      expect(result).toMatchObject({ verdict: "committed", files: ["src/a.ts"] });
      expect(await readFile(env.GITHUB_OUTPUT, "utf8")).toMatch(/^committed<<(\S+)\ntrue\n\1$/m);
      expect(await readFile(env.GITHUB_STEP_SUMMARY, "utf8")).toContain("driver: committed");
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});
