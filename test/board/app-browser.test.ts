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
import { trackReport } from "../../src/app/report-view.js";
import { defaultConfig } from "../../src/config/consort-config.js";
import { renderCheckRuns } from "../../src/report/index.js";
import { renderSchemaDiff, type SchemaDiff } from "../../src/substrate/schema/index.js";
import { loadEnv } from "../../src/config/env.js";
import { boardTrack, renamed, trackWithCommits } from "./fixtures.js";
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
const APP_ID = 4242;
/**
 * A track near its end with every commit of its branch, and four driver's commits at the promote
 * gate on top, each pushed alone, which the machine refuses (no role commits at a gate).
 */
const REFUSED = 4;
const ledger = (() => {
  const built = trackWithCommits(
    "promote-gate",
    Array.from({ length: REFUSED }, (_, n) => ({
      role: "driver" as const,
      files: { "src/services/stock.ts": `export const late = ${n};\n` },
    })),
    { repository: SHOP },
  );
  return { track: renamed(built.track, "feature/ledger"), commits: built.commits };
})();
const ledgerContext = ledger.track.snapshot.context;

/**
 * consort/schema on the ledger's head as the app writes it (src/report/render.ts from a real diff's
 * Markdown), and a check of the same name by another app, which the board must not show.
 */
function writeSchemaChecks(): void {
  const head = ledgerContext.rejectedHead!.sha;
  const diff: SchemaDiff = {
    changes: [
      {
        object: "column",
        action: "added",
        name: "public.stock_records.note",
        table: "public.stock_records",
        column: "note",
        details: ["text, default '<script>alert(1)</script>'"],
      },
      {
        object: "index",
        action: "added",
        name: "public.stock_records_sku_idx",
        table: "public.stock_records",
        details: [],
      },
    ],
    summary: { added: 2, dropped: 0, changed: 0 },
  };
  const report = trackReport({
    repository: SHOP,
    snapshot: ledger.track.snapshot,
    headSha: head,
    config: ledger.track.config,
    schema: {
      state: "ready",
      diffMarkdown: renderSchemaDiff(diff, { findings: [], ok: true }, { branch: "feature-f1-stock", parent: "main" }),
      breaking: [],
    },
  });
  const written = renderCheckRuns(report).find((run) => run.name === "consort/schema")!;
  github.addCheckRun(SHOP, head, {
    name: "consort/schema",
    appId: 999,
    conclusion: "success",
    summary: "Another app says: all good <img src=x onerror=alert(1)>",
    completedAt: "2026-11-30T10:00:00Z",
  });
  github.addCheckRun(SHOP, head, {
    name: "consort/schema",
    appId: APP_ID,
    conclusion: "success",
    summary: written.output.summary,
    completedAt: "2026-11-30T10:01:00Z",
  });
}

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
  github.writeState(SHOP, ledger.track.snapshot);
  github.setCommits(SHOP, "main...feature/ledger", ledger.commits);
  writeSchemaChecks();
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
      APP_ID: String(APP_ID),
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
  await page.waitForURL(`${origin}/consort/sign-in?next=%2Fconsort%2F`);
  await page.click("#sign-in");
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
      ).toEqual(["feature-orders", "feature-payroll", "feature-ledger"]);
    } finally {
      await context.close();
    }
  });

  it("says plainly on the sign-in page, and when GitHub refuses the callback, which callback URL to add where", async () => {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    try {
      const exchanges = () => github.oauthCalls.filter((call) => call.path === "/login/oauth/access_token").length;
      const before = exchanges();
      const page = await context.newPage();
      await page.goto(`${origin}/consort/sign-in`);
      const help = `The app does not have this board's callback URL. On GitHub open the app's settings (Settings → Developer settings → GitHub Apps → the app → Edit), add ${origin}/consort/callback under Callback URL, save, and sign in again.`;
      await expect(page.locator("#callback-help + p").textContent()).resolves.toBe(help);
      // A board at an address the app does not have: GitHub sends the browser to the registered callback with the error.
      const elsewhere = new URL(`${github.url}/login/oauth/authorize`);
      elsewhere.searchParams.set("client_id", github.clientId);
      elsewhere.searchParams.set("redirect_uri", "http://127.0.0.1:9/consort/callback");
      elsewhere.searchParams.set("state", "s");
      const response = await page.goto(elsewhere.toString());
      expect(response!.status()).toBe(400);
      expect(new URL(page.url()).pathname).toBe("/consort/callback");
      await expect(page.locator("#github-said").textContent()).resolves.toBe(
        "GitHub said: The redirect_uri MUST match the registered callback URL for this application.",
      );
      await expect(page.locator("#callback-help + p").textContent()).resolves.toBe(help);
      // Nothing was exchanged: there was no code to exchange.
      expect(exchanges()).toBe(before);
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
      ).toEqual(["feature-orders", "feature-ledger"]);
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
    expect(page.headers.get("location")).toBe("/consort/sign-in?next=%2Fconsort%2Ft%2Facme%2Fsecret%2Ffeature-payroll");
    expect((await fetch(`${origin}/consort/events`)).status).toBe(401);
  });

  it("shows a state write on an open page as it is announced, without a reload or a layout shift", async () => {
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
      // The app's write, as src/engine/track.ts announces it in this process.
      github.writeState(SHOP, approved.snapshot);
      changes.notify(SHOP);
      await page.waitForFunction(
        () => document.querySelector("main")?.textContent?.includes("Stands at test-list"),
        undefined,
        { timeout: 5000 },
      );
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
      github.writeState(SHOP, renamed(boardTrack("test-list-gate"), "feature/orders").snapshot);
      await page.waitForFunction(
        () => document.querySelector("main")?.textContent?.includes("Stands at test-list-gate"),
        undefined,
        { timeout: 5000 },
      );
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
            trackEvidence({
              repository: SHOP,
              snapshot: done.snapshot,
              config: defaultConfig(),
              provenance: "signed",
              stateSource: `consort/state at ${github.stateCommit(SHOP).slice(0, 7)}`,
            }),
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
          track: trackHref(SHOP, "feature-ledger"),
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

describe("a track's page in a browser: the database branch, the schema diff, every commit, the source of each fact", () => {
  const ledgerUrl = () => trackHref(SHOP, "feature-ledger");
  const stateAt = () => github.stateCommit(SHOP).slice(0, 7);

  it("shows the paired database branch in full: name, parent, when forked, when it expires, and each cycle's throwaway branch with its TTL", async () => {
    const { context, page } = await signedIn("alice");
    try {
      await page.goto(ledgerUrl());
      const facts = await page
        .locator("#database ~ dl.facts")
        .evaluate((dl) =>
          Array.from(dl.querySelectorAll("dt")).map((dt) => `${dt.textContent}: ${dt.nextElementSibling?.textContent}`),
        );
      expect(facts).toEqual([
        "Branch: feature-f1-stock",
        "Parent: main",
        `Forked: ${ledgerContext.createdAt} (when the track started)`,
        "Expires: never: a track's branch has no TTL (on Lakebase a branch that expires cannot have children); it is deleted when the track is merged and promoted, abandoned, or its git branch is deleted",
        `Promotion: not yet`,
      ]);
      const cycles = ledgerContext.cycles.filter((c) => c.step !== "release");
      const throwaway = await page
        .locator("#database ~ table.cycles tbody tr")
        .evaluateAll((rows) => rows.map((r) => Array.from(r.children).map((td) => td.textContent)));
      expect(throwaway).toEqual(
        cycles.map((c) => [
          (c.evidence as { databaseBranch: string }).databaseBranch,
          `${c.step} ${c.unit}`,
          new Date(Date.parse(c.reportedAt!) + 3_600_000).toISOString(),
        ]),
      );
      await expect(page.locator("#throwaway-ttl").textContent()).resolves.toBe(
        "Each cycle forks a throwaway branch from feature-f1-stock with a TTL of 1 h and deletes it at the run's end; it is gone by the time shown at the latest.",
      );
      // Where these facts come from, named on the section.
      await expect(page.locator("#database ~ p.src").first().textContent()).resolves.toBe(
        `source from consort/state at ${stateAt()}; throwaway branches from the cycle results`,
      );
    } finally {
      await context.close();
    }
  });

  it("draws consort/schema's diff as the check run this app wrote shows it, and never a check of that name by another app", async () => {
    const head = ledgerContext.rejectedHead!.sha;
    const { context, page } = await signedIn("alice");
    try {
      await page.goto(ledgerUrl());
      const md = page.locator("section[aria-labelledby=database] .md");
      // The diff's own tables, drawn as tables: the changes, one row each.
      const rows = await md
        .locator("table")
        .last()
        .locator("tbody tr")
        .evaluateAll((trs) => trs.map((tr) => Array.from(tr.children).map((td) => td.textContent)));
      expect(rows).toEqual([
        ["➕ added", "column", "public.stock_records.note", "text, default '<script>alert(1)</script>'"],
        ["➕ added", "index", "public.stock_records_sku_idx", ""],
      ]);
      expect(await md.locator("script, img").count()).toBe(0);
      await expect(page.locator("main").textContent()).resolves.not.toContain("Another app says");
      await expect(page.locator("#schema-diff").textContent()).resolves.toBe("Schema diff against main success");
      await expect(md.locator("xpath=preceding-sibling::p[@class='src'][1]").textContent()).resolves.toBe(
        `source the consort/schema check run on ${head.slice(0, 7)} (2026-11-30T10:01:00Z)`,
      );
    } finally {
      await context.close();
    }
  });

  it("lists every commit of the track with its role, step, verdict, reason, time and link, grouped so a long timeline stays usable", async () => {
    const { context, page } = await signedIn("alice");
    try {
      await page.goto(ledgerUrl());
      const items = await page.locator("#timeline ~ details.steps > ol > li").evaluateAll((lis) =>
        lis.map((li) => ({
          verdict: li.className,
          who: li.querySelector("strong")?.textContent,
          commit: li.querySelector("a[href*='/commit/']")?.getAttribute("href") ?? null,
          at: li.querySelector("time")?.getAttribute("datetime"),
          text: li.textContent,
        })),
      );
      const listed = items.filter((item) => item.commit);
      // Every commit of the branch, each linked, none left out.
      expect(listed.map((item) => item.commit)).toEqual(ledger.commits.map((c) => c.url));
      expect(listed.map((item) => item.at)).toEqual(ledger.commits.map((c) => c.at));
      expect(listed.map((item) => item.who)).toEqual([
        "product-owner",
        "spec-author",
        "architect",
        "dba",
        "test-strategist",
        ...ledger.commits.slice(5).map((c) => /Consort-Role: (\S+)/.exec(c.message)![1]),
      ]);
      expect(listed.slice(0, -REFUSED).every((item) => item.verdict === "accepted")).toBe(true);
      expect(listed.slice(-REFUSED).every((item) => item.verdict === "refused")).toBe(true);
      // The machine's reasons on every commit of the push it refused, not a pointer to another row.
      const rejected = ledgerContext.rejectedHead!;
      for (const reason of rejected.reasons) expect(listed.at(-1)!.text).toContain(reason);
      for (const reason of rejected.reasons) expect(listed.at(-2)!.text).toContain(reason);
      expect(listed.at(-2)!.text).not.toContain("its reasons are listed there");
      expect(listed.find((item) => item.text?.includes("red for T1"))?.who).toBe("navigator");
      // Grouped 25 to a group: the older ones collapsed, the newest open.
      const groups = await page
        .locator("details.steps")
        .evaluateAll((ds) =>
          ds.map((d) => [(d as HTMLDetailsElement).open, d.querySelectorAll(":scope > ol > li").length]),
        );
      expect(groups.length).toBeGreaterThan(1);
      expect(groups.slice(0, -1).every(([open, count]) => open === false && count === 25)).toBe(true);
      expect(groups.at(-1)![0]).toBe(true);
      await expect(page.locator("#timeline ~ p.src").textContent()).resolves.toBe(
        `source the branch's commits on GitHub (compare main...feature/ledger); each judged against the snapshot from consort/state at ${stateAt()}`,
      );
    } finally {
      await context.close();
    }
  });

  it("opens an older group from the keyboard, and keeps it open with no layout shift while a live update arrives", async () => {
    const { context, page } = await signedIn("alice");
    try {
      await page.goto(ledgerUrl());
      await page.waitForFunction(() => document.getElementById("live")?.textContent === "live");
      const first = page.locator("details.steps").first();
      await first.locator("summary").focus();
      await page.keyboard.press("Enter");
      expect(await first.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
      await page.evaluate(() => {
        (window as unknown as { shift: number }).shift = 0;
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries() as Array<PerformanceEntry & { value: number; hadRecentInput: boolean }>)
            if (!entry.hadRecentInput) (window as unknown as { shift: number }).shift += entry.value;
        }).observe({ type: "layout-shift", buffered: false });
      });
      const version = await page.evaluate(() => Number(document.body.dataset.version ?? 0));
      github.writeState(SHOP, ledger.track.snapshot);
      changes.notify(SHOP);
      await page.waitForFunction((v) => Number(document.body.dataset.version ?? 0) > v, version, { timeout: 5000 });
      expect(
        await page.locator("details.steps").evaluateAll((ds) => ds.map((d) => (d as HTMLDetailsElement).open)),
      ).toEqual([
        true,
        ...Array.from({ length: (await page.locator("details.steps").count()) - 2 }, () => false),
        true,
      ]);
      expect(await page.evaluate(() => (window as unknown as { shift: number }).shift)).toBeLessThan(0.01);
      await page.screenshot({ path: screenshotPath("track-timeline-desktop"), fullPage: true });
    } finally {
      await context.close();
    }
  });

  it("names the source of the snapshot's facts on the board's rows, the lane, the gates and the evidence", async () => {
    const { context, page } = await signedIn("alice");
    try {
      await expect(
        page.locator('tr[data-track="feature-ledger"] td[data-label=Track] .src').textContent(),
      ).resolves.toBe(`from consort/state at ${stateAt()}`);
      await page.goto(`${ledgerUrl()}/evidence`);
      await expect(page.locator("main p.src").textContent()).resolves.toBe(
        `source from consort/state at ${stateAt()}; each cycle's verdict and run as its result reported it`,
      );
      await page.goto(ledgerUrl());
      const marks = await page.locator("main p.src").evaluateAll((ps) => ps.map((p) => p.textContent));
      expect(marks.slice(0, 3)).toEqual([
        `source from consort/state at ${stateAt()}`,
        `source from consort/state at ${stateAt()}`,
        `source from consort/state at ${stateAt()}: the cycle records, each run's verdict as its result reported it`,
      ]);
      const evidence = (await (await page.request.get(`${ledgerUrl()}/evidence.json`)).json()) as {
        sources: { state: string };
      };
      expect(evidence.sources).toEqual({ state: `from consort/state at ${stateAt()}` });
    } finally {
      await context.close();
    }
  });
});
