/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BoardChanges } from "../../src/board/app-source.js";
import { trackEvidence } from "../../src/board/evidence.js";
import { boardRoutes } from "../../src/board/mount.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import { loadEnv } from "../../src/config/env.js";
import { boardTrack, renamed } from "./fixtures.js";
import { launchChromium, screenshotPath, VIEWPORTS } from "./browser.js";
import { BoardGitHub } from "./github-double.js";

/**
 * The board the app serves, in a real browser: sign-in with GitHub (the OAuth double), only what
 * the user's own token can read, live updates, the evidence download, the keyboard, and a
 * screenshot of each page at a desktop width and at 375 px.
 */

const KEY = "board-browser-state-key-0123456789abcdef";
const designGate = renamed(boardTrack("design-gate"), "feature/orders");
const payroll = renamed(boardTrack("repair"), "feature/payroll");
const SHOP = "acme/shop";
const SECRET = "acme/secret";

let browser: Browser;
let github: BoardGitHub;
let server: Server;
let origin = "";
const changes = new BoardChanges();

beforeAll(async () => {
  browser = await launchChromium();
  github = new BoardGitHub(KEY);
  github.addRepo(SHOP, { private: false, installationId: 11, readers: ["alice", "bob"] });
  github.addRepo(SECRET, { private: true, installationId: 12, readers: ["alice"] });
  github.writeState(SHOP, designGate.snapshot);
  github.writeState(SECRET, payroll.snapshot);
  // The board's address is its callback URL, so the routes are made once the server listens.
  const routes: { handle?: ReturnType<typeof boardRoutes> } = {};
  server = createServer((req, res) => {
    void routes.handle!(req, res).then((answered) => {
      if (!answered) res.writeHead(404).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", () => done()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await github.start(() => `${origin}/consort/callback`);
  routes.handle = boardRoutes({
    env: loadEnv({
      NODE_ENV: "test",
      GITHUB_CLIENT_ID: github.clientId,
      GITHUB_CLIENT_SECRET: github.clientSecret,
      CONSORT_STATE_KEY: KEY,
      CONSORT_BOARD_URL: origin,
    }),
    changes,
    installationClient: github.installationClient,
    githubUrl: github.url,
    pollMs: 150,
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  await github?.stop();
});

beforeEach(() => github.intercept());
afterEach(() => github.verify());

/** A fresh browser context (its own cookies) signed in as `login` through the OAuth flow. */
async function signedIn(login: string, viewport: { width: number; height: number } = VIEWPORTS.desktop) {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  github.nextUser = login;
  await page.goto(`${origin}/consort/`);
  await page.waitForURL(`${origin}/consort/`);
  return { context, page };
}

const trackHref = (repository: string, trackId: string) =>
  `${origin}/consort/t/${repository}/${encodeURIComponent(trackId)}`;

describe("the app's board in a browser", () => {
  it("signs in with GitHub: the OAuth state comes back checked and the session is an HttpOnly SameSite cookie", async () => {
    const { context, page } = await signedIn("alice");
    try {
      await expect(page.locator("header .who strong").textContent()).resolves.toBe("@alice");
      const authorize = github.oauthCalls.find((call) => call.path === "/login/oauth/authorize")!;
      expect(authorize.params).toMatchObject({
        client_id: github.clientId,
        redirect_uri: `${origin}/consort/callback`,
      });
      expect(authorize.params.state).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const exchange = github.oauthCalls.find((call) => call.path === "/login/oauth/access_token")!;
      expect(exchange.params).toMatchObject({
        client_id: github.clientId,
        client_secret: "(given)",
        redirect_uri: `${origin}/consort/callback`,
      });
      const session = (await context.cookies()).find((cookie) => cookie.name === "consort_session")!;
      expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/consort" });
      expect(session.value).not.toContain(github.nextUser);
      // Alice reads both repositories through the app's installations.
      expect(
        await page.locator("tr[data-track]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-track"))),
      ).toEqual(["feature-orders", "feature-payroll"]);
    } finally {
      await context.close();
    }
  });

  it("refuses a callback whose state is not the one this browser was given", async () => {
    const response = await fetch(`${origin}/consort/callback?code=stolen&state=forged`, { redirect: "manual" });
    expect(response.status).toBe(400);
    expect(await response.text()).toBe(
      "The sign-in could not be checked (its state is missing, expired or not this browser's). Start again at /consort/login.\n",
    );
    expect(github.oauthCalls.filter((call) => call.params.code === "stolen")).toEqual([]);
  });

  it("shows a user without access to the private repository none of it, and 404 on its URLs", async () => {
    const { context, page } = await signedIn("bob");
    try {
      const board = await page.content();
      expect(
        await page.locator("tr[data-track]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-track"))),
      ).toEqual(["feature-orders"]);
      expect(board).not.toContain("secret");
      expect(board).not.toContain("payroll");
      const missing = await page.goto(trackHref(SHOP, "no-such-track"));
      const notFound = await missing!.text();
      for (const url of [
        trackHref(SECRET, "feature-payroll"),
        `${trackHref(SECRET, "feature-payroll")}/evidence`,
        `${trackHref(SECRET, "feature-payroll")}/evidence.json`,
      ]) {
        const response = await page.goto(url);
        expect(response!.status()).toBe(404);
        // The same answer as for a track that does not exist: no hint that it does.
        expect(await response!.text()).toBe(notFound);
      }
    } finally {
      await context.close();
    }
  });

  it("answers an unsigned-in visitor with sign-in, never a page, and the event stream with 401", async () => {
    const page = await fetch(`${origin}/consort/t/acme/secret/feature-payroll`, { redirect: "manual" });
    expect(page.status).toBe(302);
    expect(page.headers.get("location")).toBe("/consort/login?next=%2Fconsort%2Ft%2Facme%2Fsecret%2Ffeature-payroll");
    expect((await fetch(`${origin}/consort/events`)).status).toBe(401);
  });

  it("shows a state write on an open page within a second, without a reload or a layout shift", async () => {
    const { context, page } = await signedIn("alice");
    try {
      await page.goto(trackHref(SHOP, "feature-orders"));
      await page.waitForFunction(() => document.getElementById("live")?.textContent === "live");
      await page.evaluate(() => {
        (window as unknown as { shift: number }).shift = 0;
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries() as Array<PerformanceEntry & { value: number; hadRecentInput: boolean }>)
            if (!entry.hadRecentInput) (window as unknown as { shift: number }).shift += entry.value;
        }).observe({ type: "layout-shift", buffered: false });
        (window as unknown as { loaded: boolean }).loaded = true;
      });
      await expect(page.locator("main p").nth(1).textContent()).resolves.toContain("Stands at design-gate");
      const approved = renamed(boardTrack("test-list"), "feature/orders");
      // The app's write, as src/app/track.ts announces it in this process.
      const started = Date.now();
      github.writeState(SHOP, approved.snapshot);
      changes.notify(SHOP);
      await page.waitForFunction(
        () => document.querySelector("main")?.textContent?.includes("Stands at test-list"),
        undefined,
        { timeout: 5000 },
      );
      expect(Date.now() - started).toBeLessThan(1000);
      // Still the same document: no reload.
      expect(await page.evaluate(() => (window as unknown as { loaded?: boolean }).loaded)).toBe(true);
      expect(await page.evaluate(() => (window as unknown as { shift: number }).shift)).toBeLessThan(0.1);
    } finally {
      await context.close();
    }
  });

  it("with the write made by another process, finds it by a conditional poll of consort/state that GitHub answers 304 until it moves", async () => {
    const { context, page } = await signedIn("alice");
    try {
      await page.goto(trackHref(SHOP, "feature-orders"));
      await page.waitForFunction(() => document.getElementById("live")?.textContent === "live");
      await page.waitForTimeout(400);
      const notModified = github.apiCalls.filter(
        (call) => call.path.endsWith("/git/ref/heads%2Fconsort%2Fstate") && call.status === 304,
      );
      expect(notModified.length).toBeGreaterThan(0);
      const started = Date.now();
      github.writeState(SHOP, renamed(boardTrack("test-list-gate"), "feature/orders").snapshot);
      await page.waitForFunction(
        () => document.querySelector("main")?.textContent?.includes("Stands at test-list-gate"),
        undefined,
        { timeout: 5000 },
      );
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      await context.close();
    }
  });

  it("gives the evidence as a download that validates against its schema and matches the track", async () => {
    const done = renamed(boardTrack("done"), "feature/shipped");
    github.writeState(SHOP, done.snapshot);
    changes.notify(SHOP);
    const { context, page } = await signedIn("alice");
    try {
      await page.goto(`${trackHref(SHOP, "feature-shipped")}/evidence`);
      const [download] = await Promise.all([page.waitForEvent("download"), page.click("#download")]);
      expect(download.suggestedFilename()).toBe("feature-shipped.evidence.json");
      const evidence = JSON.parse(readFileSync((await download.path())!, "utf8")) as unknown;
      const schema = JSON.parse(readFileSync("schemas/track-evidence.schema.json", "utf8")) as object;
      const validate = new Ajv2020({ strict: false }).compile(schema);
      expect(validate(evidence), JSON.stringify(validate.errors)).toBe(true);
      expect(evidence).toEqual(
        JSON.parse(
          JSON.stringify(
            trackEvidence({ repository: SHOP, snapshot: done.snapshot, config: defaultConfig(), provenance: "signed" }),
          ),
        ),
      );
    } finally {
      await context.close();
    }
  });

  it("is reachable by keyboard: skip link first, then to a track and into it with Enter", async () => {
    const { context, page } = await signedIn("alice");
    try {
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
      const target = trackHref(SHOP, "feature-orders");
      for (let i = 0; i < 12; i++) {
        await page.keyboard.press("Tab");
        if (await page.evaluate((href) => (document.activeElement as HTMLAnchorElement | null)?.href === href, target))
          break;
      }
      expect(await page.evaluate(() => (document.activeElement as HTMLAnchorElement).href)).toBe(target);
      const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
      expect(outline).toBe("solid");
      await page.keyboard.press("Enter");
      await page.waitForURL(target);
      expect(await page.locator("h2.title").textContent()).toContain("feature/orders");
    } finally {
      await context.close();
    }
  });

  for (const [width, viewport] of Object.entries(VIEWPORTS)) {
    it(`is usable at ${viewport.width} px: every page fits the width; a screenshot of each is saved`, async () => {
      const { context, page } = await signedIn("alice", viewport);
      try {
        const pages = {
          board: `${origin}/consort/`,
          track: trackHref(SECRET, "feature-payroll"),
          evidence: `${trackHref(SHOP, "feature-shipped")}/evidence`,
        };
        for (const [name, url] of Object.entries(pages)) {
          const response = await page.goto(url);
          expect(response!.status()).toBe(200);
          const overflow = await page.evaluate(
            () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
          );
          const wide = await page.evaluate(() =>
            Array.from(document.querySelectorAll("main *"))
              .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5)
              .slice(0, 3)
              .map((el) => `${el.tagName.toLowerCase()}.${el.className}`),
          );
          expect(overflow, `${name} scrolls sideways at ${viewport.width} px: ${wide.join(", ")}`).toBeLessThanOrEqual(
            0,
          );
          await page.screenshot({ path: screenshotPath(`${name}-${width}`), fullPage: true });
        }
      } finally {
        await context.close();
      }
    });
  }
});
