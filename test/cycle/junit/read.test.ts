import { cp, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
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

describe("where the junit setting points", () => {
  const report = (name: string) =>
    `<testsuites name="vitest tests"><testsuite name="test/${name}.test.ts"><testcase classname="test/${name}.test.ts" name="${name}"/></testsuite></testsuites>`;
  const put = async (path: string, text: string, time = after) => {
    const { mkdir, writeFile } = await import("node:fs/promises");
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), text);
    await utimes(join(dir, path), time, time);
  };
  const names = async (setting: string) =>
    (await readJUnitReports(setting, { cwd: dir, notBefore: runStarted })).report.tests.map((t) => t.name);

  it("refuses with the exact reason: no file, a folder with no report, a glob that matches none", async () => {
    const { mkdir } = await import("node:fs/promises");
    await mkdir(join(dir, "empty"));
    const refusal = (setting: string) =>
      readJUnitReports(setting, { cwd: dir }).then(
        () => undefined,
        (error: { code: string; message: string }) => ({ code: error.code, message: error.message }),
      );
    expect(await refusal("junit.xml")).toEqual({
      code: "no-report",
      message:
        "no JUnit report at junit.xml: the test command wrote none there (check its reporter settings and output path)",
    });
    expect(await refusal("empty")).toEqual({
      code: "no-report",
      message: "the JUnit report folder empty has no .xml report: this test run wrote none there",
    });
    expect(await refusal("missing/")).toEqual({
      code: "no-report",
      message: "the JUnit report folder missing/ has no .xml report: this test run wrote none there",
    });
    expect(await refusal("reports/*.xml")).toEqual({
      code: "no-report",
      message: "the JUnit report files matching reports/*.xml has no .xml report: this test run wrote none there",
    });
    await put("old/junit.xml", report("old"), before);
    await put("old.xml", report("old"), before);
    expect(
      await readJUnitReports("old.xml", { cwd: dir, notBefore: runStarted }).then(
        () => undefined,
        (error: { code: string; message: string }) => ({ code: error.code, message: error.message }),
      ),
    ).toEqual({
      code: "stale-report",
      message: "the JUnit report old.xml is older than this test run: an earlier run left it, so it proves nothing",
    });
    expect(
      await readJUnitReports("old/*.xml", { cwd: dir, notBefore: runStarted }).then(
        () => undefined,
        (error: { message: string }) => error.message,
      ),
    ).toBe(
      "the JUnit report files matching old/*.xml has only 1 report(s) an earlier run left behind: this test run wrote none there",
    );
  });

  it("names the file a broken report is in, with the parser's reason", async () => {
    await put("bad.xml", "<testsuites>");
    await expect(readJUnitReports("bad.xml", { cwd: dir })).rejects.toMatchObject({
      code: "malformed-xml",
      message: `${join(dir, "bad.xml")}: the JUnit report is not well-formed XML at line 1, column 12: unclosed tag: testsuites (was the run cut short while writing it?)`,
    });
  });

  it("takes a path that is a folder as a folder, with or without a slash, and reads only its .xml files, in order", async () => {
    await put("out/b.xml", report("b"));
    await put("out/a.xml", report("a"));
    await put("out/notes.txt", "not a report");
    await put("out/nested/c.xml", report("c"));
    expect(await names("out")).toEqual(["a", "b"]);
    expect(await names("out/")).toEqual(["a", "b"]);
    expect(await names(join(dir, "out"))).toEqual(["a", "b"]);
  });

  it("counts a report written in the run's first second as fresh, and one a second before as stale", async () => {
    await writeFile(join(dir, "junit.xml"), report("t"));
    const start = Date.parse("2026-06-01T12:00:00.900Z");
    await utimes(join(dir, "junit.xml"), new Date("2026-06-01T12:00:00.100Z"), new Date("2026-06-01T12:00:00.100Z"));
    expect((await readJUnitReports("junit.xml", { cwd: dir, notBefore: start })).files).toEqual([
      join(dir, "junit.xml"),
    ]);
    await utimes(join(dir, "junit.xml"), new Date("2026-06-01T11:59:59.950Z"), new Date("2026-06-01T11:59:59.950Z"));
    await expect(readJUnitReports("junit.xml", { cwd: dir, notBefore: start })).rejects.toMatchObject({
      code: "stale-report",
    });
    expect((await readJUnitReports("junit.xml", { cwd: dir })).files).toEqual([join(dir, "junit.xml")]);
  });

  it("reads a glob's matches in order at any depth up to twelve folders, never in node_modules, .git or a hidden folder", async () => {
    const deep = Array.from({ length: 12 }, (_, i) => `d${i}`).join("/");
    for (const path of [
      "pkgs/b/junit.xml",
      "pkgs/a/junit.xml",
      "pkgs/a/other.xml",
      "pkgs/a/junit.txt",
      `pkgs/${deep}/junit.xml`,
      `pkgs/${deep}/d12/junit.xml`,
      "pkgs/node_modules/junit.xml",
      "pkgs/x/node_modules/junit.xml",
      "pkgs/.git/junit.xml",
      "pkgs/.hidden/junit.xml",
    ])
      await put(path, report(path.replace(/\//g, "_").replace(/\.\w+$/, "")));
    expect(await names("pkgs/**/junit.xml")).toEqual([
      "pkgs_a_junit",
      "pkgs_b_junit",
      `pkgs_${deep.replace(/\//g, "_")}_junit`,
    ]);
    expect(await names("pkgs/*/junit.xml")).toEqual(["pkgs_a_junit", "pkgs_b_junit"]);
  });

  it("reads the glob from the checkout when it names no folder, and keeps what an earlier run left out", async () => {
    await put("a-junit.xml", report("a"));
    await put("b-junit.xml", report("b"), before);
    const { files, staleFiles } = await readJUnitReports("*-junit.xml", { cwd: dir, notBefore: runStarted });
    expect(files).toEqual([join(dir, "a-junit.xml")]);
    expect(staleFiles).toEqual([join(dir, "b-junit.xml")]);
  });

  it("reads one file as the run's only report, with nothing stale, and skips a link to nothing in a folder", async () => {
    const { symlink } = await import("node:fs/promises");
    await put("out/a.xml", report("a"));
    await symlink(join(dir, "gone.xml"), join(dir, "out", "gone.xml"));
    expect(await readJUnitReports("out/a.xml", { cwd: dir, notBefore: runStarted })).toMatchObject({
      files: [join(dir, "out", "a.xml")],
      staleFiles: [],
    });
    expect(await names("out/")).toEqual(["a"]);
  });

  it("reads a report through a link, and never a link to a folder", async () => {
    const { mkdir, symlink } = await import("node:fs/promises");
    await put("real/a.xml", report("a"));
    await mkdir(join(dir, "out"));
    await symlink(join(dir, "real", "a.xml"), join(dir, "out", "linked.xml"));
    await symlink(join(dir, "real"), join(dir, "out", "folder.xml"));
    expect(await names("out/")).toEqual(["a"]);
    expect(await names("out/*.xml")).toEqual(["a"]);
  });

  it("clears the one file a file setting names, the matches of a glob, and nothing a link points to", async () => {
    const { mkdir, readdir, symlink } = await import("node:fs/promises");
    await put("junit.xml", report("t"));
    expect(await clearReports("junit.xml", dir)).toEqual([join(dir, "junit.xml")]);
    expect(await clearReports("junit.xml", dir)).toEqual([]);
    await put("pkgs/a/junit.xml", report("a"));
    await put("pkgs/a/keep.txt", "keep");
    await put("real/a.xml", report("a"));
    await mkdir(join(dir, "pkgs", "b"), { recursive: true });
    await symlink(join(dir, "real", "a.xml"), join(dir, "pkgs", "b", "junit.xml"));
    expect((await clearReports("pkgs/*/junit.xml", dir)).sort()).toEqual(
      [join(dir, "pkgs", "a", "junit.xml"), join(dir, "pkgs", "b", "junit.xml")].sort(),
    );
    expect(await readdir(join(dir, "pkgs", "a"))).toEqual(["keep.txt"]);
    expect(await readdir(join(dir, "real"))).toEqual(["a.xml"]);
  });
});

describe("what a report's surroundings say of its tests' files", () => {
  it("gives each test of a Surefire report the class its file is named after, and none to another runner's", async () => {
    const { report } = await readJUnitReports(join(dir, "surefire-reports"), { notBefore: runStarted });
    // StockTest's report holds a load error and no test.
    expect(new Set(report.tests.map((t) => t.reportClass))).toEqual(new Set(["shop.CartTest", "shop.RefundTest"]));
    await cp(join(FIXTURES, "vitest", "report.xml"), join(dir, "TEST-shop.CartTest.xml"));
    const vitest = await readJUnitReports(join(dir, "TEST-shop.CartTest.xml"));
    expect(vitest.report.tests.every((t) => t.reportClass === undefined)).toBe(true);
    await cp(join(FIXTURES, "surefire", "reports", "TEST-shop.CartTest.xml"), join(dir, "cart.xml"));
    const unnamed = await readJUnitReports(join(dir, "cart.xml"));
    expect(unnamed.report.tests.every((t) => t.reportClass === undefined)).toBe(true);
  });

  it("reads a Go report's module path from go.mod at the checkout's root, quoted or not, and only for Go", async () => {
    await cp(join(FIXTURES, "go", "report.xml"), join(dir, "junit.xml"));
    expect((await readJUnitReports("junit.xml", { cwd: dir })).report.goModule).toBeUndefined();
    await writeFile(join(dir, "go.mod"), '// the shop\nmodule "example.com/shop" // quoted\n\ngo 1.22\n');
    expect((await readJUnitReports("junit.xml", { cwd: dir })).report.goModule).toBe("example.com/shop");
    await writeFile(join(dir, "go.mod"), "module example.com/shop/v2\n");
    const { report } = await readJUnitReports("junit.xml", { cwd: dir });
    expect(report.goModule).toBe("example.com/shop/v2");
    await cp(join(FIXTURES, "vitest", "report.xml"), join(dir, "junit.xml"));
    expect((await readJUnitReports("junit.xml", { cwd: dir })).report.goModule).toBeUndefined();
  });
});
