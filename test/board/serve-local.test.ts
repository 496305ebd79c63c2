import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/consort-config.js";
import { startLocalBoard, type LocalBoard } from "../../src/board/serve-local.js";
import { boardTrack, renamed } from "./fixtures.js";
import { localRepo, storiesOnly, type LocalRepo } from "./local-repo.js";

const KEY = "board-test-state-key-0123456789abcdef";

/** Read a server-sent event stream until `event: change` arrives after `trigger`. */
async function nextChange(url: string, trigger: () => Promise<void>): Promise<void> {
  const controller = new AbortController();
  const response = await fetch(url, { signal: controller.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  // Wait for the stream to open before the change happens.
  while (!text.includes(": connected")) text += decoder.decode((await reader.read()).value);
  await trigger();
  while (!text.includes("event: change")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the event stream ended");
    text += decoder.decode(value);
  }
  controller.abort();
}

describe("consort board on a local checkout", () => {
  let repo: LocalRepo;
  let board: LocalBoard;
  const warnings: string[] = [];
  beforeAll(async () => {
    repo = await localRepo();
    board = await startLocalBoard({
      repoPath: repo.path,
      config: defaultConfig(),
      port: 0,
      me: null,
      pollMs: 100,
      warn: (message) => warnings.push(message),
    });
  }, 60_000);
  afterAll(async () => {
    await board?.close();
    await repo?.cleanup();
  });

  it("is bound to 127.0.0.1 and shows the checked-out branch replayed from its commits", async () => {
    expect(board.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const response = await fetch(board.url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-security-policy")).toMatch(
      /^default-src 'none'; .*script-src 'sha256-[A-Za-z0-9+/=]+'/,
    );
    const page = await response.text();
    expect(page).toContain('data-track="feature-board-demo-');
    expect(page).toContain('<td data-label="Stands at">stories</td>');
    expect(page).toContain("product-owner: stories");
    expect(page).toContain("replayed from commits: approvals and cycles unknown");
  });

  it("tells the open page when a commit lands", async () => {
    const spec = await storiesOnly();
    await nextChange(`${board.url}events`, () =>
      repo.commitAs("product-owner", "Stories", { ".consort/spec.json": spec }),
    );
    expect(await (await fetch(board.url)).text()).toContain('<td data-label="Stands at">spec</td>');
  });

  it("shows the tracks of a fetched consort/state, marked unchecked without the key", async () => {
    const other = renamed(boardTrack("design-gate"), "feature/elsewhere");
    await repo.writeState([{ snapshot: other.snapshot, repository: "acme/stockflow" }], KEY);
    const page = await (await fetch(board.url)).text();
    expect(page).toContain('data-track="feature-elsewhere"');
    expect(page).toContain("state signature not checked");
    const track = await fetch(`${board.url}t/acme/stockflow/feature-elsewhere`);
    expect(track.status).toBe(200);
    expect(await track.text()).toContain("Stands at <strong>design-gate</strong>");
  });

  it("answers 404 for a track it does not hold and for a path it does not serve", async () => {
    expect((await fetch(`${board.url}t/acme/stockflow/no-such-track`)).status).toBe(404);
    expect((await fetch(`${board.url}t/acme/other/feature-elsewhere`)).status).toBe(404);
    expect((await fetch(`${board.url}admin`)).status).toBe(404);
  });

  it("serves the evidence as a download", async () => {
    const response = await fetch(`${board.url}t/acme/stockflow/feature-elsewhere/evidence.json`);
    expect(response.headers.get("content-disposition")).toBe('attachment; filename="feature-elsewhere.evidence.json"');
    const evidence = (await response.json()) as { trackId: string; provenance: string; stage: string };
    expect(evidence).toMatchObject({ trackId: "feature-elsewhere", provenance: "unsigned", stage: "design-gate" });
  });
});

describe("consort board with the state key", () => {
  it("checks each state file's signature and leaves a forged one off the board, saying why", async () => {
    const repo = await localRepo();
    const warnings: string[] = [];
    const board = await startLocalBoard({
      repoPath: repo.path,
      config: defaultConfig(),
      port: 0,
      me: null,
      stateKey: KEY,
      warn: (m) => warnings.push(m),
    });
    try {
      const signed = renamed(boardTrack("design-gate"), "feature/signed");
      await repo.writeState([{ snapshot: signed.snapshot, repository: "acme/stockflow" }], KEY);
      expect(await (await fetch(board.url)).text()).toContain('data-track="feature-signed"');
      await repo.writeState([{ snapshot: signed.snapshot, repository: "acme/stockflow" }], null);
      const page = await (await fetch(board.url)).text();
      expect(page).not.toContain('data-track="feature-signed"');
      expect(page).toMatch(
        /<h2 id="problems">Not shown<\/h2><ul class="refusals"><li>refs\/remotes\/origin\/consort\/state:tracks\/feature-signed\.json is left off the board: .*signature/,
      );
      expect(warnings).toEqual([
        expect.stringMatching(
          /^refs\/remotes\/origin\/consort\/state:tracks\/feature-signed\.json is left off the board: .*signature/,
        ),
      ]);
    } finally {
      await board.close();
      await repo.cleanup();
    }
  });
});
