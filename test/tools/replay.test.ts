import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RoleName } from "../../src/config/consort-config.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import { transition } from "../../src/orchestrator/index.js";
import { emptyTrackState, sealState, serialiseStateFile, trackPath } from "../../src/state/index.js";
import { consortTools } from "../../src/tools/index.js";
import { replayTrack } from "../../src/tools/replay.js";
import { ExplainRejectionOutput, NextActionOutput, TrackStatusOutput } from "../../src/tools/track-tools.js";
import { call, connectClient, errorText } from "./mcp-client.js";
import { STOCKFLOW, stockflowCheckout, type StockflowCheckout } from "./fixture.js";

/**
 * With no state file and no token, the track tools derive the track from the checkout's own
 * commits: the app's machine, replayed from the merge base with the default branch.
 */

let checkout: StockflowCheckout;
beforeAll(async () => {
  checkout = await stockflowCheckout({ designOnTrack: true });
}, 90_000);
afterAll(async () => checkout.cleanup());

const design = (name: string) => readFile(join(STOCKFLOW, ".consort", name), "utf8");
async function commitAs(role: RoleName, subject: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(checkout.path, path)), { recursive: true });
    await writeFile(join(checkout.path, path), text);
  }
  await simpleGit(checkout.path).add(Object.keys(files)).commit(`${subject}\n\nConsort-Role: ${role}`);
}

async function ask<T>(tool: string, parse: { parse: (value: unknown) => T }, args: Record<string, unknown> = {}) {
  const { client, close } = await connectClient(consortTools, checkout.context());
  try {
    const result = await call(client, tool, args);
    if (result.isError) throw new Error(errorText(result));
    return parse.parse(result.structuredContent);
  } finally {
    await close();
  }
}

describe("the track tools on a plain checkout (no state file, no token, no network)", () => {
  it("a fresh branch is a track at its stories: the Product Owner acts first", async () => {
    const output = await ask("next_action", NextActionOutput);
    expect(output.state).toMatchObject({ source: "commits", verified: false });
    expect(output.state.location).toMatch(
      /^the local lane \/.*\/\.git\/consort\/tracks\/f1-record-stock-[\w-]+\.json \(a rehearsal, never evidence for the app; gates wait for `consort approve <gate>` at a terminal\): 0 commit\(s\) of f1-record-stock-\w+ since [0-9a-f]{12} \(merge base with main\)$/,
    );
    expect(output.action).toMatchObject({
      stage: "stories",
      role: "product-owner",
      trailer: "Consort-Role: product-owner",
    });
  });

  it("after the design commits, the track waits at the design gate for a person's approval", async () => {
    const spec = JSON.parse(await design("spec.json")) as Record<string, unknown>;
    const { nfrs: _nfrs, ...stories } = spec;
    await commitAs("product-owner", "Stories", { ".consort/spec.json": `${JSON.stringify(stories, null, 2)}\n` });
    await commitAs("spec-author", "Spec and NFRs", { ".consort/spec.json": await design("spec.json") });
    await commitAs("architect", "Architecture", { ".consort/architecture.json": await design("architecture.json") });
    await commitAs("dba", "DB design", { ".consort/db-design.json": await design("db-design.json") });

    const next = await ask("next_action", NextActionOutput);
    expect(next.state.location).toMatch(/: 4 commit\(s\) of [\w-]+ since the lane's last visit$/);
    expect(next.action).toMatchObject({ stage: "design-gate", actor: "person", gate: { name: "design" } });
    const status = await ask("track_status", TrackStatusOutput);
    const gates = Object.fromEntries(status.gates.map((gate) => [gate.gate, gate]));
    expect(gates.design).toMatchObject({ status: "pending", approvals: [] });
    expect(gates.design?.pendingHash).toMatch(/^[0-9a-f]{64}$/);
    expect(status.checks.find((check) => check.name === "consort/design")?.status).not.toBe("success");
    expect(status.rejectedHead).toBeNull();
  });

  it("a commit past the waiting gate is refused, and explain_rejection says why", async () => {
    await commitAs("driver", "Code before the gate", { "src/early.ts": "export const early = 1;\n" });
    const output = await ask("explain_rejection", ExplainRejectionOutput);
    expect(output.recorded?.reasons).toEqual([
      expect.stringMatching(
        /^[0-9a-f]{7}: no role's turn: the track is at design-gate, waiting for a person's approving review$/,
      ),
    ]);
    expect(output.expected.stage).toBe("design-gate");
  });

  it("a refused commit reset away leaves no refusal in the lane", async () => {
    const git = simpleGit(checkout.path);
    const refused = (await git.revparse(["HEAD"])).trim();
    const replay = () => replayTrack(checkout.path, defaultConfig(), new Date().toISOString());
    expect(Object.keys((await replay()).refusals)).toEqual([refused]);
    await git.raw(["reset", "-q", "--hard", "HEAD~1"]);
    try {
      const reset = await replay();
      expect(reset.refusals).toEqual({});
      const lane = JSON.parse(await readFile(reset.lane!.path, "utf8")) as { refusals: Record<string, string[]> };
      expect(lane.refusals).toEqual({});
    } finally {
      await git.raw(["reset", "-q", "--hard", refused]);
    }
  });

  it("names only the checkout's own track, and the default branch is no track", async () => {
    await expect(ask("next_action", NextActionOutput, { track: "another-track" })).rejects.toThrow(
      /NO_STATE: Track "another-track" is not the checkout's branch/,
    );
    const git = simpleGit(checkout.path);
    const branch = (await git.revparse(["--abbrev-ref", "HEAD"])).trim();
    await git.checkout("main");
    try {
      await expect(ask("next_action", NextActionOutput)).rejects.toThrow(/NO_TRACK: .* is on the default branch main/);
    } finally {
      await git.checkout(branch);
    }
  });
});

describe("a fetched consort/state that verifies is where the replay starts", () => {
  const KEY = "k".repeat(40);
  const git = (args: string[], input?: string) =>
    execFileSync("git", args, {
      cwd: checkout.path,
      encoding: "utf8",
      ...(input === undefined ? {} : { input }),
    }).trim();

  /** What the app wrote for this track with the design gate approved, on a local consort/state as a fetch brings it. */
  beforeAll(async () => {
    const config = defaultConfig();
    // The app saw the design commits, not the refused one on top (a branch holding it cannot be approved).
    const refused = git(["rev-parse", "HEAD"]);
    git(["reset", "--hard", "HEAD~1"]);
    const atGate = (await replayTrack(checkout.path, config, "2026-12-01T10:00:00.000Z")).snapshot;
    git(["reset", "--hard", refused]);
    expect(atGate.stage).toBe("design-gate");
    const approved = transition(
      atGate,
      {
        type: "gate.approved",
        at: "2026-12-01T11:00:00.000Z",
        gate: "design",
        manifestHash: atGate.context.gates.design.pendingHash!,
        approver: "lead",
        reviewId: 7,
        commit: atGate.context.head,
      },
      config,
    ).snapshot;
    expect(approved.stage).toBe("test-list");
    const trackId = atGate.context.trackId;
    const file = sealState(
      emptyTrackState({
        trackId,
        repository: "stockflow/app",
        branch: atGate.context.branch,
        snapshot: approved,
        now: new Date(),
      }),
      KEY,
    );
    const blob = git(["hash-object", "-w", "--stdin"], serialiseStateFile(file));
    const tracks = git(["mktree"], `100644 blob ${blob}\t${trackPath(trackId).split("/")[1]}\n`);
    const root = git(["mktree"], `040000 tree ${tracks}\ttracks\n`);
    const commit = git(["commit-tree", root, "-m", "state"]);
    git(["update-ref", "refs/remotes/origin/consort/state", commit]);
  });
  afterAll(() => git(["update-ref", "-d", "refs/remotes/origin/consort/state"]));

  async function next(stateKey?: string) {
    const { client, close } = await connectClient(consortTools, checkout.context(stateKey ? { stateKey } : {}));
    try {
      const result = await call(client, "next_action", {});
      if (result.isError) throw new Error(errorText(result));
      return NextActionOutput.parse(result.structuredContent);
    } finally {
      await close();
    }
  }

  it("with the state key, the gate the app recorded is approved and the track goes on from the app's head", async () => {
    const output = await next(KEY);
    expect(output.state).toMatchObject({ source: "commits", verified: true });
    expect(output.state.location).toMatch(/^the app's verified state at [0-9a-f]{12} and 1 commit\(s\) of \S+ since$/);
    expect(output.action).toMatchObject({ stage: "test-list", role: "test-strategist" });
  });

  it("with another key, the file does not verify and is not used: the gate still waits", async () => {
    const output = await next("w".repeat(40));
    expect(output.state.verified).toBe(false);
    expect(output.state.location).toContain("origin/consort/state:tracks/");
    expect(output.state.location).toContain("does not verify, so it is not used");
    expect(output.action).toMatchObject({ stage: "design-gate", actor: "person" });
  });

  it("without a key, it says the fetched state cannot be verified, and the gate still waits", async () => {
    const output = await next();
    expect(output.state.verified).toBe(false);
    expect(output.state.location).toMatch(/without CONSORT_STATE_KEY it cannot be verified, so it is not used$/);
    expect(output.action).toMatchObject({ stage: "design-gate", actor: "person" });
  });
});

/**
 * The default branch is the remote's own setting (its HEAD, as `git ls-remote` asks it), not the
 * remote-tracking `origin/HEAD` a clone keeps, which `git remote set-head` or an old clone may have
 * pointed at a feature branch; and the replay says where it read the choice.
 */
describe("the default branch a replay starts from", () => {
  const made: string[] = [];
  afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", args, { cwd, encoding: "utf8", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } }).trim();

  /** A bare origin whose default is main, with a pushed feature branch; a clone on a track branch of its own. */
  function cloneWithFeatureHead(): { clone: string; origin: string } {
    const root = mkdtempSync(join(tmpdir(), "consort-default-"));
    made.push(root);
    const origin = join(root, "origin.git");
    const seed = join(root, "seed");
    git(root, "init", "-q", "--bare", "--initial-branch=main", origin);
    git(root, "init", "-q", "--initial-branch=main", seed);
    git(seed, "config", "user.name", "T");
    git(seed, "config", "user.email", "t@example.com");
    writeFileSync(join(seed, "README.md"), "# app\n");
    git(seed, "add", "-A");
    git(seed, "commit", "-qm", "start");
    git(seed, "switch", "-qc", "feature/old");
    git(seed, "commit", "-q", "--allow-empty", "-m", "old feature");
    git(seed, "remote", "add", "origin", origin);
    git(seed, "push", "-q", "origin", "main", "feature/old");
    const clone = join(root, "clone");
    git(root, "clone", "-q", origin, clone);
    git(clone, "config", "user.name", "T");
    git(clone, "config", "user.email", "t@example.com");
    // The clone's idea of origin's default, pointed at a feature branch (an old clone, a mistaken set-head).
    git(clone, "remote", "set-head", "origin", "feature/old");
    git(clone, "switch", "-qc", "feature/new", "origin/main");
    return { clone, origin };
  }

  it("is the remote's configured default (its HEAD), not a feature branch origin/HEAD names, and says so", async () => {
    const { clone } = cloneWithFeatureHead();
    expect(git(clone, "symbolic-ref", "refs/remotes/origin/HEAD")).toBe("refs/remotes/origin/feature/old");
    const track = await replayTrack(clone, defaultConfig(), new Date().toISOString());
    expect(track.defaultBranch).toBe("main");
    expect(track.defaultBranchSource).toBe("origin's HEAD (git ls-remote --symref origin HEAD)");
  });

  it("offline, never takes origin/HEAD when it names another branch than main or master, and git config consort.defaultBranch decides", async () => {
    const { clone, origin } = cloneWithFeatureHead();
    rmSync(origin, { recursive: true, force: true });
    const offline = await replayTrack(clone, defaultConfig(), new Date().toISOString());
    expect(offline.defaultBranch).toBe("main");
    expect(offline.defaultBranchSource).toMatch(/^the remote-tracking branch main \(origin could not be asked: /);
    git(clone, "config", "consort.defaultBranch", "main");
    const configured = await replayTrack(clone, defaultConfig(), new Date().toISOString());
    expect(configured.defaultBranchSource).toBe("git config consort.defaultBranch");
  });
});
