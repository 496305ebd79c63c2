import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { CYCLE_RESULT_FILE, CycleResult } from "../../src/contracts/cycle-result.js";
import { postgresUrl } from "../helpers/postgres.js";

/**
 * An action step's environment as the Actions runner gives it, in the workspace `work`: the config
 * file `<name>.yml` written from `config`, the `request` input, the checkout `cwd`, the result folder
 * `<name>`, empty GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, and the user the commands run as.
 */
export async function runnerEnv(
  work: string,
  name: string,
  job: { request: unknown; cwd: string; config: object; confinedUser: string },
) {
  await writeFile(join(work, `${name}.yml`), stringify(job.config));
  const env = {
    ...process.env,
    CONSORT_TEST_PG_URL: postgresUrl(),
    GITHUB_WORKSPACE: work,
    INPUT_REQUEST: JSON.stringify(job.request),
    "INPUT_WORKING-DIRECTORY": job.cwd,
    INPUT_CONFIG: `${name}.yml`,
    "INPUT_RESULT-DIR": name,
    GITHUB_OUTPUT: join(work, `${name}.output`),
    GITHUB_STEP_SUMMARY: join(work, `${name}.summary`),
    CONSORT_CONFINED_USER: job.confinedUser,
  };
  await writeFile(env.GITHUB_OUTPUT, "");
  await writeFile(env.GITHUB_STEP_SUMMARY, "");
  return env;
}

/** A runner's folders for one job, laid out as the Actions runner lays them out (see `runnerLayout`). */
export interface RunnerFolders {
  /** The runner's own folder (a hosted runner's home): closed to other users, as there. */
  runner: string;
  /** GITHUB_WORKSPACE: `_work/<repo>/<repo>`. */
  workspace: string;
  /** The checkout of the commit under test, `work` in the workspace (as the cycle workflow checks it out). */
  checkout: string;
  /** RUNNER_TEMP: `_work/_temp`, which holds the event file and the result folder. */
  temp: string;
  /** GITHUB_EVENT_PATH: `_temp/_github_workflow/event.json`. */
  eventPath: string;
  resultDir: string;
  remove(): Promise<void>;
}

/**
 * A runner's folders: `<runner>/_work/<repo>/<repo>` with `_work/_temp` beside (its event file
 * names the workflow's inputs). The runner's folder is closed to others (0700, as a hosted runner's
 * home is to other users); everything below is made with the ordinary umask, as the runner makes it.
 * A job's checkout goes to `work` in the workspace with `placeCheckout`.
 */
export async function runnerLayout(): Promise<RunnerFolders> {
  const runner = await mkdtemp(join(tmpdir(), "consort-runner-"));
  const workspace = join(runner, "_work", "repo", "repo");
  const temp = join(runner, "_work", "_temp");
  await mkdir(workspace, { recursive: true, mode: 0o755 });
  await mkdir(join(temp, "_github_workflow"), { recursive: true, mode: 0o755 });
  await mkdir(join(temp, "_runner_file_commands"), { recursive: true, mode: 0o755 });
  return {
    runner,
    workspace,
    checkout: join(workspace, "work"),
    temp,
    eventPath: join(temp, "_github_workflow", "event.json"),
    resultDir: join(temp, "consort-cycle"),
    remove: () => rm(runner, { recursive: true, force: true }),
  };
}

/** Move a staged checkout to the workspace's `work`, replacing the one an earlier job left (a self-hosted runner's reused workspace). */
export async function placeCheckout(folders: RunnerFolders, checkoutDir: string): Promise<void> {
  await rm(folders.checkout, { recursive: true, force: true });
  await rename(checkoutDir, folders.checkout);
}

/** The bundled action, as `uses: ./.github/actions/consort` runs it (its bootstrap, then the bundle). */
const BUNDLED_ACTION = resolve(dirname(fileURLToPath(import.meta.url)), "../../actions/consort/dist/index.mjs");

/**
 * Run the bundled action's `cycle` step in `folders` the way the runner runs it: a node process in
 * the workspace, the inputs as INPUT_* variables, the dispatch's event file, GITHUB_OUTPUT and
 * GITHUB_STEP_SUMMARY files, the runtime token in its environment. Returns its exit code and the
 * result it left for the upload.
 */
export async function runBundledCycle(
  folders: RunnerFolders,
  job: { request: unknown; config: object; confinedUser: string },
): Promise<{ code: number; result: CycleResult; output: string }> {
  const request = JSON.stringify(job.request);
  await mkdir(join(folders.workspace, ".github"), { recursive: true });
  await writeFile(join(folders.workspace, ".github", "consort.yml"), stringify(job.config));
  await writeFile(folders.eventPath, JSON.stringify({ inputs: { request }, ref: "refs/heads/main" }));
  const commands = join(folders.temp, "_runner_file_commands");
  const env = {
    ...process.env,
    CI: "true",
    CONSORT_TEST_PG_URL: postgresUrl(),
    GITHUB_WORKSPACE: folders.workspace,
    GITHUB_EVENT_PATH: folders.eventPath,
    RUNNER_TEMP: folders.temp,
    ACTIONS_RUNTIME_TOKEN: "runtime-token-that-uploads-artifacts",
    INPUT_STEP: "cycle",
    INPUT_REQUEST: request,
    "INPUT_WORKING-DIRECTORY": "work",
    INPUT_CONFIG: ".github/consort.yml",
    "INPUT_RESULT-DIR": folders.resultDir,
    GITHUB_OUTPUT: join(commands, `set_output_${randomBytes(4).toString("hex")}`),
    GITHUB_STEP_SUMMARY: join(commands, `step_summary_${randomBytes(4).toString("hex")}`),
    CONSORT_CONFINED_USER: job.confinedUser,
  };
  const ran = await new Promise<{ code: number; output: string }>((done) =>
    execFile(
      process.execPath,
      [BUNDLED_ACTION],
      { cwd: folders.workspace, env, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    ),
  );
  const text = await readFile(join(folders.resultDir, CYCLE_RESULT_FILE), "utf8").catch(() => {
    throw new Error(`the action left no result (exit ${ran.code}):\n${ran.output}`);
  });
  return { ...ran, result: CycleResult.parse(JSON.parse(text)) };
}

/**
 * What actions/checkout's post-job step runs in the checkout as the job's user (v4, src/git-auth-helper.ts
 * removeAuth, with its temporary global config that marks the checkout a safe directory).
 */
export async function checkoutPostJob(checkout: string): Promise<void> {
  const home = await mkdtemp(join(tmpdir(), "consort-post-job-"));
  const git = (args: string[]) =>
    new Promise<void>((done) =>
      execFile("git", args, { cwd: checkout, env: { ...process.env, HOME: home } }, () => done()),
    );
  try {
    await git(["config", "--global", "--add", "safe.directory", checkout]);
    for (const key of ["core.sshCommand", "http.https://github.com/.extraheader"]) {
      const pattern = key.replace(/[\^$.*+?()[\]{}|\\/:]/g, "\\$&");
      await git(["config", "--local", "--name-only", "--get-regexp", pattern]);
      await git([
        "submodule",
        "foreach",
        "--recursive",
        `sh -c "git config --local --name-only --get-regexp '${pattern}' && git config --local --unset-all '${key}' || :"`,
      ]);
    }
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
