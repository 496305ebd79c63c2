import type { RunnerTask as Task, RunnerTestCase as Test, RunnerTestFile as File } from "vitest";
import type { Reporter, Vitest } from "vitest/node";

/**
 * A vitest reporter for mutation runs only (vitest.mutate.config.ts): a test file that failed to
 * load gets one failed test carrying its load error.
 *
 * Stryker's vitest runner (9.6.1, and 10.x: stryker-js#6150) builds its results from the tests it
 * finds in vitest's state once a run ends, and a file whose import throws holds none. So a broken
 * test file in the initial run silently covers nothing, and a mutant that stops a module from
 * loading is scored "survived". With this test in the state, the initial run has a failed test and
 * Stryker stops with an error naming the file; a mutant that breaks loading is killed.
 */

const NAME = "the test file loads";

function holdsATest(task: Task): boolean {
  return task.type === "test" || (task.type === "suite" && task.tasks.some(holdsATest));
}

/** Adds the failed test to every file that failed and holds no test; returns the files it changed. */
function failUnloadedFiles(files: readonly File[]): File[] {
  const changed: File[] = [];
  for (const file of files) {
    if (file.result?.state !== "fail" || file.tasks.some(holdsATest)) continue;
    const errors = file.result.errors?.length
      ? file.result.errors
      : [{ message: `${file.filepath} failed to load`, name: "Error" }];
    const test: Test = {
      type: "test",
      id: `${file.id}_load`,
      name: NAME,
      fullName: `${file.name} ${NAME}`,
      fullTestName: NAME,
      mode: "run",
      meta: {},
      file,
      suite: file,
      context: undefined as unknown as Test["context"], // nothing reads a finished test's context
      annotations: [],
      artifacts: [],
      timeout: 0,
      result: { state: "fail", errors, duration: 0 },
    };
    file.tasks.push(test);
    changed.push(file);
  }
  return changed;
}

export default class MutateLoadGuard implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  /** Stryker reads `vitest.state` once the run ends: that is what this changes. */
  onTestRunEnd(): void {
    for (const file of failUnloadedFiles(this.vitest?.state.getFiles() ?? [])) {
      const reason = file.result?.errors?.[0]?.message ?? "unknown error";
      process.stderr.write(`mutate: ${file.filepath} did not load, counted as a failed test: ${reason}\n`);
    }
  }
}
