/// <reference lib="dom" />
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalBoard, type LocalBoard } from "../../src/board/serve-local.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import { replayTrack } from "../../src/tools/replay.js";
import { launchChromium, screenshotPath, VIEWPORTS } from "./browser.js";
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
      // The track is kept in the checkout's local lane, and the board says it is a rehearsal.
      const lane =
        "from the local lane " +
        join(repo.path, ".git/consort/tracks/feature-timeline-2072dc63.json") +
        " (a rehearsal, never evidence for the app; gates wait for `consort approve <gate>` at a terminal), then replayed from the branch's commits";
      await expect(page.locator("#timeline ~ p.src").textContent()).resolves.toBe(
        `source the branch's commits in this checkout (git log main..feature/timeline); each judged against the snapshot ${lane}`,
      );
      await expect(page.locator("main > p.src").first().textContent()).resolves.toBe(`source ${lane}`);
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
