import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { simpleGit } from "simple-git";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { consortTools } from "../../src/tools/index.js";
import { RunCycleOutput } from "../../src/tools/run-cycle.js";
import { ExplainRejectionOutput, NextActionOutput, TrackStatusOutput } from "../../src/tools/track-tools.js";
import { CONTENTS_INLINE_BYTES, contentsBody, GitHubMock } from "../helpers/github.js";
import { call, connectClient, errorText } from "./mcp-client.js";
import { REPOSITORY, STATE_KEY, stockflowTrack, type StockflowTrack } from "./track-fixture.js";

let track: StockflowTrack;
beforeAll(async () => {
  track = await stockflowTrack();
}, 90_000);
afterAll(async () => track.checkout.cleanup());

/** A server over the track's checkout reading state the way it is told to. */
async function serve(
  options: Parameters<StockflowTrack["checkout"]["context"]>[0],
): Promise<{ client: Client; close: () => Promise<void> }> {
  return connectClient(consortTools, track.checkout.context(options));
}

describe("next_action and track_status at RED for T1 (state from a snapshot file)", () => {
  let client: Client;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ client, close } = await serve({ state: { kind: "file", path: await track.writeSnapshotFile() } }));
  });
  afterAll(async () => close());

  it("tells the navigator to write T1's failing test, where, and with which trailer", async () => {
    const output = NextActionOutput.parse((await call(client, "next_action", {})).structuredContent);
    expect(output.state).toMatchObject({ trackId: track.trackId, source: "file", verified: false });
    expect(output.action).toMatchObject({
      trackId: track.trackId,
      stage: "red",
      actor: "agent",
      role: "navigator",
      unit: "T1",
      trailer: "Consort-Role: navigator",
      head: track.snapshot.context.head,
      gate: null,
    });
    expect(output.action.testsInTurn).toEqual([
      expect.objectContaining({ id: "T1", ac: "S1-AC1", file: "test/file-stock.test.ts" }),
    ]);
    expect(output.action.allowedPaths).toEqual(expect.arrayContaining(track.config.paths.tests));
    expect(output.text).toContain("navigator");
  });

  it("shows the design lane done, both gates approved by the reviewer, and eight units with no evidence yet", async () => {
    const output = TrackStatusOutput.parse((await call(client, "track_status", {})).structuredContent);
    expect(output.stage).toBe("red");
    expect(output.lane.now).toMatch(/^T1: red/);
    expect(output.lane.done).toEqual(
      expect.arrayContaining(["design gate (a person approves)", "test-list gate (a person approves)"]),
    );
    const gates = Object.fromEntries(output.gates.map((gate) => [gate.gate, gate]));
    expect(gates.design).toMatchObject({
      status: "approved",
      approvals: [expect.objectContaining({ approver: "warehouse-lead" })],
    });
    expect(gates["test-list"]).toMatchObject({ status: "approved" });
    expect(gates.deploy?.status).toBe("closed");
    expect(output.units.map((unit) => unit.id)).toEqual(["T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8"]);
    expect(output.units.every((unit) => !unit.red && !unit.green && !unit.complete)).toBe(true);
    expect(output.unitInTurn).toBe("T1");
    expect(output.rejectedHead).toBeNull();
    expect(output.checks.find((check) => check.name === "consort/design")?.status).toBe("success");
  });

  it("answers a track the state file is not about with a tool error naming both", async () => {
    const result = await call(client, "next_action", { track: "some-other-track" });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toContain(`is for track "${track.trackId}", not "some-other-track"`);
  });

  it("answers a malformed track id with a tool error", async () => {
    const result = await call(client, "track_status", { track: "../../etc/passwd" });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toContain("is not a track id");
  });
});

describe("signed state", () => {
  const signedFile = async (text: string) => {
    const path = join(track.checkout.path, "..", `${track.trackId}-signed-${Date.now()}.json`);
    await writeFile(path, text);
    return path;
  };

  it("is verified with CONSORT_STATE_KEY and says so", async () => {
    const { client, close } = await serve({
      state: { kind: "file", path: await signedFile(track.signedStateText()) },
      stateKey: STATE_KEY,
    });
    try {
      const output = NextActionOutput.parse((await call(client, "next_action", {})).structuredContent);
      expect(output.state.verified).toBe(true);
      expect(output.action.role).toBe("navigator");
    } finally {
      await close();
    }
  });

  it("is refused without the key unless the server was told to read it unverified", async () => {
    const path = await signedFile(track.signedStateText());
    const strict = await serve({ state: { kind: "file", path } });
    const lenient = await serve({ state: { kind: "file", path }, allowUnverifiedState: true });
    try {
      const refused = await call(strict.client, "next_action", {});
      expect(refused.isError).toBe(true);
      expect(errorText(refused)).toMatch(/^UNVERIFIED_STATE: .*no CONSORT_STATE_KEY/);
      const read = NextActionOutput.parse((await call(lenient.client, "next_action", {})).structuredContent);
      expect(read.state.verified).toBe(false);
    } finally {
      await strict.close();
      await lenient.close();
    }
  });

  it("is refused as tampered when its content was edited after signing", async () => {
    const tampered = track.signedStateText().replace('"stage": "red"', '"stage": "green"');
    expect(tampered).not.toBe(track.signedStateText());
    const { client, close } = await serve({
      state: { kind: "file", path: await signedFile(tampered) },
      stateKey: STATE_KEY,
    });
    try {
      const result = await call(client, "track_status", {});
      expect(result.isError).toBe(true);
      expect(errorText(result)).toMatch(/^TAMPERED_STATE: .*signature does not match/);
    } finally {
      await close();
    }
  });
});

describe("state from the repository's consort/state branch", () => {
  let github: GitHubMock;
  afterEach(() => github.dispose());

  it("reads the track's file with the token and verifies it", async () => {
    github = new GitHubMock();
    const [owner, repo] = REPOSITORY.split("/") as [string, string];
    github.on("GET", `/repos/${owner}/${repo}/contents/tracks%2F${track.trackId}.json`, [
      200,
      contentsAnswer(track.signedStateText()),
    ]);
    const octokit = new Octokit({
      auth: "ghs_test",
      request: { retries: 0 },
      log: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const { client, close } = await serve({ state: { kind: "github", owner, repo, octokit }, stateKey: STATE_KEY });
    try {
      const output = NextActionOutput.parse((await call(client, "next_action", {})).structuredContent);
      expect(output.state).toMatchObject({
        source: "github",
        verified: true,
        location: `${REPOSITORY}@consort/state:tracks/${track.trackId}.json`,
      });
      expect(output.action.unit).toBe("T1");
      expect(github.calls("GET", `/repos/${owner}/${repo}/contents/tracks%2F${track.trackId}.json`)[0]?.query).toEqual({
        ref: "consort/state",
      });
    } finally {
      await close();
    }
    github.verify();
  });

  it("reads a long track's file over the 1 MB a contents read inlines through its blob, also unverified", async () => {
    github = new GitHubMock();
    const [owner, repo] = REPOSITORY.split("/") as [string, string];
    // A valid state file as long as a late step of a 500-test track's (JSON allows the padding).
    const text = track.signedStateText() + " ".repeat(CONTENTS_INLINE_BYTES);
    const blob = "e".repeat(40);
    github.on("GET", `/repos/${owner}/${repo}/contents/tracks%2F${track.trackId}.json`, [
      200,
      contentsAnswer(text, blob),
    ]);
    github.on("GET", `/repos/${owner}/${repo}/git/blobs/${blob}`, [
      200,
      {
        sha: blob,
        node_id: "B_1",
        size: Buffer.byteLength(text),
        url: "",
        content: Buffer.from(text).toString("base64"),
        encoding: "base64",
      },
    ]);
    const octokit = new Octokit({
      auth: "ghs_test",
      request: { retries: 0 },
      log: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const { client, close } = await serve({
      state: { kind: "github", owner, repo, octokit },
      allowUnverifiedState: true,
    });
    try {
      const output = NextActionOutput.parse((await call(client, "next_action", {})).structuredContent);
      expect(output.state).toMatchObject({ source: "github", verified: false });
      expect(output.action.unit).toBe("T1");
      expect(github.calls("GET", `/repos/${owner}/${repo}/git/blobs/${blob}`)).toHaveLength(1);
    } finally {
      await close();
    }
    github.verify();
  });

  it("answers a track with no state file with what to check", async () => {
    github = new GitHubMock();
    const [owner, repo] = REPOSITORY.split("/") as [string, string];
    github.on("GET", `/repos/${owner}/${repo}/contents/tracks%2Fno-such-track.json`, [404, { message: "Not Found" }]);
    const octokit = new Octokit({
      auth: "ghs_test",
      request: { retries: 0 },
      log: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const { client, close } = await serve({ state: { kind: "github", owner, repo, octokit }, stateKey: STATE_KEY });
    try {
      const result = await call(client, "next_action", { track: "no-such-track" });
      expect(result.isError).toBe(true);
      expect(errorText(result)).toMatch(/^NO_STATE: Track "no-such-track" has no state/);
    } finally {
      await close();
    }
    github.verify();
  });
});

describe("explain_rejection", () => {
  it("with nothing refused and nothing new locally, says so and what is expected", async () => {
    const { client, close } = await serve({ state: { kind: "file", path: await track.writeSnapshotFile() } });
    try {
      const output = ExplainRejectionOutput.parse((await call(client, "explain_rejection", {})).structuredContent);
      expect(output.recorded).toBeNull();
      expect(output.local).toMatchObject({ status: "nothing-to-push", commits: [] });
      expect(output.expected.role).toBe("navigator");
    } finally {
      await close();
    }
  });

  it("judges an unpushed driver commit at RED as the app would, then explains the refusal the app recorded", async () => {
    const git = simpleGit(track.checkout.path);
    const accepted = track.snapshot.context.head;
    const sha = await track.commitAs("driver", "Implement filing before the test exists", {
      "src/services/stock.ts": "// the driver jumps ahead\n",
    });

    const stateFile = await track.writeSnapshotFile();
    const stateBefore = await readFile(stateFile, "utf8");
    const headBefore = await git.revparse(["HEAD"]);
    const before = await serve({ state: { kind: "file", path: stateFile } });
    let dryRun;
    try {
      dryRun = ExplainRejectionOutput.parse((await call(before.client, "explain_rejection", {})).structuredContent);
    } finally {
      await before.close();
    }
    // A dry run: the state and the checkout are exactly as they were.
    expect(await readFile(stateFile, "utf8")).toBe(stateBefore);
    expect(await git.revparse(["HEAD"])).toBe(headBefore);
    expect(dryRun.local.status).toBe("rejected");
    expect(dryRun.local.commits).toEqual([{ sha, subject: "Implement filing before the test exists", role: "driver" }]);
    expect(dryRun.local.reasons.join("\n")).toMatch(/driver/);

    // The app receives the push and records the refusal; the tool reads the same reasons back.
    const pushed = await track.push();
    expect(pushed.rejection?.reasons).toEqual(dryRun.local.reasons);
    const after = await serve({ state: { kind: "file", path: await track.writeSnapshotFile() } });
    try {
      const output = ExplainRejectionOutput.parse(
        (await call(after.client, "explain_rejection", { includeLocal: false })).structuredContent,
      );
      expect(output.recorded).toMatchObject({ commit: sha, reasons: pushed.rejection!.reasons });
      expect(output.local.status).toBe("unavailable");
      expect(output.advice[0]).toContain(`git push --force-with-lease origin ${accepted}:${track.checkout.branch}`);
      expect(output.expected.role).toBe("navigator");
    } finally {
      await after.close();
      await git.reset(["--hard", accepted]);
    }
  });
});

it("db_branch refuses to delete the database branch the track is paired with", async () => {
  const { client, close } = await serve({ state: { kind: "file", path: await track.writeSnapshotFile() } });
  try {
    const result = await call(client, "db_branch", { action: "delete", branch: track.snapshot.context.databaseBranch });
    expect(result.isError).toBe(true);
    expect(errorText(result)).toContain(
      `TRACK_BRANCH: ${track.snapshot.context.databaseBranch} is paired with the track ${track.trackId}`,
    );
  } finally {
    await close();
  }
});

describe("run_cycle with track state", () => {
  it("takes the tests in turn from the track and refuses a RED of T1 whose test already passes (the code exists)", async () => {
    const { client, close } = await serve({ state: { kind: "file", path: await track.writeSnapshotFile() } });
    try {
      const output = RunCycleOutput.parse(
        (await call(client, "run_cycle", { step: "red" }, 120_000)).structuredContent,
      );
      expect(output.plan).toEqual({
        from: "track-state",
        trackId: track.trackId,
        testsInTurn: ["T1"],
        earlierGreen: [],
        frozenTestFiles: [],
      });
      expect(output.verdict).toBe("refused");
      expect(output.tests).toEqual([expect.objectContaining({ id: "T1", role: "turn", outcome: "passed" })]);
      expect(output.reasons.join("\n")).toContain("already passes");
    } finally {
      await close();
    }
  }, 120_000);
});

/** GitHub's contents answer for a track's state file: its text inline up to 1 MB, left out past that. */
function contentsAnswer(text: string, sha = "f".repeat(40)) {
  return {
    type: "file",
    size: Buffer.byteLength(text),
    name: `${track.trackId}.json`,
    path: `tracks/${track.trackId}.json`,
    ...contentsBody(Buffer.from(text)),
    sha,
    url: "",
    git_url: null,
    html_url: null,
    download_url: null,
    _links: { self: "", git: null, html: null },
  };
}
