import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { TestList } from "../contracts/test-list.js";
import { formatZodError } from "../contracts/zod-error.js";
import { hashFrozenText } from "../gates/freeze.js";
import { sanitiseBranchName } from "../substrate/index.js";
import { CycleInputError, CycleRequest, type CycleStep, type CycleTest } from "../contracts/cycle-request.js";

/**
 * `consort cycle` on a local checkout builds the same request the app would dispatch, from flags
 * and the checkout's `.consort/test-list.json`, so a person sees the verdict before pushing.
 */

const git = promisify(execFile);

export interface LocalCycleOptions {
  cwd: string;
  step: CycleStep;
  /** Test ids in turn (e.g. ["T7"]). */
  tests: string[];
  /** Earlier green test ids; default every test before the first one in turn (release: all). */
  earlier?: string[];
  track?: string;
  dbBranch?: string;
  testListPath?: string;
  /** Freeze the test files of the earlier (and, after RED, the turn's) tests as they are at this ref. */
  frozenAt?: string;
  /**
   * For a RED: the commit the design gate approved (a declared module absent there is one the track
   * creates). Default: the merge base with the default branch, the tree the track started from.
   */
  designApprovedAt?: string;
}

/**
 * What a local rehearsal (`consort cycle`, the run_cycle tool) does not check, said wherever it
 * reports: it judges the tests exactly as the app's cycle does, but not the commit itself.
 */
export const REHEARSAL_LIMITS =
  "This rehearsal judges the tests as the app's cycle does, but does not apply the app's role and path rules to the commit under test " +
  "(its Consort-Role trailer, whose turn it is, which paths that role may change now: a RED only test files, a GREEN only code and migrations; frozen and protected files). " +
  "The app refuses a commit that breaks them before any cycle runs: `consort orchestrate` (or the explain_rejection tool) replays the branch's commits through those rules.";

async function gitOut(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await git("git", args, { cwd, maxBuffer: 32 * 1024 * 1024 });
  return stdout;
}

async function loadTestList(path: string): Promise<TestList> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new CycleInputError(`cannot read the test list ${path}: ${(error as Error).message}`);
  }
  const parsed = TestList.safeParse(raw);
  if (!parsed.success) throw new CycleInputError(formatZodError(parsed.error, `${path} is not a valid test list`));
  return parsed.data;
}

export async function buildLocalRequest(options: LocalCycleOptions): Promise<CycleRequest> {
  const { cwd, step } = options;
  const list = await loadTestList(options.testListPath ?? join(cwd, ".consort/test-list.json"));
  const byId = new Map(list.tests.map((t) => [t.id, t]));
  const pick = (id: string): CycleTest => {
    const entry = byId.get(id);
    if (!entry)
      throw new CycleInputError(
        `test ${id} is not in the test list (it has ${list.tests.map((t) => t.id).join(", ")})`,
      );
    return { id: entry.id, file: entry.file, title: entry.title };
  };
  const inTurn = options.tests.map(pick);
  let earlier: CycleTest[];
  if (options.earlier) earlier = options.earlier.map(pick);
  else if (step === "release" && inTurn.length === 0) earlier = list.tests.map((t) => pick(t.id));
  else {
    const first = inTurn.length ? list.tests.findIndex((t) => t.id === inTurn[0]!.id) : list.tests.length;
    earlier = list.tests
      .slice(0, first)
      .map((t) => pick(t.id))
      .filter((t) => !inTurn.some((i) => i.id === t.id));
  }

  let commit: string;
  let branch: string;
  try {
    commit = (await gitOut(cwd, ["rev-parse", "HEAD"])).trim();
    branch = options.track ?? (await gitOut(cwd, ["rev-parse", "--abbrev-ref", "HEAD"])).trim();
  } catch {
    throw new CycleInputError(`${cwd} is not a git checkout with a commit: a cycle tests a commit`);
  }
  const frozenTestFiles: Array<{ path: string; sha256: string; commit: string }> = [];
  if (options.frozenAt) {
    let frozenCommit: string;
    try {
      frozenCommit = (await gitOut(cwd, ["rev-parse", "--verify", `${options.frozenAt}^{commit}`])).trim();
    } catch {
      throw new CycleInputError(`--frozen-at ${options.frozenAt} is not a commit of this checkout`);
    }
    const files = new Set([...earlier, ...(step === "red" ? [] : inTurn)].map((t) => t.file));
    for (const path of files) {
      let text: string;
      try {
        text = await gitOut(cwd, ["show", `${frozenCommit}:${path}`]);
      } catch {
        continue; // not there at that ref: nothing was frozen yet
      }
      // The runner reads the frozen text from git at this commit, as it does for the app's requests.
      frozenTestFiles.push({ path, sha256: hashFrozenText(text), commit: frozenCommit });
    }
  }
  const architecture = step === "red" ? await localArchitecture(cwd, commit, options.designApprovedAt) : undefined;
  const parsed = CycleRequest.safeParse({
    track: branch,
    step,
    commit,
    tests: { inTurn, earlierGreen: earlier },
    frozenTestFiles,
    ...(architecture ? { architecture } : {}),
    database: { branch: options.dbBranch ?? sanitiseBranchName(branch) },
  });
  if (!parsed.success)
    throw new CycleInputError(formatZodError(parsed.error, "the options do not make a valid cycle request"));
  return parsed.data;
}

const ARCHITECTURE_PATH = ".consort/architecture.json";

/**
 * The architecture a local RED is judged against: the checkout's, at the commit, and the commit
 * taken as the design gate's (given, else the merge base with the default branch). None when the
 * checkout has no architecture or no such commit: then no module counts as declared.
 */
async function localArchitecture(
  cwd: string,
  commit: string,
  approvedAt: string | undefined,
): Promise<{ path: string; sha256: string; approvedAt: string } | undefined> {
  let text: string;
  try {
    text = await gitOut(cwd, ["show", `${commit}:${ARCHITECTURE_PATH}`]);
  } catch {
    return undefined;
  }
  const candidates = approvedAt ? [approvedAt] : ["origin/HEAD", "origin/main", "origin/master", "main", "master"];
  for (const ref of candidates) {
    try {
      const base = approvedAt
        ? (await gitOut(cwd, ["rev-parse", "--verify", `${ref}^{commit}`])).trim()
        : (await gitOut(cwd, ["merge-base", commit, ref])).trim();
      if (base) return { path: ARCHITECTURE_PATH, sha256: hashFrozenText(text), approvedAt: base };
    } catch {
      // not a ref of this checkout: try the next
    }
  }
  if (approvedAt) throw new CycleInputError(`--design-approved-at ${approvedAt} is not a commit of this checkout`);
  return undefined;
}
