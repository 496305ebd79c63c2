import { readFileSync } from "node:fs";
import { z } from "zod";
import { readJUnitReports } from "../src/cycle/junit/index.js";
import { CycleRequest } from "../src/contracts/cycle-request.js";
import { decideVerdict } from "../src/cycle/verdict.js";

/**
 * The child of the big-report bench (cycle.bench.ts): reads the report file the parent wrote,
 * and judges a GREEN of 100 test-list entries against it, as a cycle does. It runs in a process of
 * its own so its peak RSS is what reading and judging cost, not the generator's copy of the report.
 * Prints one JSON line: the milliseconds from opening the report to the verdict, the peak RSS, and
 * how many of the 100 tests the report had (all of them, or the bench measured nothing).
 */

const Args = z.tuple([z.string().min(1), z.string().min(1)]);
const [reportPath, samplePath] = Args.parse(process.argv.slice(2));
const Sample = z.array(z.object({ file: z.string(), title: z.string() })).min(1);
const sample = Sample.parse(JSON.parse(readFileSync(samplePath, "utf8")));
const tests = sample.map((t, i) => ({ id: `T${i + 1}`, ...t }));

const start = performance.now();
const { report } = await readJUnitReports(reportPath);
const verdict = decideVerdict({
  request: CycleRequest.parse({
    track: "bench",
    step: "green",
    commit: "b".repeat(40),
    tests: { inTurn: tests.slice(-1), earlierGreen: tests.slice(0, -1) },
    database: { branch: "bench" },
  }),
  report,
  testExitCode: 1,
  frozenFiles: [],
});
const ms = performance.now() - start;
console.log(
  JSON.stringify({
    ms,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    testcases: report.tests.length,
    found: verdict.tests.filter((t) => t.outcome !== "missing").length,
    looked: verdict.tests.length,
  }),
);
