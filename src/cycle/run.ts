import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { ConsortConfig } from "../config/consort-config.js";
import type { BranchProvider } from "../substrate/provider.js";
import {
  closeJail,
  confinementRecord,
  endConfinedProcesses,
  openJail,
  OUTSIDE_A_JOB,
  resultFolderOutOfReach,
  type Confinement,
  type Jail,
} from "./confine.js";
import {
  againstDatabase,
  howItEnded,
  projectCommandEnvironment,
  runInstall,
  runShellCommand,
  type CommandRunner,
} from "./commands.js";
import { clearReports, JUnitError, readJUnitReports } from "./junit/index.js";
import type { CycleRequest } from "../contracts/cycle-request.js";
import {
  CYCLE_RESULT_FILE,
  CYCLE_SUMMARY_FILE,
  CycleResult,
  type CommandRecord,
  type StepTimings,
} from "../contracts/cycle-result.js";
import { newModulesAt } from "./new-modules-git.js";
import { renderCycleSummary } from "./summary.js";
import { decideVerdict, describeLoadError, type TestFileChange } from "./verdict.js";
import {
  committedPaths,
  driftFromCommit,
  frozenFilesAt,
  frozenTextsFromGit,
  headCommit,
  readAtCommit,
  resolveTestBase,
  sourceDrift,
  testFileChanges,
  testsOfRequest,
} from "./workspace.js";

/**
 * One cycle (docs/ARCHITECTURE.md, Cycles): fork a throwaway database branch from the track's, migrate it, run the
 * tests with a JUnit report, decide the verdict, drop the branch. Every failure along the way is a
 * refusal with its reason (fail closed); the branch is deleted in `finally` and has a TTL besides.
 */

/** What every job that runs the repository's commands on a checkout against database branches is given: a cycle, a deploy, a promotion. */
export interface JobDeps {
  provider: BranchProvider;
  config: ConsortConfig;
  /** The checkout of the commit under test. */
  cwd: string;
  runCommand?: CommandRunner;
  now?: () => Date;
  onProgress?: (message: string) => void;
  /**
   * How the repository's commands run: as a separate OS user (prepareConfinement), or unconfined
   * with the reason, which the result states. Default: unconfined (`consort cycle` on a workstation).
   */
  confinement?: Confinement;
}

export interface CycleDeps extends JobDeps {
  /** Where `cycle-result.json` and `cycle-summary.md` go; nothing is written when omitted. */
  outDir?: string;
  /** The throwaway branch's name; by default derived from the track's branch plus a random suffix. */
  cycleBranchName?: string;
  /** The job's environment: the commands see only its allow-listed part (default: this process's). */
  env?: Record<string, string | undefined>;
  /**
   * When the track's branch does not exist (a fresh GitHub-hosted runner on the `local` provider),
   * rebuild it from the root, seeded by the configured seed command, and say so in the result.
   */
  rebuildMissingTrack?: boolean;
}

/** A throwaway branch id under the provider's rules (leading letter, [a-z0-9-], at most 63 chars). */
export function throwawayBranchName(trackBranch: string, suffix = randomBytes(4).toString("hex")): string {
  const head = trackBranch
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^[^a-z]+/, "")
    .slice(0, 63 - 7 - suffix.length)
    .replace(/-+$/, "");
  return `${head || "track"}-cycle-${suffix}`;
}

const elapsed = (since: number) => Math.round(performance.now() - since);

export async function runCycle(request: CycleRequest, deps: CycleDeps): Promise<CycleResult> {
  const now = deps.now ?? (() => new Date());
  const runCommand = deps.runCommand ?? runShellCommand;
  const progress = deps.onProgress ?? (() => {});
  const cwd = resolve(deps.cwd);
  const { config, provider } = deps;
  const startedAt = now();
  const totalStart = performance.now();
  const timings: StepTimings = { fork: 0, migrate: 0, tests: 0, verdict: 0, drop: 0, total: 0 };
  const reasons: string[] = [];
  const warnings: string[] = [];
  const commands: { install?: CommandRecord; migrate?: CommandRecord; test?: CommandRecord } = {};
  const confinement = deps.confinement ?? OUTSIDE_A_JOB;
  // Confined, the commands run as a throwaway user of this cycle's own, in its copy of the checkout.
  let jail: Jail | undefined;
  let workDir = cwd;
  const confining = async <T>(step: Promise<T>): Promise<T> => {
    const mark = performance.now();
    try {
      return await step;
    } finally {
      timings.confine = (timings.confine ?? 0) + elapsed(mark);
    }
  };
  // A confined command runs in the jail's copy (its cwd mapped there) and its processes all end with it.
  const runConfined: CommandRunner = async (command, options) => {
    const record = await runCommand(command, jail ? { ...options, jail } : options);
    if (jail) await confining(endConfinedProcesses(jail));
    return record;
  };
  let commit = request.commit;
  let cycleBranch: string | null = null;
  let dropped = false;
  let report: CycleResult["report"];
  let tests: CycleResult["tests"] = [];
  const timeoutMs = config.cycle.timeoutMinutes * 60_000;
  let dropping: Promise<void> | undefined;
  const dropBranch = async (): Promise<void> => {
    if (!cycleBranch) return;
    const mark = performance.now();
    try {
      progress(`dropping ${cycleBranch}`);
      await provider.deleteBranch(cycleBranch);
      dropped = true;
    } catch (error) {
      warnings.push(
        `the throwaway branch ${cycleBranch} could not be deleted (${(error as Error).message}); its TTL of ${request.ttlSeconds} s will reap it`,
      );
    }
    timings.drop = elapsed(mark);
  };

  try {
    const head = await headCommit(cwd);
    if (!head) throw new Error(`${cwd} is not a git checkout: the cycle cannot prove which commit it tested`);
    commit = head;
    if (head !== request.commit) {
      throw new Error(
        `the checkout is at ${head.slice(0, 12)}, but the request asks to test ${request.commit.slice(0, 12)}: check out the requested commit`,
      );
    }
    // A request that names its tests by id in the test list gets their files and titles from git.
    const judged: CycleRequest = { ...request, testList: undefined, tests: await testsOfRequest(cwd, request) };
    // The evidence is what git holds at the commit, read while the branch is forked (neither waits
    // for the other): the frozen files and every test file the verdict counts. The working tree
    // must hold the same before any command runs and still after the tests ran.
    const frozenPaths = new Set(request.frozenTestFiles.map((f) => f.path));
    const guarded = guardedPaths(judged);
    // Only a refactor needs the track's own test changes: the trunk's test files are its baseline.
    const evidence = Promise.all([
      readAtCommit(cwd, head, guarded),
      request.step === "refactor" ? trackTestChanges(cwd, request, config.paths.tests) : undefined,
      frozenTextsFromGit(cwd, request.frozenTestFiles),
      // Only a RED may wait on a declared module: which are new, and written, is read from git too.
      request.step === "red" && request.architecture ? newModulesAt(cwd, head, request.architecture) : undefined,
      confinement.confined ? committedPaths(cwd, head) : [],
    ]);
    evidence.catch(() => {});

    let mark = performance.now();
    // Git is read in the job's checkout; confined commands get a copy of it without .git.
    const [committed, testChanges, frozenTexts, newModules, sources] = await evidence;
    // Every committed file, not only the tests, must be in the copy as the commit holds it.
    const drift = async () => [
      ...new Set([...(await driftFromCommit(workDir, committed)), ...(await sourceDrift(cwd, workDir, sources))]),
    ];
    if (confinement.confined) {
      jail = await confining(openJail(confinement, cwd, new Set(sources)));
      workDir = jail.work;
      const exposed = deps.outDir ? await resultFolderOutOfReach(jail, deps.outDir, cwd) : undefined;
      if (exposed)
        throw new Error(`${exposed}: the cycle refuses to leave its verdict where the commands could rewrite it`);
    }
    if (deps.rebuildMissingTrack) {
      const rebuilt = await rebuildTrackIfMissing({
        provider,
        config,
        cwd,
        runCommand: runConfined,
        trackBranch: request.database.branch,
        timeoutMs,
        progress,
        parentEnv: deps.env,
      });
      if (rebuilt) warnings.push(rebuilt);
    }
    const name = deps.cycleBranchName ?? throwawayBranchName(request.database.branch);
    progress(`forking ${name} from ${request.database.branch}`);
    cycleBranch = name;
    await provider.createBranch(name, {
      from: request.database.branch,
      ttlSeconds: request.ttlSeconds,
      onProgress: progress,
    });
    const url = await provider.connectionUrl(name);
    timings.fork = elapsed(mark);
    const frozenFiles = frozenFilesAt(committed, request.frozenTestFiles, frozenTexts);
    const project = projectCommandEnvironment(config, deps.env);
    const { secrets: providerSecrets, ...inherit } = project;
    if (config.commands.install) {
      progress(`installing: ${config.commands.install}`);
      commands.install = await runInstall(runConfined, config.commands.install, {
        cwd,
        ...inherit,
        timeoutMs,
        secrets: providerSecrets,
      });
    }
    const before = await drift();
    if (before.length > 0)
      throw new Error(
        `${before.join(", ")} in the checkout ${before.length === 1 ? "is" : "are"} not what the commit under test holds, before any command ran (an install script of the track's?): the tests would not run the commit's files, so the cycle refuses`,
      );
    const unfrozenTestChanges = testChanges?.ok
      ? { ...testChanges, files: testChanges.files.filter((f) => !frozenPaths.has(f.path)) }
      : testChanges;
    // No step or track name: a test that could tell RED from GREEN could fail, then pass, with no code.
    const onDatabase = againstDatabase(project, url);

    mark = performance.now();
    progress(`migrating: ${config.commands.migrate}`);
    commands.migrate = await runConfined(config.commands.migrate, { cwd, ...onDatabase, timeoutMs });
    timings.migrate = elapsed(mark);
    if (commands.migrate.exitCode !== 0) {
      reasons.push(
        `the migrate command \`${config.commands.migrate}\` ${howItEnded(commands.migrate)}; ` +
          "the tests did not run (see its output in the result)",
      );
    } else {
      mark = performance.now();
      // An old report left behind must never pass for this run's: delete it, then check its age.
      await clearReports(config.junit, workDir);
      const testStartWall = Date.now();
      progress(`testing: ${config.commands.test}`);
      commands.test = await runConfined(config.commands.test, { cwd, ...onDatabase, timeoutMs });
      timings.tests = elapsed(mark);
      // The branch is not needed once the tests ran: drop it while the report is read.
      dropping = dropBranch();
      const during = await drift();
      for (const path of during)
        reasons.push(
          `${path} was changed while the commands ran (by the migrate or the test command): the tests did not run the file the commit holds, so the cycle refuses`,
        );

      mark = performance.now();
      const { report: parsed } = await readJUnitReports(config.junit, {
        cwd: workDir,
        notBefore: testStartWall,
        ...(config.runner ? { flavour: config.runner } : {}),
      }).catch((error: unknown) => {
        // No report, or only an old one: the command's configuration, not the report, is at fault.
        if (error instanceof JUnitError && error.code === "no-report")
          throw new Error(
            `the test command \`${config.commands.test}\` wrote no JUnit report at ${config.junit}: configure its JUnit reporter to write there (consort.yml: junit). ${error.message}`,
          );
        if (error instanceof JUnitError && error.code === "stale-report") throw new Error(error.message);
        throw error;
      });
      const counts = { passed: 0, failed: 0, skipped: 0 };
      for (const t of parsed.tests) {
        if (t.outcome === "passed") counts.passed++;
        else if (t.outcome === "skipped") counts.skipped++;
        else counts.failed++;
      }
      const loadErrors = parsed.loadErrors;
      report = {
        path: config.junit,
        flavour: String(parsed.flavour),
        total: parsed.tests.length,
        ...counts,
        loadErrors: loadErrors.map(describeLoadError),
      };
      const decided = decideVerdict({
        request: judged,
        report: parsed,
        testExitCode: commands.test.exitCode,
        frozenFiles,
        ...(unfrozenTestChanges ? { unfrozenTestChanges } : {}),
        ...(newModules ? { newModules } : {}),
      });
      tests = decided.tests;
      reasons.push(...decided.reasons);
      timings.verdict = elapsed(mark);
    }
  } catch (error) {
    reasons.push(
      error instanceof JUnitError
        ? `the JUnit report ${config.junit} could not be read: ${error.message}`
        : (error as Error).message,
    );
  } finally {
    await (dropping ?? dropBranch());
    if (jail)
      await confining(closeJail(jail)).catch((error: unknown) =>
        warnings.push(`the job's throwaway user ${jail!.user} could not be removed: ${(error as Error).message}`),
      );
  }
  timings.total = elapsed(totalStart);

  const result = CycleResult.parse({
    version: 1,
    request,
    step: request.step,
    commit,
    database: { provider: provider.kind, trackBranch: request.database.branch, cycleBranch, dropped },
    startedAt: startedAt.toISOString(),
    finishedAt: now().toISOString(),
    timingsMs: timings,
    confinement: confinementRecord(confinement, jail),
    commands,
    ...(report ? { report } : {}),
    tests,
    verdict: reasons.length === 0 ? "verified" : "refused",
    reasons,
    warnings,
  });
  if (deps.outDir) await writeCycleResult(result, deps.outDir);
  return result;
}

/** The files the verdict stands on: the frozen test files and the files of every test it counts. */
function guardedPaths(request: CycleRequest): string[] {
  const tests = [...request.tests.inTurn, ...request.tests.earlierGreen];
  return [...new Set([...request.frozenTestFiles.map((f) => f.path), ...tests.map((t) => t.file)])].sort();
}

/** The test files the track changed since its base (the merge base with the trunk), or why they cannot be known. */
async function trackTestChanges(cwd: string, request: CycleRequest, globs: string[]): Promise<TestChanges> {
  const base = await resolveTestBase(cwd, request.base);
  if (!base.ok) return base;
  return { ok: true, base: base.describe, files: await testFileChanges(cwd, base.commit, globs) };
}

type TestChanges = { ok: true; base: string; files: TestFileChange[] } | { ok: false; reason: string };

/** A provider that can re-take a branch's frozen base after changing it (the postgres providers). */
export function canRefreshBase(
  provider: BranchProvider,
): provider is BranchProvider & { refreshBase(name: string): Promise<unknown> } {
  return typeof (provider as { refreshBase?: unknown }).refreshBase === "function";
}

/** What running the seed command on a database branch takes. */
interface SeedDeps {
  provider: BranchProvider;
  config: ConsortConfig;
  cwd: string;
  runCommand: CommandRunner;
  timeoutMs: number;
  progress: (message: string) => void;
  parentEnv: Record<string, string | undefined> | undefined;
}

/** Fill a fresh root branch with the configured seed command (nothing without one). */
export async function seedRoot(options: SeedDeps): Promise<void> {
  const { provider, config } = options;
  if (!config.database.seed) return;
  const root = await provider.rootBranch();
  options.progress(`seeding the root branch: ${config.database.seed}`);
  const url = await provider.connectionUrl(root);
  const seeded = await options.runCommand(config.database.seed, {
    cwd: options.cwd,
    ...againstDatabase(projectCommandEnvironment(config, options.parentEnv), url),
    timeoutMs: options.timeoutMs,
  });
  if (seeded.exitCode !== 0)
    throw new Error(
      `the seed command \`${config.database.seed}\` failed (exit ${seeded.exitCode ?? seeded.signal}): ${seeded.outputTail.split("\n").slice(-3).join(" / ")}`,
    );
  if (canRefreshBase(provider)) await provider.refreshBase(root);
}

async function rebuildTrackIfMissing(options: SeedDeps & { trackBranch: string }): Promise<string | undefined> {
  const { provider, config, trackBranch } = options;
  if (await provider.getBranch(trackBranch)) return undefined;
  const root = await provider.rootBranch();
  if (root !== trackBranch) await seedRoot(options);
  if (root !== trackBranch) {
    options.progress(`rebuilding the track's branch ${trackBranch} from ${root}`);
    await provider.createBranch(trackBranch, { from: root, onProgress: options.progress });
  }
  return (
    `the track's database branch ${trackBranch} did not exist here, so it was rebuilt from the root` +
    (config.database.seed ? " filled by the seed command" : " (no seed command configured: an empty database)") +
    " plus the track's migrations: weaker evidence than a persistent branch on Lakebase or a team server"
  );
}

/** Write `cycle-result.json` and the Markdown summary into `outDir`. */
async function writeCycleResult(result: CycleResult, outDir: string): Promise<{ json: string; summary: string }> {
  await mkdir(outDir, { recursive: true });
  const json = join(outDir, CYCLE_RESULT_FILE);
  const summary = join(outDir, CYCLE_SUMMARY_FILE);
  await writeFile(json, `${JSON.stringify(result, null, 2)}\n`);
  await writeFile(summary, renderCycleSummary(result));
  return { json, summary };
}
