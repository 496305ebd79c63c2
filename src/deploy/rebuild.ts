import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { againstDatabase, howItEnded, projectCommandEnvironment, type CommandRunner } from "../cycle/commands.js";
import { canRefreshBase, seedRoot } from "../cycle/run.js";
import type { ConsortConfig } from "../config/consort-config.js";
import { breakingFindings, compareBranches } from "../substrate/schema/index.js";
import type { BranchProvider } from "../substrate/provider.js";
import type { DeployRequest, ReleaseSchemaDiff } from "../contracts/deploy.js";

/**
 * The release job's own databases, for jobs that cannot see the app's branches (the `local`
 * provider on a hosted runner, src/contracts/placement.ts): the parent rebuilt from the seed and
 * the default branch's migrations (at the track's merge base), the track from that parent and the
 * track's migrations. The schema diff of the two is computed here, where they exist, and carried
 * in the deploy evidence; nothing else could observe it.
 */

const git = promisify(execFile);

interface ReleaseDeps {
  provider: BranchProvider;
  config: ConsortConfig;
  cwd: string;
  runCommand: CommandRunner;
  progress: (message: string) => void;
}

/** The rebuilt parent's branch id: the track's, `-parent`, within the 63-character limit. */
function rebuiltParentName(track: string): string {
  return `${track.slice(0, 63 - "-parent".length).replace(/-+$/, "")}-parent`;
}

/** The schema diff the release job carries to the app, computed on `branch` against `parent`. */
export async function releaseSchema(
  provider: BranchProvider,
  names: { branch: string; parent: string },
  computedOn: "shared" | "rebuilt",
  note: string,
): Promise<ReleaseSchemaDiff> {
  const comparison = await compareBranches(provider, names.branch, names.parent);
  return { computedOn, ...names, diffMarkdown: comparison.markdown, breaking: breakingFindings(comparison), note };
}

/** Run the migrate command on one branch from one checkout, failing with the command's exit. */
export async function migrateBranch(deps: ReleaseDeps, branch: string, cwd: string, commit: string): Promise<void> {
  const { config, provider } = deps;
  const url = await provider.connectionUrl(branch);
  deps.progress(`migrating ${branch} at ${commit.slice(0, 12)}: ${config.commands.migrate}`);
  const record = await deps.runCommand(config.commands.migrate, {
    cwd,
    ...againstDatabase(projectCommandEnvironment(config), url),
    timeoutMs: config.cycle.timeoutMinutes * 60_000,
  });
  if (record.exitCode !== 0)
    throw new Error(
      `the migrate command \`${record.command}\` ${howItEnded(record)} on ${branch} at ${commit.slice(0, 12)}`,
    );
  if (canRefreshBase(provider)) await provider.refreshBase(branch);
}

/** Run `work` in a checkout of `commit` beside `cwd` (sharing its installed dependencies), removed after. */
async function atCommit<T>(cwd: string, commit: string, work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "consort-parent-"));
  const checkout = join(dir, "checkout");
  await git("git", ["worktree", "add", "--detach", checkout, commit], { cwd });
  try {
    if (existsSync(join(cwd, "node_modules"))) await symlink(join(cwd, "node_modules"), join(checkout, "node_modules"));
    return await work(checkout);
  } finally {
    await git("git", ["worktree", "remove", "--force", checkout], { cwd }).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Rebuild the parent and the track on this job's own server and return their names. The seed runs
 * when this server has not seen the track yet (a fresh runner); a branch left by an earlier release
 * here is made again, so the result never depends on what a runner happened to keep.
 */
export async function rebuildReleaseDatabases(
  request: DeployRequest,
  deps: ReleaseDeps,
): Promise<{ parent: string; track: string; note: string }> {
  const { provider, config, cwd, progress } = deps;
  const track = request.database.branch;
  const parent = rebuiltParentName(track);
  const fresh = !(await provider.getBranch(track));
  if (fresh)
    await seedRoot({
      provider,
      config,
      cwd,
      runCommand: deps.runCommand,
      timeoutMs: config.cycle.timeoutMinutes * 60_000,
      progress,
      parentEnv: undefined,
    });
  if (!fresh) await provider.deleteBranch(track);
  if (await provider.getBranch(parent)) await provider.deleteBranch(parent);
  const root = await provider.rootBranch();
  progress(`rebuilding the parent ${parent} from ${root}`);
  await provider.createBranch(parent, { from: root, onProgress: progress });
  if (request.parentCommit) {
    const base = request.parentCommit;
    await atCommit(cwd, base, (checkout) => migrateBranch(deps, parent, checkout, base));
  }
  progress(`rebuilding the track ${track} from ${parent}`);
  await provider.createBranch(track, { from: parent, onProgress: progress });
  await migrateBranch(deps, track, cwd, request.commit);
  const seeded = config.database.seed ? "the seed command" : "an empty root (no seed command configured)";
  const note =
    `Computed by the release job on databases it rebuilt on its runner's own server, not on the app's branches: ` +
    `the parent \`${parent}\` from ${seeded}` +
    (request.parentCommit
      ? ` and the default branch's migrations at ${request.parentCommit.slice(0, 7)}`
      : " (no merge base was given, so none of the default branch's migrations)") +
    `, the track \`${track}\` from that parent and the track's migrations at ${request.commit.slice(0, 7)}.`;
  return { parent, track, note };
}
