import { cp, mkdtemp, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  clearReports,
  findTestCase,
  locateTestCase,
  locateTestCases,
  parseJUnit,
  readJUnitReports,
} from "../../../src/cycle/junit/index.js";
import { FIXTURES } from "./fixtures.js";

/** Reading reports from disk as a cycle does, with copies of Surefire's real report folder. */

let dir: string;
const runStarted = Date.parse("2026-06-01T12:00:00Z");
const before = new Date(runStarted - 60_000);
const after = new Date(runStarted + 5_000);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "consort-junit-read-"));
  await cp(join(FIXTURES, "surefire", "reports"), join(dir, "surefire-reports"), { recursive: true });
  for (const name of ["TEST-shop.CartTest.xml", "TEST-shop.RefundTest.xml", "TEST-shop.StockTest.xml"]) {
    await utimes(join(dir, "surefire-reports", name), after, after);
  }
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("reading a folder of reports (Surefire's target/surefire-reports)", () => {
  it("reads every report this run wrote into one", async () => {
    const { report, files } = await readJUnitReports(join(dir, "surefire-reports"), { notBefore: runStarted });
    expect(files).toHaveLength(3);
    expect(report.flavour).toBe("surefire");
    expect(
      findTestCase(report, { file: "src/test/java/shop/CartTest.java", title: "appliesATenPercentDiscount" })?.outcome,
    ).toBe("failed-assertion");
  });

  it("skips a report an earlier run left behind, and says which", async () => {
    const old = join(dir, "surefire-reports", "TEST-shop.CartTest.xml");
    await utimes(old, before, before);
    const { report, staleFiles } = await readJUnitReports(join(dir, "surefire-reports"), { notBefore: runStarted });
    expect(staleFiles).toEqual([old]);
    expect(
      findTestCase(report, { file: "src/test/java/shop/CartTest.java", title: "totalsThePricesOfItsItems" }),
    ).toBeUndefined();
  });

  it("refuses a folder where this run wrote nothing", async () => {
    for (const name of ["TEST-shop.CartTest.xml", "TEST-shop.RefundTest.xml", "TEST-shop.StockTest.xml"]) {
      await utimes(join(dir, "surefire-reports", name), before, before);
    }
    await expect(readJUnitReports(join(dir, "surefire-reports"), { notBefore: runStarted })).rejects.toMatchObject({
      code: "no-report",
      message: expect.stringContaining("only 3 report(s) an earlier run left behind"),
    });
  });
});

describe("reading one report file", () => {
  it("refuses a report older than the run", async () => {
    const file = join(dir, "surefire-reports", "TEST-shop.CartTest.xml");
    await utimes(file, before, before);
    await expect(readJUnitReports(file, { notBefore: runStarted })).rejects.toMatchObject({ code: "stale-report" });
  });

  it("refuses a path where the test command wrote nothing", async () => {
    await expect(readJUnitReports(join(dir, "junit.xml"))).rejects.toMatchObject({ code: "no-report" });
  });

  it("names the file when a report in it is not JUnit", async () => {
    const pom = join(dir, "pom.xml");
    await cp(join(FIXTURES, "surefire", "project", "pom.xml"), pom);
    await expect(readJUnitReports(pom)).rejects.toMatchObject({
      code: "not-junit",
      message: expect.stringContaining(pom),
    });
  });
});

describe("reports named by a glob, and clearing what an earlier run left", () => {
  const vitestReport = (file: string, title: string) =>
    `<testsuites name="vitest tests"><testsuite name="${file}"><testcase classname="${file}" name="${title}"/></testsuite></testsuites>`;

  it("reads every report the glob matches as one run, never one under node_modules", async () => {
    const { mkdir, writeFile } = await import("node:fs/promises");
    for (const pkg of ["cart", "stock", "node_modules/dep"]) {
      await mkdir(join(dir, "packages", pkg), { recursive: true });
      await writeFile(join(dir, "packages", pkg, "junit.xml"), vitestReport(`test/${pkg}.test.ts`, `${pkg} works`));
    }
    const { report, files } = await readJUnitReports("packages/*/junit.xml", { cwd: dir });
    expect(files.map((f) => f.slice(dir.length))).toEqual(["/packages/cart/junit.xml", "/packages/stock/junit.xml"]);
    expect(report.tests.map((t) => t.name)).toEqual(["cart works", "stock works"]);
  });

  it("clears only the .xml reports of a folder or glob, never another file or a folder", async () => {
    const { mkdir, readdir, writeFile } = await import("node:fs/promises");
    const reports = join(dir, "surefire-reports");
    await writeFile(join(reports, "notes.txt"), "keep me");
    await mkdir(join(reports, "old.xml"));
    const removed = await clearReports("surefire-reports/", dir);
    expect(removed).toHaveLength(3);
    expect((await readdir(reports)).sort()).toEqual(["notes.txt", "old.xml"].sort());
    await expect(readJUnitReports("surefire-reports/", { cwd: dir })).rejects.toMatchObject({ code: "no-report" });
  });

  it("names the runner when the repository says which, whatever its report looks like", async () => {
    const { writeFile } = await import("node:fs/promises");
    await writeFile(
      join(dir, "junit.xml"),
      `<testsuites><testsuite name="a"><testcase classname="a" name="x"><failure>Error: expect(received).toBe(expected)</failure></testcase></testsuite></testsuites>`,
    );
    expect((await readJUnitReports("junit.xml", { cwd: dir })).report.flavour).toBe("unknown");
    const named = await readJUnitReports("junit.xml", { cwd: dir, flavour: "jest" });
    expect(named.report.flavour).toBe("jest");
    expect(named.report.tests[0]?.outcome).toBe("failed-assertion");
  });
});

describe("a big report", () => {
  it("folds vitest's failed hook blocks and finds tests by title, in a report of thousands of cases", async () => {
    const { bigVitestReport } = await import("../../../bench/big-report.js");
    const big = bigVitestReport({ files: 60, perFile: 40 });
    const report = parseJUnit(big.xml);
    // File 7 of every fifty has a failed "setup block" whose ten tests vitest wrote as skipped.
    expect(report.tests.some((t) => t.name === "setup block")).toBe(false);
    const hooked = report.tests.filter((t) => t.message?.startsWith('a beforeAll/afterAll hook of "setup block"'));
    expect(hooked).toHaveLength(20);
    expect(hooked.every((t) => t.outcome === "failed-error")).toBe(true);
    for (const query of big.sample(30)) expect(locateTestCase(report, query).status).toBe("found");
  });

  it("finds many tests in one pass exactly as it finds each alone, with or without the title index built", async () => {
    const { bigVitestReport } = await import("../../../bench/big-report.js");
    const big = bigVitestReport({ files: 60, perFile: 40 });
    const [first] = big.sample(1);
    const queries = [
      ...big.sample(30),
      { file: "packages/module-0000/test/feature-0000.test.ts", title: "no such test" },
      { file: "test/elsewhere.test.ts", title: first!.title },
    ];
    const oneByOne = parseJUnit(big.xml);
    const alone = queries.map((query) => locateTestCase(oneByOne, query));
    expect(alone.map((l) => l.status)).toEqual([...Array(30).fill("found"), "missing", "missing"]);
    // A fresh report has no index: the pass looks titles up among the queries' forms.
    expect(locateTestCases(parseJUnit(big.xml), queries)).toEqual(alone);
    // The report whose index the single lookups built: the pass reads the index.
    expect(locateTestCases(oneByOne, queries)).toEqual(alone);
  });

  it("keeps a failure body of megabytes to its head and tail", async () => {
    const { bigVitestReport } = await import("../../../bench/big-report.js");
    const report = parseJUnit(bigVitestReport({ files: 1, perFile: 1, hugeFailureMb: 8 }).xml);
    const huge = report.tests.find((t) => t.name === "huge > fails loudly");
    expect(huge).toMatchObject({ outcome: "failed-error", type: "TypeError", message: "boom" });
  });
});
