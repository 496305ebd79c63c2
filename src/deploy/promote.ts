import { againstDatabase, howItEnded, projectCommandEnvironment } from "../cycle/commands.js";
import type { CommandRecord } from "../contracts/cycle-result.js";
import { canRefreshBase, type JobDeps } from "../cycle/run.js";
import { plainBranchId } from "../substrate/names.js";
import { placementOf } from "../contracts/placement.js";
import { answered, checkoutIsRequested, withDefaults } from "./deploy.js";
import { PromoteResult, type PromoteRequest } from "../contracts/deploy.js";

/**
 * After a merge (docs/ARCHITECTURE.md, The machine `promoting`): migrate the parent's database branch. A snapshot branch
 * of the parent is taken first; it is deleted when the migration succeeds and kept, for a restore,
 * when it fails.
 */

/** The snapshot's branch id: the parent's id, `-pre-`, the commit's first 8 characters, within 63. */
export function snapshotBranchName(parent: string, commit: string): string {
  // The parent may be a root database such as `consort_root`, whose name is not a branch id:
  // sanitise it like any git name, then keep the suffix within the 63-character limit.
  const suffix = `-pre-${commit.slice(0, 8)}`;
  const base = plainBranchId(parent);
  return `${base.slice(0, 63 - suffix.length).replace(/-+$/, "")}${suffix}`;
}

/** What the promotion says when the jobs have no persistent parent (src/contracts/placement.ts). */
export function noPersistentParent(parent: string): string {
  return `There is no persistent parent to migrate: the jobs run apart from the app's branches (the local provider on a hosted runner), so \`${parent}\` was not migrated and the merge is the promotion. The release verified the migrations on a parent it rebuilt from the seed.`;
}

export async function runPromote(request: PromoteRequest, deps: JobDeps): Promise<PromoteResult> {
  const { now, runCommand, progress, config, provider, cwd, prepare, finish, record } = withDefaults(deps);
  const startedAt = now().toISOString();
  const parent = request.database.parent;
  const reasons: string[] = [];
  const warnings: string[] = [];
  let snapshot: string | null = null;
  let snapshotKept = false;
  let migrate: CommandRecord | undefined;
  const placement = placementOf(config);
  if (!placement.shared) {
    // This job's server is not the app's: migrating a parent here would migrate a copy that
    // vanishes with the runner, and saying "promoted" about it would be untrue.
    return PromoteResult.parse({
      ...answered(request),
      database: { provider: provider.kind, parent, snapshot: null, snapshotKept: false, migrated: false },
      startedAt,
      finishedAt: now().toISOString(),
      verdict: "promoted",
      reasons: [],
      warnings,
      notes: [noPersistentParent(parent)],
    });
  }

  try {
    await checkoutIsRequested(cwd, request, "promote");
    if (!(await provider.getBranch(parent))) throw new Error(`the parent's database branch ${parent} does not exist`);
    const name = snapshotBranchName(parent, request.commit);
    progress(`snapshotting ${parent} as ${name}`);
    // No TTL: a failed promotion's snapshot must stay until a person restores from it.
    await provider.createBranch(name, { from: parent, onProgress: progress });
    snapshot = name;
    const url = await provider.connectionUrl(parent);
    progress(`migrating ${parent}: ${config.commands.migrate}`);
    const project = projectCommandEnvironment(config);
    await prepare(project);
    migrate = await runCommand(config.commands.migrate, {
      cwd,
      ...againstDatabase(project, url),
      timeoutMs: config.cycle.timeoutMinutes * 60_000,
    });
    await finish();
    if (migrate.exitCode === 0) {
      if (canRefreshBase(provider)) await provider.refreshBase(parent);
      try {
        await provider.deleteBranch(snapshot);
      } catch (error) {
        warnings.push(
          `the migration succeeded but the snapshot ${snapshot} could not be deleted (${(error as Error).message}); delete it by hand`,
        );
        snapshotKept = true;
      }
    } else {
      snapshotKept = true;
      reasons.push(
        `the migrate command \`${migrate.command}\` ${howItEnded(migrate)} on ${parent}; ` +
          `the pre-migration snapshot ${snapshot} is kept: inspect ${parent}, and restore from ${snapshot} if the migration left it half-done`,
      );
    }
  } catch (error) {
    if (snapshot) snapshotKept = true;
    reasons.push((error as Error).message + (snapshot ? `; the pre-migration snapshot ${snapshot} is kept` : ""));
  } finally {
    await finish();
  }
  return PromoteResult.parse({
    ...answered(request),
    database: { provider: provider.kind, parent, snapshot, snapshotKept },
    ...(migrate ? { migrate } : {}),
    startedAt,
    finishedAt: now().toISOString(),
    confinement: record(),
    verdict: reasons.length === 0 ? "promoted" : "failed",
    reasons,
    warnings,
  });
}
