/**
 * A vitest-shaped JUnit report as big as a large monorepo's: `files` files of `perFile` tests, one
 * in a hundred failing with a stack trace, and one describe block in fifty whose beforeAll threw
 * (vitest then writes the block as a failed case and its tests as skipped). With the defaults it
 * holds 193,500 testcases in about 50 MB. `hugeFailureMb` adds one failure whose body is that big.
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

export function bigVitestReport(options: BigReportOptions = {}): BigReport {
  const files = options.files ?? 1500;
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
      const name = `${block} &gt; handles case number ${t} of the feature ${f} with care and attention to detail`;
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
        title: `${block} > handles case number ${t} of the feature ${f} with care and attention to detail`,
      };
    });
  return { xml, sample };
}
