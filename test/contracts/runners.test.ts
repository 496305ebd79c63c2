import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { JUNIT_README, README, withReportReading, withRunners } from "../../scripts/docs.js";
import { readJUnitReports } from "../../src/cycle/junit/index.js";
import { FLAVOURS } from "../../src/contracts/runners.js";
import { RUNNERS, runnersTable } from "../../src/contracts/runners.js";
import { FIXTURES } from "../cycle/junit/fixtures.js";

/** The supported-runners table (src/contracts/runners.ts) is the one list: the README shows it, and each row has a real report. */

describe("the supported runners' table", () => {
  it("has one row for every runner the cycle reads, and only those", () => {
    expect(RUNNERS.map((r) => r.runner)).toEqual(FLAVOURS.filter((f) => f !== "unknown"));
  });

  it.each(RUNNERS.map((r) => [r.runner, r] as const))(
    "%s: a report its real runner wrote is read as that runner's",
    async (runner) => {
      const folder = join(FIXTURES, runner);
      const reports = (await readdir(folder)).filter((f) => f.endsWith(".xml"));
      const dirs = runner === "surefire" ? ["reports"] : [];
      const found = [...reports, ...dirs];
      expect(found.length).toBeGreaterThan(0);
      for (const report of found) {
        const { report: read } = await readJUnitReports(join(folder, report));
        expect([report, read.flavour]).toEqual([report, runner]);
      }
    },
  );

  it("is what the README's runner section shows (npm run docs regenerates it)", async () => {
    const readme = await readFile(README, "utf8");
    expect(withRunners(readme)).toBe(readme);
    expect(readme).toContain(runnersTable());
    for (const r of RUNNERS) expect(readme).toContain(`| ${r.title} |`);
  });

  it("is what src/cycle/junit/README.md's table of how each report reads shows (npm run docs regenerates it)", async () => {
    const notes = await readFile(JUNIT_README, "utf8");
    expect(withReportReading(notes)).toBe(notes);
    for (const r of RUNNERS) expect(notes).toContain(`| ${r.title} | ${r.failures} | ${r.unloadable} |`);
  });
});
