import { execFile } from "node:child_process";
import { mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { simpleGit } from "simple-git";
import type { RoleName } from "../../src/config/consort-config.js";
import { emptyTrackState, sealState, serialiseStateFile, type TrackState } from "../../src/state/index.js";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";

/**
 * A throwaway git checkout for the local board: `main` with one commit, a track branch checked out,
 * and helpers to commit as a role and to write a `consort/state` branch as the app would leave it
 * (fetched to origin's remote-tracking ref).
 */
export interface LocalRepo {
  path: string;
  branch: string;
  commitAs(role: RoleName, subject: string, files: Record<string, string>): Promise<void>;
  /** Write tracks/<id>.json on refs/remotes/origin/consort/state, sealed with `key` (or unsealed text when null). */
  writeState(states: Array<{ snapshot: TrackSnapshot; repository: string }>, key: string | null): Promise<void>;
  cleanup(): Promise<void>;
}

const STOCKFLOW_DESIGN = resolve("examples/stockflow/.consort");

export async function localRepo(branch = "feature/board-demo"): Promise<LocalRepo> {
  const path = await mkdtemp(join(tmpdir(), "consort-board-"));
  const git = simpleGit(path);
  await git.init(["--initial-branch=main"]);
  await git.addConfig("user.name", "Board Test").addConfig("user.email", "board@example.com");
  await writeFile(join(path, "README.md"), "# demo\n");
  await git.add(".").commit("Start");
  await git.checkoutLocalBranch(branch);
  return {
    path,
    branch,
    async commitAs(role, subject, files) {
      for (const [file, text] of Object.entries(files)) {
        await mkdir(dirname(join(path, file)), { recursive: true });
        await writeFile(join(path, file), text);
      }
      await git.add(Object.keys(files)).commit(`${subject}\n\nConsort-Role: ${role}`);
    },
    async writeState(states, key) {
      // Plumbing only: the checkout's branch and work tree stay as they are.
      const blobs: string[] = [];
      for (const { snapshot, repository } of states) {
        const state: TrackState = emptyTrackState({
          trackId: snapshot.context.trackId,
          repository,
          branch: snapshot.context.branch,
          snapshot,
          now: new Date(snapshot.context.updatedAt),
        });
        const text = key
          ? serialiseStateFile(sealState(state, key))
          : `${JSON.stringify({ ...state, signature: `hmac-sha256:${"0".repeat(64)}` })}\n`;
        const file = join(path, ".git", "board-blob.json");
        await writeFile(file, text);
        const blob = (await git.raw(["hash-object", "-w", file])).trim();
        await rm(file);
        blobs.push(`100644 blob ${blob}\t${snapshot.context.trackId}.json`);
      }
      const inner = await mktree(path, blobs.join("\n"));
      const root = await mktree(path, `040000 tree ${inner}\ttracks`);
      const commit = (await git.raw(["commit-tree", root, "-m", "state"])).trim();
      await git.raw(["update-ref", "refs/remotes/origin/consort/state", commit]);
    },
    cleanup: () => rm(path, { recursive: true, force: true }),
  };
}

function mktree(path: string, listing: string): Promise<string> {
  return new Promise((done, fail) => {
    const child = execFile("git", ["mktree"], { cwd: path }, (error, stdout) =>
      error ? fail(error) : done(stdout.trim()),
    );
    child.stdin!.end(`${listing}\n`);
  });
}

/** The example's spec without its NFRs: the Product Owner's first step. */
export async function storiesOnly(): Promise<string> {
  const spec = JSON.parse(await readFile(join(STOCKFLOW_DESIGN, "spec.json"), "utf8")) as Record<string, unknown>;
  const { nfrs: _nfrs, ...stories } = spec;
  return `${JSON.stringify(stories, null, 2)}\n`;
}
