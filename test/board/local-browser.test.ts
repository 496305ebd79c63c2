/// <reference lib="dom" />
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalBoard, type LocalBoard } from "../../src/board/serve-local.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import { replayTrack } from "../../src/tools/replay.js";
import { launchChromium, screenshotPath, VIEWPORTS } from "./browser.js";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { localRepo, storiesOnly, type LocalRepo } from "./local-repo.js";

/**
 * `consort board` on a checkout, in a real browser: the track's page lists every commit of the
 * branch as the replay judged it (the refused one with the machine's reason), names where each
 * fact comes from, and takes a new commit without a reload.
 */

let browser: Browser;
let repo: LocalRepo;
let board: LocalBoard;

beforeAll(async () => {
  browser = await launchChromium();
  repo = await localRepo("feature/timeline");
  await repo.commitAs("product-owner", "Stories", { ".consort/spec.json": await storiesOnly() });
  // The spec author's turn: a driver's commit of code is refused.
  await repo.commitAs("driver", "Code too early", { "src/app.ts": "export const early = true;\n" });
  board = await startLocalBoard({ repoPath: repo.path, config: defaultConfig(), port: 0, me: null, pollMs: 100 });
}, 60_000);

afterAll(async () => {
  await board?.close();
  await repo?.cleanup();
  await browser?.close();
});

describe("consort board's track page in a browser", () => {
  it("lists every commit as the replay judged it, the refused one with its reason, and names the sources", async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    try {
      // What the machine decided for the driver's commit, as `consort next` replays it.
      const rejected = (await replayTrack(repo.path, defaultConfig(), new Date().toISOString())).snapshot.context
        .rejectedHead!;
      expect(rejected.reasons.length).toBeGreaterThan(0);
      const page = await context.newPage();
      await page.goto(board.url);
      await page.click("tr[data-track] a");
      const commits = await page.locator("#timeline ~ details.steps > ol > li:has(code)").evaluateAll((lis) =>
        lis.map((li) => ({
          verdict: li.className,
          who: li.querySelector("strong")?.textContent,
          refusal: li.querySelector(".refusals")?.textContent ?? null,
        })),
      );
      expect(commits).toEqual([
        { verdict: "accepted", who: "product-owner", refusal: null },
        { verdict: "refused", who: "driver", refusal: rejected.reasons.join("") },
      ]);
      await expect(page.locator("#timeline ~ p.src").textContent()).resolves.toBe(
        "source the branch's commits in this checkout (git log main..feature/timeline); each judged against the snapshot replayed from the branch's commits",
      );
      await expect(page.locator("main > p.src").first().textContent()).resolves.toBe(
        "source replayed from the branch's commits",
      );
      // No consort/schema check on a checkout: the page says where the diff is instead.
      await expect(page.locator("#schema-diff + p").textContent()).resolves.toBe(
        "Not shown here: it is the consort/schema check of the pull request (`consort db diff` computes it on your machine).",
      );
      await page.waitForFunction(() => document.getElementById("live")?.textContent === "live");
      await repo.commitAs("driver", "Still too early", { "src/app.ts": "export const early = 2;\n" });
      await page.waitForFunction(
        () => document.querySelectorAll("#timeline ~ details.steps > ol > li:has(code)").length === 3,
        undefined,
        { timeout: 5000 },
      );
      await page.screenshot({ path: screenshotPath("local-track-desktop"), fullPage: true });
    } finally {
      await context.close();
    }
  });
});

/**
 * The first day, on the board: the design is done and waits at the design gate; the Test
 * Strategist commits the test list too early, twice. Each refused commit says its own reason, the
 * waiting gate is drawn as waiting (not as a stop), the timeline starts with the track, at the
 * time of its first commit, and the page's icon is served.
 */
describe("consort board on a track whose gate waits and whose commits were refused", () => {
  let gateRepo: LocalRepo;
  let gateBoard: LocalBoard;
  const design = (name: string) => readFile(join(resolve("examples/stockflow/.consort"), name), "utf8");
  beforeAll(async () => {
    gateRepo = await localRepo("feature/gate-waits");
    await gateRepo.commitAs("product-owner", "Stories", { ".consort/spec.json": await storiesOnly() });
    await gateRepo.commitAs("spec-author", "Spec", { ".consort/spec.json": await design("spec.json") });
    await gateRepo.commitAs("architect", "Architecture", {
      ".consort/architecture.json": await design("architecture.json"),
    });
    await gateRepo.commitAs("dba", "DB design", { ".consort/db-design.json": await design("db-design.json") });
    await gateRepo.commitAs("test-strategist", "Test list", {
      ".consort/test-list.json": await design("test-list.json"),
    });
    await gateRepo.commitAs("test-strategist", "Test list, again", {
      ".consort/test-list.json": (await design("test-list.json")).replace("\n}", "\n}\n"),
    });
    gateBoard = await startLocalBoard({
      repoPath: gateRepo.path,
      config: defaultConfig(),
      port: 0,
      me: null,
      pollMs: 100,
    });
  }, 60_000);
  afterAll(async () => {
    await gateBoard?.close();
    await gateRepo?.cleanup();
  });

  it("tells each refused commit's own reason, draws the waiting gate as waiting, starts the timeline with the track, and serves an icon", async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    try {
      const page = await context.newPage();
      const missing: string[] = [];
      page.on("response", (response) => {
        if (response.status() >= 400) missing.push(`${response.status()} ${response.url()}`);
      });
      await page.goto(gateBoard.url);
      await page.click("tr[data-track] a");
      await page.waitForLoadState("networkidle");

      const gate = page.locator("figure svg.lane rect", { has: page.locator("title", { hasText: "Design gate" }) });
      await expect(gate.locator("title").textContent()).resolves.toBe("Design gate: waiting for approval");
      await expect(gate.getAttribute("class")).resolves.toBe("waiting");
      const fill = await gate.evaluate((rect) => getComputedStyle(rect).fill);
      expect(fill).not.toBe("rgb(207, 34, 46)");

      const entries = await page.locator("#timeline ~ details.steps > ol > li").evaluateAll((lis) =>
        lis.map((li) => ({
          at: li.querySelector("time")?.getAttribute("datetime") ?? "",
          text: li.textContent ?? "",
          verdict: li.className,
          refusal: li.querySelector(".refusals")?.textContent ?? null,
        })),
      );
      expect(entries[0]!.text).toContain("track started");
      const commitTimes = entries.slice(1).map((entry) => entry.at);
      expect(entries[0]!.at <= commitTimes.sort()[0]!).toBe(true);
      expect(entries.map((entry) => entry.at)).toEqual([...entries.map((entry) => entry.at)].sort());
      const refused = entries.filter((entry) => entry.verdict === "refused");
      expect(refused).toHaveLength(2);
      for (const entry of refused) {
        expect(entry.refusal).toContain(
          "no role's turn: the track is at design-gate, waiting for a person's approving review",
        );
        expect(entry.refusal).not.toMatch(/its reasons are listed there|still holds rejected commit/);
      }

      const icon = await page.locator('link[rel="icon"]').getAttribute("href");
      const served = await page.request.get(new URL(icon!, page.url()).href);
      expect(served.status()).toBe(200);
      expect(served.headers()["content-type"]).toMatch(/^image\/svg\+xml/);
      expect(missing).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
