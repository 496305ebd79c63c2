import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";

/**
 * A vitest-shaped JUnit report as big as a large monorepo's: `files` files of `perFile` tests, one
 * in a hundred failing with a stack trace, and one describe block in fifty whose beforeAll threw
 * (vitest then writes the block as a failed case and its tests as skipped). With the defaults it
 * holds 199,950 testcases in about 50 MB. `hugeFailureMb` adds one failure whose body is that big.
 */
export interface BigReportOptions {
  files?: number;
  perFile?: number;
  hugeFailureMb?: number;
}

export interface BigReport {
  xml: string;
  /** Test-list entries (file and title) spread over the report, some failing, most passing. */
  sample: (count: number) => Array<{ file: string; title: string }>;
}

const trace = (file: string, line: number) =>
  [
    "AssertionError: expected 100 to be 90 // Object.is equality",
    "",
    "- Expected",
    "+ Received",
    "",
    "- 90",
    "+ 100",
    "",
    ...Array.from({ length: 8 }, (_, i) => ` ❯ ${file}:${line + i}:${10 + i}`),
  ].join("\n");

const pad = (n: number) => String(n).padStart(4, "0");

/** A test's own title (without its describe block): long, as titles that say what they check are. */
const testTitle = (t: number, f: number) =>
  `handles case number ${t} of the feature ${f} with care and attention to detail, as the specification of the module asks`;

export function bigVitestReport(options: BigReportOptions = {}): BigReport {
  const files = options.files ?? 1550;
  const perFile = options.perFile ?? 129;
  const parts: string[] = ['<?xml version="1.0" encoding="UTF-8" ?>\n'];
  let failures = 0;
  const body: string[] = [];
  for (let f = 0; f < files; f++) {
    const file = `packages/module-${pad(f % 97)}/test/feature-${pad(f)}.test.ts`;
    const hookBlock = f % 50 === 7;
    body.push(`  <testsuite name="${file}" timestamp="2026-11-30T06:36:26.469Z" hostname="vm" tests="${perFile}">\n`);
    if (hookBlock) {
      failures++;
      body.push(
        `    <testcase classname="${file}" name="setup block" time="0">\n      <failure message="connect ECONNREFUSED" type="Error">\nError: connect ECONNREFUSED 127.0.0.1:5432\n      </failure>\n    </testcase>\n`,
      );
    }
    for (let t = 0; t < perFile; t++) {
      const block = hookBlock && t < 10 ? "setup block" : `group ${t % 7}`;
      const name = `${block} &gt; ${testTitle(t, f)}`;
      const time = ((t % 13) / 1000).toFixed(6);
      if (hookBlock && t < 10) {
        body.push(`    <testcase classname="${file}" name="${name}" time="0">\n      <skipped/>\n    </testcase>\n`);
      } else if ((f * perFile + t) % 100 === 42) {
        failures++;
        body.push(
          `    <testcase classname="${file}" name="${name}" time="${time}">\n      <failure message="expected 100 to be 90 // Object.is equality" type="AssertionError">\n${trace(file, t)}\n      </failure>\n    </testcase>\n`,
        );
      } else {
        body.push(`    <testcase classname="${file}" name="${name}" time="${time}">\n    </testcase>\n`);
      }
    }
    body.push("  </testsuite>\n");
  }
  if (options.hugeFailureMb) {
    failures++;
    const line = "    at Object.&lt;anonymous&gt; (/work/app/src/deep/module.ts:10:20) &amp; more &lt;frames&gt;\n";
    const huge = line.repeat(Math.ceil((options.hugeFailureMb * 1024 * 1024) / line.length));
    body.push(
      `  <testsuite name="test/huge.test.ts" tests="1">\n    <testcase classname="test/huge.test.ts" name="huge &gt; fails loudly" time="1">\n      <failure message="boom" type="TypeError">\nTypeError: boom\n${huge}      </failure>\n    </testcase>\n  </testsuite>\n`,
    );
  }
  parts.push(`<testsuites name="vitest tests" tests="${files * perFile}" failures="${failures}" errors="0">\n`);
  const xml = parts.join("") + body.join("") + "</testsuites>\n";
  const sample = (count: number) =>
    Array.from({ length: count }, (_, i) => {
      const f = Math.floor((i * files) / count);
      const t = (i * 37) % perFile;
      const block = f % 50 === 7 && t < 10 ? "setup block" : `group ${t % 7}`;
      return {
        file: `packages/module-${pad(f % 97)}/test/feature-${pad(f)}.test.ts`,
        title: `${block} > ${testTitle(t, f)}`,
      };
    });
  return { xml, sample };
}

export interface BigReportMeasure {
  /** Milliseconds from opening the report to the verdict, one per run. */
  ms: number[];
  /** The largest peak RSS of the reading processes, in MB. */
  maxRssMb: number;
  testcases: number;
  reportMb: number;
}

const JudgeLine = z.object({
  ms: z.number(),
  maxRssMb: z.number(),
  testcases: z.number().int(),
  found: z.number().int(),
  looked: z.number().int(),
});

/**
 * Writes the default big report and its 100-test sample to a temp folder, then reads and judges
 * it `runs` times, each in a fresh process (big-report-judge.ts), so the peak RSS counted is the
 * reader's alone. Throws when a run did not find every test: a bench that looked up nothing
 * measured nothing.
 */
export function measureBigReport(runs: number): BigReportMeasure {
  const dir = mkdtempSync(join(tmpdir(), "consort-bench-big-report-"));
  try {
    const big = bigVitestReport();
    const reportPath = join(dir, "junit.xml");
    const samplePath = join(dir, "sample.json");
    writeFileSync(reportPath, big.xml);
    writeFileSync(samplePath, JSON.stringify(big.sample(100)));
    const reportMb = Buffer.byteLength(big.xml) / (1024 * 1024);
    const judge = fileURLToPath(new URL("big-report-judge.ts", import.meta.url));
    const lines = Array.from({ length: runs }, () => {
      const out = execFileSync(process.execPath, ["--import", "tsx", judge, reportPath, samplePath], {
        encoding: "utf8",
      });
      const line = JudgeLine.parse(JSON.parse(out.trim().split("\n").pop() ?? ""));
      if (line.found !== line.looked || line.looked !== 100)
        throw new Error(`the big report lacked ${line.looked - line.found} of the ${line.looked} tests looked up`);
      return line;
    });
    return {
      ms: lines.map((l) => l.ms),
      maxRssMb: Math.max(...lines.map((l) => l.maxRssMb)),
      testcases: lines[0]?.testcases ?? 0,
      reportMb,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
