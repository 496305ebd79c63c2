import { cp, mkdtemp, rm, utimes } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findTestCase, readJUnitReports } from "../../../src/cycle/junit/index.js";
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
