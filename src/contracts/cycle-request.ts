import { z } from "zod";
import { RepoPath, TestId } from "./ids.js";
import { formatZodError } from "./zod-error.js";

/**
 * The one JSON input the app dispatches to `.github/workflows/consort-cycle.yml` (docs/ARCHITECTURE.md, Cycles), and
 * what `consort cycle` builds from flags locally. Parsed once, here, where it enters the runner.
 */

export const CYCLE_STEPS = ["red", "green", "refactor", "release"] as const;
export const CycleStep = z.enum(CYCLE_STEPS);
export type CycleStep = z.infer<typeof CycleStep>;
/** The steps of a test cycle (red, green, refactor): every step but the release. */
export const TestCycleStep = CycleStep.exclude(["release"]);

export const CommitSha = z.string().regex(/^[0-9a-f]{40}$/, "a full 40-character lowercase commit sha");
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 hex digest (64 lowercase hex characters)");

/** A test the cycle is about: the test list's id, file and the exact title the runner reports. */
export const CycleTest = z
  .object({
    id: TestId,
    file: RepoPath,
    title: z.string().trim().min(1),
  })
  .strict();
export type CycleTest = z.infer<typeof CycleTest>;

/**
 * A test file frozen by a verified RED: its hash, and the commit whose verified RED froze it. The
 * request never carries the text (GitHub caps a dispatch's inputs at 65,535 characters): a RED step
 * reads the frozen text from git at `commit` (the checkout has full history) to check that the
 * file was only added to, and trusts it only if it hashes to `sha256`.
 */
export const FrozenTestFile = z
  .object({
    path: RepoPath,
    sha256: Sha256,
    commit: CommitSha.optional(),
  })
  .strict();
export type FrozenTestFile = z.infer<typeof FrozenTestFile>;

/**
 * Test ids as the test list numbers them (T1 … Tn in list order): one id, `T7`, or a run of
 * consecutive ids, `T1-T40`, so a long track's earlier green tests take a few characters.
 */
const TEST_ID_RUN = /^T([1-9]\d{0,5})(?:-T([1-9]\d{0,5}))?$/;
export const TestIdRun = z
  .string()
  .regex(TEST_ID_RUN, "a test id (T7) or a run of consecutive ids (T1-T40)")
  .refine((run) => {
    const [, from, to] = TEST_ID_RUN.exec(run) ?? [];
    return to === undefined || Number(from) < Number(to);
  }, "a run of ids goes up: T1-T40, not T40-T1");

/** The ids a list of runs names, in the order given. */
export function idsOfRuns(runs: readonly string[]): string[] {
  return runs.flatMap((run) => {
    const [, from, to] = TEST_ID_RUN.exec(run) ?? [];
    if (from === undefined) return [];
    const first = Number(from);
    const last = to === undefined ? first : Number(to);
    return Array.from({ length: last - first + 1 }, (_, i) => `T${first + i}`);
  });
}

/** The id numbers a list of runs spans, as [first, last] ranges (a run that does not parse spans none). */
function rangesOfRuns(runs: readonly string[]): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (const run of runs) {
    const [, from, to] = TEST_ID_RUN.exec(run) ?? [];
    if (from !== undefined) ranges.push([Number(from), to === undefined ? Number(from) : Number(to)]);
  }
  return ranges;
}

/**
 * Whether no id is named twice by the runs of both lists, told from their ranges: a long track's
 * earlier green tests are one run of hundreds of ids, which need not be spelled out to find none.
 */
function runsAreDisjoint(lists: ReadonlyArray<readonly string[]>): boolean {
  const ranges = lists.flatMap(rangesOfRuns).sort((a, b) => a[0] - b[0]);
  return ranges.every(([first, last], i) => last >= first && (i === 0 || first > ranges[i - 1]![1]));
}

/** Test ids as runs (`T1-T40`), in id order: what the app dispatches instead of one entry per test. */
export function runsOfIds(ids: readonly string[]): string[] {
  const numbers = [...new Set(ids.map((id) => Number(id.slice(1))))].sort((a, b) => a - b);
  const runs: string[] = [];
  for (let i = 0; i < numbers.length;) {
    let j = i;
    while (j + 1 < numbers.length && numbers[j + 1] === numbers[j]! + 1) j++;
    runs.push(i === j ? `T${numbers[i]}` : `T${numbers[i]}-T${numbers[j]}`);
    i = j + 1;
  }
  return runs;
}

/**
 * The approved test list as git holds it at the commit under test: its path and the hash the
 * test-list gate froze. The job reads each test's file and title there, and refuses when the file
 * it reads does not hash to `sha256`: the request never carries a test's title.
 */
export const TestListRef = z.object({ path: RepoPath, sha256: Sha256 }).strict();

/**
 * The architecture the design gate approved, as git holds it at the commit under test (`path`,
 * trusted only if it hashes to `sha256`), and the commit the gate was approved on. The modules it
 * declares that did not exist at `approvedAt` are the ones the track creates: a RED whose tests
 * fail only because one of them (or a name it declares in `exports`) is not written yet is
 * "behaviour missing", not a crash. The job reads both trees; the request carries no file text.
 */
export const ArchitectureRef = z.object({ path: RepoPath, sha256: Sha256, approvedAt: CommitSha }).strict();
export type ArchitectureRef = z.infer<typeof ArchitectureRef>;

/** A database branch id as the providers take it (see BRANCH_ID_PATTERN in src/substrate/names.ts). */
export const BranchId = z.string().min(1).max(63);

/** The fields every request the app dispatches starts with: cycle, deploy, promote and agent turn. */
export const dispatchedRequest = {
  version: z.literal(1).default(1),
  /** The app's id for this dispatch (recorded in the track's state), echoed in the result. */
  dispatchId: z.string().min(1).max(200).optional(),
  /** The track: the git branch under Consort. */
  track: z.string().trim().min(1).max(255),
};

/** What every result of a dispatched request starts with: its version and the request it answers. */
export function answering<R extends z.ZodType>(request: R) {
  return { version: z.literal(1), request };
}

export const CycleRequest = z
  .object({
    ...dispatchedRequest,
    step: CycleStep,
    /** The commit to test; the checkout must be exactly this commit. */
    commit: CommitSha,
    tests: z
      .object({
        /** The tests this step is about: RED must see each fail by an assertion, GREEN pass. */
        inTurn: z.array(CycleTest).default([]),
        /** Tests verified green in earlier cycles: every step needs them still passing. */
        earlierGreen: z.array(CycleTest).default([]),
      })
      .strict()
      .default({ inTurn: [], earlierGreen: [] }),
    /**
     * What the app dispatches instead of `tests`: the tests by id in the approved test list, so the
     * request does not grow with the track (GitHub caps a dispatch's inputs at 65,535 characters).
     * `tests` then stays empty; the job fills it from the list it reads from git at `commit`.
     */
    testList: TestListRef.extend({
      inTurn: z.array(TestIdRun).default([]),
      earlierGreen: z.array(TestIdRun).default([]),
    })
      .strict()
      .optional(),
    frozenTestFiles: z.array(FrozenTestFile).default([]),
    architecture: ArchitectureRef.optional(),
    database: z
      .object({
        /** The track's database branch; the cycle forks a throwaway branch from it. */
        branch: BranchId,
      })
      .strict(),
    /**
     * What the track is compared with to tell its own test changes from the trunk's existing tests
     * (a REFACTOR refuses the track's changes to test files no verified RED froze). The cycle takes
     * the merge base of the checkout's HEAD with `commit` if given, else with the branch `branch`
     * (`origin/<branch>`, then the local branch). Optional for older requests: without it the
     * checkout's default branch is used, and a refactor that cannot find a base refuses.
     */
    base: z
      .object({
        commit: CommitSha.optional(),
        branch: z.string().trim().min(1).max(255).optional(),
      })
      .strict()
      .refine((base) => base.commit !== undefined || base.branch !== undefined, {
        message: "a base needs a commit or a branch (or leave base out)",
      })
      .optional(),
    /** Time to live of the throwaway branch, so a job killed mid-cycle leaves nothing for long. */
    ttlSeconds: z.number().int().min(60).max(86_400).default(3600),
  })
  .strict()
  .superRefine((request, ctx) => {
    const where = request.testList ? "testList" : "tests";
    const runs = request.testList;
    // By ranges when the runs overlap nowhere (the app's own requests): every rule below then holds but the first.
    if (
      runs &&
      request.tests.inTurn.length + request.tests.earlierGreen.length === 0 &&
      runsAreDisjoint([runs.inTurn, runs.earlierGreen])
    ) {
      if ((request.step === "red" || request.step === "green") && rangesOfRuns(runs.inTurn).length === 0)
        ctx.addIssue({
          code: "custom",
          path: [where, "inTurn"],
          message: `a ${request.step} step needs at least one test in turn`,
        });
      checkFrozenPaths(request.frozenTestFiles, ctx);
      return;
    }
    const ids = testIdsOf(request);
    if (request.testList && request.tests.inTurn.length + request.tests.earlierGreen.length > 0)
      ctx.addIssue({
        code: "custom",
        path: ["tests"],
        message: "a request names its tests either in full (tests) or by id in the test list (testList), not both",
      });
    if ((request.step === "red" || request.step === "green") && ids.inTurn.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: [where, "inTurn"],
        message: `a ${request.step} step needs at least one test in turn`,
      });
    }
    const seen = new Map<string, string>();
    for (const group of ["inTurn", "earlierGreen"] as const) {
      ids[group].forEach((id, index) => {
        const other = seen.get(id);
        if (other)
          ctx.addIssue({
            code: "custom",
            path: request.testList ? [where, group] : [where, group, index, "id"],
            message: `${id} is listed twice (also in ${other})`,
          });
        else seen.set(id, group);
      });
    }
    checkFrozenPaths(request.frozenTestFiles, ctx);
  });
export type CycleRequest = z.infer<typeof CycleRequest>;

function checkFrozenPaths(files: readonly FrozenTestFile[], ctx: z.RefinementCtx): void {
  const paths = new Set<string>();
  files.forEach((file, index) => {
    if (paths.has(file.path))
      ctx.addIssue({
        code: "custom",
        path: ["frozenTestFiles", index, "path"],
        message: `${file.path} is frozen twice`,
      });
    paths.add(file.path);
  });
}
export type CycleRequestInput = z.input<typeof CycleRequest>;

/** The ids of the tests a request is about, whichever way it names them. */
export function testIdsOf(request: Pick<CycleRequest, "tests" | "testList">): {
  inTurn: string[];
  earlierGreen: string[];
} {
  if (request.testList)
    return { inTurn: idsOfRuns(request.testList.inTurn), earlierGreen: idsOfRuns(request.testList.earlierGreen) };
  return {
    inTurn: request.tests.inTurn.map((t) => t.id),
    earlierGreen: request.tests.earlierGreen.map((t) => t.id),
  };
}

/** Parse a request from the workflow input (JSON text), naming the field and rule on failure. */
export function parseCycleRequest(json: string, source = "the cycle request"): CycleRequest {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch (error) {
    throw new CycleInputError(`${source} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = CycleRequest.safeParse(data);
  if (!parsed.success)
    throw new CycleInputError(formatZodError(parsed.error, `${source} is not a valid cycle request`));
  return parsed.data;
}

/** A request or option that cannot start a cycle: nothing ran, nothing was created. */
export class CycleInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CycleInputError";
  }
}
