import { execFile } from "node:child_process";
import { promisify } from "node:util";
import picomatch from "picomatch";
import {
  againstDatabase,
  howItEnded,
  projectCommandEnvironment,
  runInstall,
  runShellCommand,
  type CommandRunner,
  type ProjectEnvironment,
} from "../cycle/commands.js";
import { closeJail, confinementRecord, openJail, OUTSIDE_A_JOB, type Jail } from "../cycle/confine.js";
import { CycleRequest } from "../contracts/cycle-request.js";
import type { CommandRecord } from "../contracts/cycle-result.js";
import { canRefreshBase, runCycle, type JobDeps } from "../cycle/run.js";
import { headCommit, listFiles, resolveTestBase } from "../cycle/workspace.js";
import { placementOf } from "../contracts/placement.js";
import type { BranchProvider } from "../substrate/provider.js";
import { migrateBranch, rebuildReleaseDatabases, releaseSchema } from "./rebuild.js";
import { DeployEvidence, type DeployRequest } from "../contracts/deploy.js";
import { belowFloor, notMeasured, type MutationReport } from "../contracts/mutation.js";
import { measureMutation } from "./mutation.js";

/**
 * The release verification at the end of the build lane (docs/ARCHITECTURE.md, The machine `deploying`). With a deploy
 * command: deploy a preview on the track's database branch and run the verify command against it.
 * Without one: replay every migration from the parent's state on a fresh fork and run the whole
 * suite there. Either way the result is deploy evidence for the deploy gate; failures refuse.
 */

/** The deps with the real clock, the shell and silent progress where none is given; commands confined when asked. */
export function withDefaults(deps: JobDeps) {
  const base = deps.runCommand ?? runShellCommand;
  const confinement = deps.confinement ?? OUTSIDE_A_JOB;
  // The job's throwaway user and its copy of the checkout, made at the first confined command.
  let opened: Promise<Jail> | undefined;
  const jailed = () =>
    confinement.confined ? (opened ??= openJail(confinement, deps.cwd)) : Promise.resolve(undefined);
  let jail: Jail | undefined;
  const runCommand: CommandRunner = confinement.confined
    ? async (command, options) => base(command, { ...options, jail: (jail = await jailed()) })
    : base;
  return {
    ...deps,
    /** The runner the caller gave, unwrapped: a job step that opens its own jail passes it that jail. */
    givenRunner: deps.runCommand,
    now: deps.now ?? (() => new Date()),
    runCommand,
    progress: deps.onProgress ?? (() => {}),
    confinement,
    /** How the commands ran, for the record: as the job's throwaway user once one was made. */
    record: () => confinementRecord(confinement, jail),
    /** Run the install command (confined, in the jail's copy of the checkout); the jail is removed in `finish`. */
    prepare: async ({ secrets, ...inherit }: ProjectEnvironment) => {
      const install = deps.config.commands.install;
      if (!install) return undefined;
      const timeoutMs = deps.config.cycle.timeoutMinutes * 60_000;
      return runInstall(runCommand, install, { cwd: deps.cwd, ...inherit, timeoutMs, secrets });
    },
    finish: async () => {
      if (opened) await closeJail(await opened);
    },
  };
}

/** A release job acts on the commit its request names, or refuses: the checkout must be exactly that commit. */
export async function checkoutIsRequested(
  cwd: string,
  request: { commit: string },
  doing: "release" | "promote",
): Promise<void> {
  const head = await headCommit(cwd);
  if (head !== request.commit)
    throw new Error(
      `the checkout is at ${head?.slice(0, 12) ?? "no commit"}, but the request asks to ${doing} ${request.commit.slice(0, 12)}`,
    );
}

/** What a release job's record opens with: its version, the request it answers and the commit it acted on. */
export const answered = <R extends { commit: string }>(request: R) => ({
  version: 1 as const,
  request,
  commit: request.commit,
});

const git = promisify(execFile);

/** The last `PREVIEW_URL=…` line a deploy command printed, if any. */
function previewUrlFrom(output: string): string | null {
  const matches = [...output.matchAll(/^\s*PREVIEW_URL=(\S+)\s*$/gm)];
  const last = matches.at(-1)?.[1];
  if (!last) return null;
  try {
    return new URL(last).toString();
  } catch {
    return null;
  }
}

/** Migration files this release brings: changed since the parent commit, or all of them without one. */
async function releaseMigrations(cwd: string, globs: string[], parentCommit: string | undefined): Promise<string[]> {
  const isMigration = picomatch(globs);
  if (parentCommit) {
    const { stdout } = await git("git", ["diff", "--name-only", "--diff-filter=AM", `${parentCommit}`, "HEAD"], {
      cwd,
    });
    return stdout
      .split("\n")
      .map((s) => s.trim())
      .filter((p) => p && isMigration(p))
      .sort();
  }
  return (await listFiles(cwd)).filter((p) => isMigration(p));
}

/** Where the track forked from the trunk `branch`: their merge base, when the checkout has the history. */
async function mergeBase(cwd: string, branch: string | undefined): Promise<string | undefined> {
  if (!branch) return undefined;
  const base = await resolveTestBase(cwd, { branch });
  return base.ok ? base.commit : undefined;
}

/** The diff of the app's own track branch against its parent, as this job sees it after migrating it. */
function sharedSchema(provider: BranchProvider, request: DeployRequest) {
  return releaseSchema(
    provider,
    { branch: request.database.branch, parent: request.database.parent },
    "shared",
    `Computed by the release job on the app's own branches after migrating \`${request.database.branch}\` to ${request.commit.slice(0, 7)}.`,
  );
}

type Job = ReturnType<typeof withDefaults>;

/** What the release has found so far: kept when a step throws, so the evidence shows how far it got. */
interface ReleaseFindings {
  branch: string;
  migrationsApplied: string[];
  deploy?: CommandRecord;
  verify: DeployEvidence["verify"];
  previewUrl: string | null;
  schema?: DeployEvidence["schema"];
  /** The track's merge base, when known: its changed lines are what the mutation score measures. */
  base?: string;
  mutation?: MutationReport;
  reasons: string[];
  warnings: string[];
}

export async function runDeploy(request: DeployRequest, deps: JobDeps): Promise<DeployEvidence> {
  const job = withDefaults(deps);
  const { now, config, provider, finish, record } = job;
  const startedAt = now().toISOString();
  const mode = config.commands.deploy ? "preview" : "replay";
  const found: ReleaseFindings = {
    branch: mode === "preview" ? request.database.branch : request.database.parent,
    migrationsApplied: [],
    verify: { outcome: "not-run", command: config.commands.verify ?? null },
    previewUrl: null,
    reasons: [],
    warnings: [],
  };
  try {
    const replayFrom = await prepareRelease(request, job, found);
    if (mode === "preview") await deployPreview(request, job, found);
    else await replayRelease(request, job, deps.runCommand, replayFrom, found);
    if (found.reasons.length === 0 && found.verify.outcome === "passed") await measureRelease(request, job, found);
  } catch (error) {
    found.reasons.push((error as Error).message);
  } finally {
    await finish();
  }
  const { branch, migrationsApplied, deploy, verify, previewUrl, schema, mutation, reasons, warnings } = found;
  return DeployEvidence.parse({
    ...answered(request),
    mode,
    database: { provider: provider.kind, branch, parent: request.database.parent },
    migrationsApplied,
    ...(deploy ? { deploy } : {}),
    verify,
    previewUrl,
    ...(schema ? { schema } : {}),
    ...(mutation ? { mutation } : {}),
    startedAt,
    finishedAt: now().toISOString(),
    confinement: record(),
    verdict: reasons.length === 0 && verify.outcome === "passed" ? "verified" : "refused",
    reasons: reasons.length === 0 && verify.outcome !== "passed" ? ["the release was not verified"] : reasons,
    warnings,
  });
}

/**
 * The checkout, the release's migrations and, for jobs that cannot see the app's branches, the
 * parent and the track rebuilt here with their diff. Returns the branch a replay forks from.
 */
async function prepareRelease(request: DeployRequest, job: Job, found: ReleaseFindings): Promise<string> {
  const { config, provider, cwd, runCommand, progress } = job;
  await checkoutIsRequested(cwd, request, "release");
  const parentCommit = request.parentCommit ?? (await mergeBase(cwd, request.base?.branch));
  if (parentCommit) found.base = parentCommit;
  found.migrationsApplied = await releaseMigrations(cwd, config.paths.migrations, parentCommit);
  if (placementOf(config).shared) return request.database.parent;
  // Jobs that cannot see the app's branches build the parent and the track here, and carry their diff.
  const rebuilt = await rebuildReleaseDatabases(
    { ...request, ...(parentCommit ? { parentCommit } : {}) },
    { provider, config, cwd, runCommand, progress },
  );
  found.schema = await releaseSchema(
    provider,
    { branch: rebuilt.track, parent: rebuilt.parent },
    "rebuilt",
    rebuilt.note,
  );
  return rebuilt.parent;
}

/** The throwaway fork the mutants' tests run against: the track's id, `-mutants`, within 63. */
const mutationBranchName = (track: string) => `${track.slice(0, 63 - "-mutants".length).replace(/-+$/, "")}-mutants`;

/**
 * After a verified release: the mutation score of the track's tests over its changed lines, on a
 * throwaway fork of the track's migrated branch. Below the floor the release is refused, naming
 * the survivors; without a floor the score is evidence for the person who approves.
 */
async function measureRelease(request: DeployRequest, job: Job, found: ReleaseFindings): Promise<void> {
  const { config, provider, cwd, progress, confinement } = job;
  const from = request.database.branch;
  if (!(await provider.getBranch(from))) {
    found.mutation = notMeasured(`the track's database branch ${from} does not exist, so its tests have no database`);
  } else {
    const fork = mutationBranchName(from);
    if (await provider.getBranch(fork)) await provider.deleteBranch(fork);
    await provider.createBranch(fork, { from, onProgress: progress });
    try {
      found.mutation = await measureMutation(
        { track: request.track, base: found.base, databaseUrl: await provider.connectionUrl(fork) },
        { config, cwd, confinement, progress, ...(job.givenRunner ? { runCommand: job.givenRunner } : {}) },
      );
    } finally {
      await provider.deleteBranch(fork).catch(() => {});
    }
  }
  const refusal = belowFloor(found.mutation, config.gates.deploy.mutation.minScore);
  if (refusal) found.reasons.push(refusal);
}

/** With a deploy command: deploy a preview on the track's branch and verify it. */
async function deployPreview(request: DeployRequest, job: Job, found: ReleaseFindings): Promise<void> {
  const { config, provider, cwd, runCommand, progress, prepare } = job;
  const timeoutMs = config.cycle.timeoutMinutes * 60_000;
  const branch = found.branch;
  if (!config.commands.verify)
    throw new Error(
      "a deploy command is configured but no verify command: deploy evidence needs a verification (set commands.verify)",
    );
  if (!(await provider.getBranch(branch)))
    throw new Error(`the track's database branch ${branch} does not exist; the preview needs it`);
  const url = await provider.connectionUrl(branch);
  const project = projectCommandEnvironment(config);
  const onDatabase = againstDatabase(project, url);
  await prepare(project);
  progress(`deploying: ${config.commands.deploy}`);
  const deploy = await runCommand(config.commands.deploy!, { cwd, ...onDatabase, timeoutMs, tailLines: 200 });
  found.deploy = deploy;
  if (deploy.exitCode !== 0) throw new Error(`the deploy command \`${deploy.command}\` ${howItEnded(deploy)}`);
  const previewUrl = previewUrlFrom(deploy.outputTail);
  found.previewUrl = previewUrl;
  // The deploy migrated the track's branch: later forks must start from that state.
  if (canRefreshBase(provider)) await provider.refreshBase(branch);
  progress(`verifying: ${config.commands.verify}`);
  const record = await runCommand(config.commands.verify, {
    cwd,
    ...onDatabase,
    env: { ...onDatabase.env, ...(previewUrl ? { PREVIEW_URL: previewUrl } : {}) },
    timeoutMs,
  });
  found.verify = { outcome: record.exitCode === 0 ? "passed" : "failed", command: config.commands.verify, record };
  if (record.exitCode !== 0)
    found.reasons.push(`the verify command \`${record.command}\` ${howItEnded(record)} against the preview`);
  if (placementOf(config).shared) found.schema = await sharedSchema(provider, request);
}

/** The release cycle's request: every test of the list, none in turn, on a fork of `replayFrom`. */
function replayRequest(request: DeployRequest, replayFrom: string): CycleRequest {
  return CycleRequest.parse({
    track: request.track,
    step: "release",
    commit: request.commit,
    tests: { inTurn: [], earlierGreen: request.tests },
    ...(request.testList
      ? {
          testList: {
            path: request.testList.path,
            sha256: request.testList.sha256,
            inTurn: [],
            earlierGreen: request.testList.tests,
          },
        }
      : {}),
    frozenTestFiles: request.frozenTestFiles,
    database: { branch: replayFrom },
    ttlSeconds: request.ttlSeconds,
  });
}

/** Without a deploy command: replay the migrations on a fork of `replayFrom` and run the whole suite. */
async function replayRelease(
  request: DeployRequest,
  job: Job,
  givenRunner: CommandRunner | undefined,
  replayFrom: string,
  found: ReleaseFindings,
): Promise<void> {
  const { config, provider, cwd, runCommand, progress, confinement } = job;
  progress(`no deploy command: replaying the migrations on a fork of ${replayFrom} and running the whole suite`);
  const cycle = await runCycle(replayRequest(request, replayFrom), {
    provider,
    config,
    cwd,
    ...(givenRunner ? { runCommand: givenRunner } : {}),
    onProgress: progress,
    confinement,
  });
  found.branch = cycle.database.cycleBranch ?? found.branch;
  found.warnings.push(...cycle.warnings);
  found.verify = {
    outcome: cycle.verdict === "verified" ? "passed" : "failed",
    command: config.commands.test,
    ...(cycle.commands.test ? { record: cycle.commands.test } : {}),
    cycle: {
      verdict: cycle.verdict,
      total: cycle.report?.total ?? 0,
      passed: cycle.report?.passed ?? 0,
      reasons: cycle.reasons,
    },
  };
  found.reasons.push(...cycle.reasons);
  // The replay ran on a fork: the track's own branch gets the verified migrations, so the
  // app's consort/schema compares what the track will promote.
  if (placementOf(config).shared && cycle.verdict === "verified") {
    await migrateBranch({ provider, config, cwd, runCommand, progress }, request.database.branch, cwd, request.commit);
    found.schema = await sharedSchema(provider, request);
  }
}
