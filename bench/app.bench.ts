import { createHash, generateKeyPairSync, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { throttling } from "@octokit/plugin-throttling";
import { Probot, ProbotOctokit } from "probot";
import { ARTIFACT_PATHS } from "../src/artifacts/paths.js";
import { defaultConfig, type RoleName } from "../src/config/consort-config.js";
import { projectState } from "../src/engine/projection.js";
import { createConsortApp } from "../src/index.js";
import type { AppServices } from "../src/app/services.js";
import { createTrack, transition } from "../src/orchestrator/index.js";
import type { TrackEvent, TrackSnapshot } from "../src/orchestrator/types.js";
import { gitBlobId } from "../src/gates/hash.js";
import { emptyTrackState, sealState, serialiseStateFile } from "../src/state/index.js";
import { stickyMarker } from "../src/report/render.js";
import { checkRequest, compareAnswer } from "../test/helpers/github-api.js";
import { benchRuns, measure, printJson, printTable, tailEntry, wantsJson, type Summary } from "./lib.js";

/**
 * `npm run bench:app`: one `push` webhook to finished effects, in process, with GitHub answered by
 * an in-memory fake behind Octokit's fetch: read the config from the default branch, read the signed state on
 * consort/state and write it back with one Contents API PUT whose blob sha is the compare-and-swap (recording the
 * dispatch in the same write), dispatch the GREEN cycle, create the checks that have a conclusion (a waiting one is
 * left absent), keep the sticky comment. StockFlow F1 at GREEN for T2; the driver pushes 1, 10 or 100 commits
 * (each touching code and a migration), all accepted as one GREEN step.
 *
 * What the measured time leaves out: GitHub itself. The fake answers at once, and Probot's
 * throttling (which spaces an installation's writes) and retries are off. So the bench also prints
 * a model of the same event on GitHub, from the calls the run made (the fake records each one, and
 * the untimed check runs verify them against GitHub's REST description and that the app awaits
 * each call before the next): our measured time, plus one GitHub round trip per call, plus the
 * waits Probot's write spacing adds (see GITHUB_ROUND_TRIP_MS and PROBOT_WRITE_SPACING_MS).
 * With --json the last line is { push100_ms_median, push100_ms_p95 (the tail BENCH_RUNS supports),
 * push1_api_calls, push1_api_calls_charged (less the 304s of conditional reads, which GitHub does not
 * count against the rate limit), push1_api_calls_cold (the same push on a process that has not yet
 * found the PR's sticky comment or the configuration's ETag), push1_api_writes, push1_github_ms_low,
 * push1_github_ms_high, burst10_writes_per_min (the writes of ten tracks' pushes delivered at once,
 * simulated by burst()) }.
 */

/**
 * Assumed time of one GitHub REST call, request to response, from a server near GitHub. Source:
 * 10,000 GitHub API requests timed from bl.ocks.org's server (Mike Bostock, "Gist API Latency",
 * https://gist.github.com/mbostock/5503544): median 206 ms, middle 80 % 114–527 ms. Git data and
 * check-run writes are not faster than a gist read, so 150–300 ms brackets the typical call.
 */
const GITHUB_ROUND_TRIP_MS = { low: 150, high: 300 } as const;

/**
 * Probot 14's ProbotOctokit turns @octokit/plugin-throttling on, keyed by installation: every
 * write (any method but GET and HEAD, except the token exchange) waits for the installation's
 * "write" queue (Bottleneck, maxConcurrent 1, minTime 1000 ms), and a write to a path that sends
 * notifications (the plugin's triggersNotification list: issue comments, pulls, reviews…) also
 * for the "notifications" queue (minTime 3000 ms). Read in node_modules/@octokit/plugin-throttling
 * 11 (dist-bundle/index.js, createGroups). It follows GitHub's "Best practices for using the REST
 * API" (docs.github.com/rest/guides/best-practices-for-using-the-rest-api): for POST, PATCH, PUT or
 * DELETE requests, "wait at least one second between each request".
 */
const PROBOT_WRITE_SPACING_MS = 1000;
/** Tracks of one installation pushing a step in the same minute, for the secondary-limit row. */
const BURST_TRACKS = 10;
const PROBOT_NOTIFICATION_SPACING_MS = 3000;

const config = defaultConfig();
const fixture = (name: string) =>
  readFileSync(new URL(`../test/orchestrator/fixtures/stockflow/${name}`, import.meta.url), "utf8");
const at = (n: number) => new Date(Date.UTC(2026, 10, 30, 9, 0, 0) + n * 60_000).toISOString();
let counter = 0;
const sha = () => `b${(++counter).toString(16).padStart(6, "0")}${"0".repeat(33)}`;
const BRANCH = "feature-f1";
/** A commit's tree id in the fake: a sha of its own, as git's. */
const treeOf = (commitSha: string) => createHash("sha1").update(`tree ${commitSha}`).digest("hex");
/** A consort/state commit's sha as GitHub gives it (the fake names them s0, x1, …). */
const shaOf = (id: string) => createHash("sha1").update(`state ${id}`).digest("hex");
/** The app's bot, as GET /app names it: the author of every state commit the app writes. */
const APP_LOGIN = "consort[bot]";
/** What a driver's step leaves in each code file it changes. */
const CODE_TEXT = "export const stock = () => [];\n";
/** What a driver's step leaves in the migration it adds. */
const MIGRATION_TEXT = "create table stock (sku text primary key);\n";
const KEY = "bench-state-key-0123456789abcdef0123456789";
/** The repository's .github/consort.yml on main: the one `consort init` writes for GitHub-hosted runners. */
const CONFIG_TEXT = readFileSync(new URL("../templates/consort.yml", import.meta.url), "utf8").replaceAll(
  "__RUNS_ON_LIST__",
  "[ubuntu-latest]",
);
const CONFIG_ETAG = `"${createHash("sha1").update(CONFIG_TEXT).digest("hex")}"`;

/** The text of every file the setup pushed (the last one wins): the track's tree at any head, as the app reads it. */
const TREE_TEXTS = new Map<string, string>();
const commit = (role: RoleName, files: Record<string, string>) => {
  for (const [path, text] of Object.entries(files)) TREE_TEXTS.set(path, text);
  return pushedCommit(role, files);
};
const pushedCommit = (role: RoleName, files: Record<string, string>) => ({
  sha: sha(),
  authorLogin: `${role}-bot[bot]`,
  message: `${role} step\n\nConsort-Role: ${role}\n`,
  changes: Object.keys(files).map((path) => ({ path, status: "modified" as const })),
  files,
  // The repository has no package.json (the test command is npx vitest): its text before each commit is none.
  before: { "package.json": null },
});
function step(s: TrackSnapshot, event: TrackEvent): TrackSnapshot {
  const r = transition(s, event, config);
  if (r.rejection) throw new Error(`setup step refused: ${r.rejection.reasons.join("; ")}`);
  return r.snapshot;
}
const push = (s: TrackSnapshot, commits: ReturnType<typeof pushedCommit>[]): TrackEvent => ({
  type: "push",
  at: at(++counter),
  before: s.context.head,
  after: commits.at(-1)!.sha,
  forced: false,
  commits,
});

/** StockFlow through the design lane and both gates, T1 complete, T2's RED verified: GREEN for T2. */
function trackAtGreen(branch: string): TrackSnapshot {
  let s = createTrack(
    {
      trackId: branch,
      branch,
      baseBranch: "main",
      head: sha(),
      databaseBranch: branch,
      parentDatabaseBranch: "root",
      at: at(0),
    },
    config,
  ).snapshot;
  const design: Array<[RoleName, string, string]> = [
    ["product-owner", ARTIFACT_PATHS.spec, "spec.json"],
    ["spec-author", ARTIFACT_PATHS.spec, "spec.json"],
    ["architect", ARTIFACT_PATHS.architecture, "architecture.json"],
    ["dba", ARTIFACT_PATHS.dbDesign, "db-design.json"],
    ["ux-designer", ARTIFACT_PATHS.ux, "ux.json"],
  ];
  for (const [role, path, file] of design) s = step(s, push(s, [commit(role, { [path]: fixture(file) })]));
  const approve = (gate: "design" | "test-list"): TrackEvent => ({
    type: "gate.approved",
    at: at(++counter),
    gate,
    manifestHash: s.context.gates[gate].pendingHash!,
    approver: "lead",
    reviewId: counter,
    commit: s.context.head,
  });
  const report = (): TrackEvent => {
    const p = s.context.pendingDispatch!;
    return {
      type: "cycle.reported",
      at: at(++counter),
      dispatchId: p.dispatchId,
      runId: counter,
      step: p.step as "red",
      commit: p.commit,
      outcome: "valid",
      reasons: [],
      evidence: { summary: "ok" },
    };
  };
  s = step(s, approve("design"));
  s = step(s, push(s, [commit("test-strategist", { [ARTIFACT_PATHS.testList]: fixture("test-list.json") })]));
  s = step(s, approve("test-list"));
  let testFile = "";
  for (const id of ["T1", "T2"]) {
    testFile += `it(${JSON.stringify(id)}, () => { expect(fileStock()).toEqual(expected); });\n`;
    s = step(s, push(s, [commit("navigator", { "test/stock.test.ts": testFile })]));
    s = step(s, report());
    if (id === "T2") break;
    s = step(s, push(s, [commit("driver", { "src/services/stock.ts": "export {};\n" })]));
    s = step(s, report());
    s = step(
      s,
      push(s, [
        commit("navigator", {
          ".consort/reviews/T1.json": JSON.stringify({ unit: "T1", verdict: "accept", notes: ["ok"] }),
        }),
      ]),
    );
  }
  if (s.stage !== "green") throw new Error(`setup ended at ${s.stage}`);
  return s;
}

/** Each track at GREEN, with its sealed state file as earlier events wrote it. */
const tracks = new Map<string, { snapshot: TrackSnapshot; stateText: string }>();
function trackFile(branch: string) {
  let track = tracks.get(branch);
  if (!track) {
    const snapshot = trackAtGreen(branch);
    const state = emptyTrackState({ trackId: branch, repository: "acme/shop", branch, snapshot, now: new Date(at(0)) });
    track = { snapshot, stateText: serialiseStateFile(sealState(projectState(state, snapshot), KEY)) };
    tracks.set(branch, track);
  }
  return track;
}
/** The ten tracks of the burst: feature-f1 (the single push's) to feature-f10, each with its own open PR. */
const BURST_BRANCHES = Array.from({ length: BURST_TRACKS }, (_, i) => `feature-f${i + 1}`);
const pullOf = (branch: string) => 100 + BURST_BRANCHES.indexOf(branch);

/** GitHub, in memory: the state branch with a real compare-and-swap, and every other answer the push needs. */
class FakeGitHub {
  /** Every request of the current event, in order. */
  requests: Array<{
    method: string;
    path: string;
    body: Record<string, unknown> | undefined;
    /** Answered 304 Not Modified to a conditional read: GitHub does not count it against the rate limit. */
    notModified?: boolean;
  }> = [];
  private head = "s0";
  private files = new Map<string, string>();
  private commits = new Map<string, { tree: string; parent: string | null }>();
  /** The commit API's answer for a state commit: the app's own (its bot the author, signed by GitHub), with the files it changed. */
  private stateCommit(sha: string): Record<string, unknown> {
    const { tree, parent } = this.commits.get(sha)!;
    const files = this.trees.get(tree)!;
    const before = parent ? this.trees.get(this.commits.get(parent)!.tree)! : new Map<string, string>();
    return {
      sha: shaOf(sha),
      author: { login: APP_LOGIN },
      commit: { tree: { sha: tree }, verification: { verified: true, reason: "valid" } },
      parents: parent ? [{ sha: shaOf(parent) }] : [],
      files: [...files]
        .filter(([path, text]) => before.get(path) !== text)
        .map(([filename, text]) => ({
          filename,
          sha: blobOf(text),
          status: before.has(filename) ? "modified" : "added",
        })),
    };
  }
  private trees = new Map<string, Map<string, string>>();
  private n = 0;
  /** The PRs' comments by id: each PR starts with its track's sticky comment, as earlier steps left it. */
  comments = new Map<number, { issue: number; body: string }>(
    BURST_BRANCHES.map((branch, i) => [
      900 + i,
      { issue: pullOf(branch), body: `${stickyMarker(branch)}\n\nAn earlier step.` },
    ]),
  );
  /** Dispatches accepted since the last reset. */
  dispatched = 0;
  /** Each push the bench delivers, by its head: what compare answers. */
  pushed = new Map<
    string,
    {
      branch: string;
      before: string;
      commits: Array<{
        id: string;
        message: string;
        author: { username: string };
        added: string[];
        modified: string[];
      }>;
    }
  >();
  stateFile(branch = BRANCH): string {
    return this.files.get(`tracks/${branch}.json`)!;
  }
  /** consort/state holding the tracks' files at GREEN (by default the single push's one). */
  reset(branches: string[] = [BRANCH]): void {
    this.dispatched = 0;
    this.trees.set("t0", new Map(branches.map((b) => [`tracks/${b}.json`, trackFile(b).stateText])));
    this.commits.set("s0", { tree: "t0", parent: null });
    this.head = "s0";
    this.files = this.trees.get("t0")!;
    this.requests = [];
  }
  answer(
    method: string,
    uri: string,
    sent: Record<string, unknown> | undefined,
    ifNoneMatch?: string | null,
  ): [number, unknown?, Record<string, string>?] {
    const full = new URL(uri, "https://api.github.com");
    const request: FakeGitHub["requests"][number] = { method, path: full.pathname + full.search, body: sent };
    this.requests.push(request);
    const body = sent ?? {};
    const path = decodeURIComponent(full.pathname).replace("/repos/acme/shop", "");
    const id = () => `x${(++this.n).toString(16)}`;
    if (method === "POST" && path.startsWith("/app/installations/"))
      return [201, { token: "ghs_bench", expires_at: "2099-01-01T00:00:00Z" }];
    if (method === "GET" && path === "/contents/.github/consort.yml") {
      // The file `consort init` writes (the defaults), with its ETag: unchanged since, it is a 304.
      if (ifNoneMatch === CONFIG_ETAG) {
        request.notModified = true;
        return [304];
      }
      const content = Buffer.from(CONFIG_TEXT).toString("base64");
      return [200, { type: "file", encoding: "base64", content, sha: blobOf(CONFIG_TEXT) }, { etag: CONFIG_ETAG }];
    }
    if (method === "GET" && path === "/git/ref/heads/consort/state") return [200, { object: { sha: this.head } }];
    if (method === "GET" && path.startsWith("/git/commits/"))
      return [200, { sha: path.split("/").pop(), tree: { sha: this.commits.get(path.split("/").pop()!)!.tree } }];
    if (method === "GET" && path === "/commits/consort/state") return [200, this.stateCommit(this.head)];
    const stateCommit = [...this.commits.keys()].find((c) => path === `/commits/${shaOf(c)}`);
    if (method === "GET" && stateCommit) return [200, this.stateCommit(stateCommit)];
    if (method === "GET" && path.startsWith("/contents/tracks/")) {
      const ref = full.searchParams.get("ref");
      const at =
        ref === null || ref === "consort/state" ? this.head : [...this.commits.keys()].find((c) => shaOf(c) === ref);
      const text =
        at === undefined ? undefined : this.trees.get(this.commits.get(at)!.tree)!.get(path.slice("/contents/".length));
      return text === undefined
        ? [404, {}]
        : [200, { type: "file", encoding: "base64", content: Buffer.from(text).toString("base64"), sha: blobOf(text) }];
    }
    if (method === "PUT" && path.startsWith("/contents/tracks/")) {
      // The Contents API write: its blob sha is the compare-and-swap (409 when the file changed).
      const file = path.slice("/contents/".length);
      const text = this.files.get(file);
      if (text === undefined || body.sha !== blobOf(text)) return [409, { message: "does not match" }];
      const tree = new Map(this.files);
      tree.set(file, Buffer.from(String(body.content), "base64").toString("utf8"));
      const [t, c] = [id(), id()];
      this.trees.set(t, tree);
      this.commits.set(c, { tree: t, parent: this.head });
      const parent = this.head;
      this.head = c;
      this.files = tree;
      return [
        200,
        {
          content: { path: file, sha: blobOf(tree.get(file)!) },
          commit: { sha: shaOf(c), parents: [{ sha: shaOf(parent) }] },
        },
      ];
    }
    if (method === "POST" && path === "/git/trees") {
      const tree = new Map(this.trees.get(String(body.base_tree)) ?? []);
      for (const e of body.tree as Array<{ path: string; content: string }>) tree.set(e.path, e.content);
      const t = id();
      this.trees.set(t, tree);
      return [201, { sha: t }];
    }
    if (method === "POST" && path === "/git/commits") {
      const c = id();
      this.commits.set(c, { tree: String(body.tree), parent: (body.parents as string[])[0] ?? null });
      return [201, { sha: c }];
    }
    if (method === "PATCH" && path === "/git/refs/heads/consort/state") {
      const next = this.commits.get(String(body.sha))!;
      if (next.parent !== this.head) return [422, { message: "Update is not a fast forward" }];
      this.head = String(body.sha);
      this.files = this.trees.get(next.tree)!;
      return [200, { object: { sha: this.head } }];
    }
    if (method === "POST" && path.endsWith("/dispatches")) this.dispatched += 1;
    // No return_run_details: GitHub answers 204, and the run is found later by its run-name.
    if (method === "POST" && path.endsWith("/dispatches")) return [204];
    if (method === "GET" && path.startsWith("/compare/")) {
      // A push is read back from git: its commits as a chain from `before`, and where a branch leaves main.
      const [base, head] = path.slice("/compare/".length).split("...") as [string, string];
      const pushed = this.pushed.get(head);
      const commits =
        pushed && pushed.before === base
          ? pushed.commits.map((c) => ({
              sha: c.id,
              author: c.author.username,
              message: c.message,
              tree: treeOf(c.id),
            }))
          : [];
      // The files the push changed, with their diffs as GitHub gives them (the code files from the setup's text).
      const files = comparedFiles(pushed && pushed.before === base ? pushed.commits : []);
      return [200, compareAnswer({ sha: base, tree: treeOf(base) }, commits, { files })];
    }
    if (method === "GET" && path.startsWith("/git/trees/")) {
      const entries = [...TREE_TEXTS].map(([p, text]) => ({
        path: p,
        mode: "100644",
        type: "blob",
        sha: gitBlobId(text),
      }));
      return [200, { sha: treeOf(path.split("/").pop()!), truncated: false, tree: entries }];
    }
    if (method === "GET" && path === "/contents/package.json") return [404, { message: "Not Found" }];
    if (method === "GET" && path.startsWith("/contents/") && full.searchParams.has("ref")) {
      // The code files a step changed, read at the commit (production code may carry no test code).
      const text = CODE_TEXT;
      return [
        200,
        { type: "file", encoding: "base64", content: Buffer.from(text).toString("base64"), sha: blobOf(text) },
      ];
    }
    if (method === "GET" && path.endsWith("/check-runs")) return [200, { total_count: 0, check_runs: [] }];
    if (method === "POST" && path === "/check-runs") return [201, { id: ++this.n }];
    if (method === "GET" && path === "/pulls") {
      // The PR's head is the branch's: the commit just pushed.
      const branch = full.searchParams.get("head")!.replace(/^acme:/, "");
      const head = [...this.pushed].findLast(([, p]) => p.branch === branch)?.[0] ?? "h";
      return [200, [{ number: pullOf(branch), base: { ref: "main" }, head: { sha: head } }]];
    }
    // Each PR holds the track's sticky comment from its earlier steps (the app's, as GitHub marks it).
    let m: RegExpExecArray | null;
    if (method === "GET" && (m = /^\/issues\/(\d+)\/comments$/.exec(path)))
      return [
        200,
        [...this.comments].filter(([, c]) => c.issue === Number(m![1])).map(([id, c]) => commentJson(id, c.body)),
      ];
    if (method === "POST" && (m = /^\/issues\/(\d+)\/comments$/.exec(path))) {
      const id = ++this.n;
      this.comments.set(id, { issue: Number(m[1]), body: String(body.body) });
      return [201, commentJson(id, String(body.body))];
    }
    if (method === "PATCH" && (m = /^\/issues\/comments\/(\d+)$/.exec(path))) {
      const comment = this.comments.get(Number(m[1]));
      if (!comment) return [404, { message: "Not Found" }];
      comment.body = String(body.body);
      return [200, commentJson(Number(m[1]), comment.body)];
    }
    return [599, { message: `bench fake has no answer for ${method} ${path}` }];
  }
}

/** The compare's `files` for the pushed commits: each path once, its diff from the track's text to what the steps leave. */
function comparedFiles(commits: Array<{ added: string[]; modified: string[] }>) {
  const added = new Set(commits.flatMap((c) => c.added));
  const modified = new Set(commits.flatMap((c) => c.modified));
  return [
    ...[...modified].map((path) => ({
      sha: blobOf(CODE_TEXT),
      filename: path,
      status: "modified",
      patch: `@@ -1 +1 @@\n-${(TREE_TEXTS.get(path) ?? "export {};\n").trimEnd()}\n+${CODE_TEXT.trimEnd()}`,
    })),
    ...[...added].map((path) => ({
      sha: blobOf(MIGRATION_TEXT),
      filename: path,
      status: "added",
      patch: `@@ -0,0 +1 @@\n+${MIGRATION_TEXT.trimEnd()}`,
    })),
  ];
}

/** An issue comment of the app, as GitHub answers it (trimmed to what is read). */
const commentJson = (id: number, body: string) => ({
  id,
  body,
  user: { login: "consort[bot]", type: "Bot" },
  performed_via_github_app: { id: 1 },
});

/** A blob's id, as GitHub gives it (sha1 of the git blob header and text). */
const blobOf = (text: string) =>
  createHash("sha1")
    .update(`blob ${Buffer.byteLength(text)}\0${text}`)
    .digest("hex");

const fake = new FakeGitHub();
/** While set, each answer waits a turn of the event loop, so calls made without awaiting the last one overlap. */
const overlap = { checking: false, inFlight: 0, most: 0 };
/** Octokit's fetch, answered by the fake: no sockets and no interception library in the measurement. */
const fakeFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const method = (init?.method ?? "GET").toUpperCase();
  const body =
    typeof init?.body === "string" && init.body ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
  if (overlap.checking) {
    overlap.most = Math.max(overlap.most, ++overlap.inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    overlap.inFlight -= 1;
  }
  const ifNoneMatch = new Headers(init?.headers).get("if-none-match");
  const [status, data, headers] = fake.answer(method, url, body, ifNoneMatch);
  const response = new Response(status === 204 || status === 304 ? null : JSON.stringify(data ?? {}), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
  // A constructed Response has no url; Octokit reads it (as fetch would set it).
  Object.defineProperty(response, "url", { value: url });
  return response;
};

const stickyComments: NonNullable<AppServices["stickyComments"]> = new Map();
const configReads: NonNullable<AppServices["configReads"]> = new Map();
const commitTexts: NonNullable<AppServices["commitTexts"]> = new Map();
const probot = new Probot({
  appId: 1,
  privateKey: generateKeyPairSync("rsa", { modulusLength: 2048 })
    .privateKey.export({ type: "pkcs1", format: "pem" })
    .toString(),
  secret: "bench",
  logLevel: (process.env.BENCH_LOG as "fatal") ?? "fatal",
  Octokit: ProbotOctokit.defaults((o: Record<string, unknown>) => ({
    ...o,
    retry: { enabled: false },
    throttle: { enabled: false },
    request: { ...(o.request as object), fetch: fakeFetch },
  })),
});
await probot.load(
  createConsortApp({
    appId: 1,
    stateKey: KEY,
    // As servicesFromEnv makes them: the sticky comment this process found and the configuration's
    // ETag stay known across deliveries, and so do the texts of files at commits. (Its state
    // sequences are left out: each run starts consort/state again from the same file.)
    stickyComments,
    configReads,
    commitTexts,
    // The tip of consort/state is judged (the app's own commit?), and the state file's text kept by its blob.
    appLogin: async () => APP_LOGIN,
    stateBlobs: new Map(),
    clock: () => new Date(at(500)),
    openProvider: async () => {
      throw new Error("a GREEN push touches no database");
    },
  }),
);

const example = JSON.parse(
  readFileSync(
    new URL("../node_modules/@octokit/webhooks-examples/api.github.com/index.json", import.meta.url),
    "utf8",
  ),
) as Array<{ name: string; examples: Array<Record<string, any>> }>; // eslint-disable-line @typescript-eslint/no-explicit-any
const pushExample = example.find((e) => e.name === "push")!.examples[0]!;

function pushPayload(n: number, branch = BRANCH) {
  const { snapshot } = trackFile(branch);
  const commits = Array.from({ length: n }, (_, i) => ({
    ...pushExample.head_commit,
    id: sha(),
    message: `driver step ${i}\n\nConsort-Role: driver\n`,
    author: { name: "driver", email: "driver@example.test", username: "driver-bot[bot]" },
    added: [`migrations/${String(i).padStart(4, "0")}_step.sql`],
    modified: ["src/services/stock.ts", "src/routes/stock.ts"],
    removed: [],
  }));
  fake.pushed.set(commits.at(-1)!.id, { branch, before: snapshot.context.head, commits });
  return {
    ...pushExample,
    installation: { id: 9 },
    repository: {
      ...pushExample.repository,
      id: 1,
      name: "shop",
      full_name: "acme/shop",
      owner: { ...pushExample.repository.owner, login: "acme" },
      default_branch: "main",
    },
    ref: `refs/heads/${branch}`,
    before: snapshot.context.head,
    after: commits.at(-1)!.id,
    created: false,
    deleted: false,
    forced: false,
    commits,
  };
}

async function deliver(n: number): Promise<void> {
  fake.reset();
  await probot.receive({ id: randomUUID(), name: "push", payload: pushPayload(n) } as Parameters<Probot["receive"]>[0]);
}

type RecordedCall = FakeGitHub["requests"][number];

/**
 * One untimed delivery whose calls are checked: the push is accepted as GREEN and the cycle
 * dispatched (else the numbers measure a refusal), every request is one GitHub documents, and the
 * app awaits each call before the next (the model below adds the calls' round trips one after another).
 */
async function deliverChecked(n: number): Promise<RecordedCall[]> {
  Object.assign(overlap, { checking: true, inFlight: 0, most: 0 });
  try {
    await deliver(n);
  } finally {
    overlap.checking = false;
  }
  const written = JSON.parse(fake.stateFile()) as { snapshot: TrackSnapshot };
  if (written.snapshot.stage !== "green-verify" || fake.dispatched !== 1)
    throw new Error(
      `the push of ${n} should be accepted as GREEN and dispatch a cycle; the track is at ${written.snapshot.stage}${written.snapshot.context.rejectedHead ? `, refused: ${written.snapshot.context.rejectedHead.reasons.join("; ")}` : ""}; requests: ${fake.requests.map((r) => `${r.method} ${r.path}`).join(", ")}`,
    );
  const violations = fake.requests.flatMap((r) => checkRequest(r.method, r.path, r.body).violations);
  if (violations.length > 0)
    throw new Error(`the push of ${n} made requests GitHub does not document:\n  ${violations.join("\n  ")}`);
  if (overlap.most !== 1)
    throw new Error(
      `the push of ${n} made up to ${overlap.most} GitHub calls at once; the sequential model would overstate it`,
    );
  return fake.requests;
}

/** A write in @octokit/plugin-throttling's sense: it queues for the installation's write spacing. */
const isWrite = (call: RecordedCall) =>
  call.method !== "GET" && call.method !== "HEAD" && !/^\/app\/installations\/[^/]+\/access_tokens$/.test(call.path);
const notifies = (call: RecordedCall) => isWrite(call) && throttling.triggersNotification(call.path.split("?")[0]!);

/**
 * The event on GitHub: the calls in order, each taking `roundTripMs`, each write starting no sooner
 * than PROBOT_WRITE_SPACING_MS after the previous write started (and a notifying write
 * PROBOT_NOTIFICATION_SPACING_MS after the previous notifying one), as Bottleneck's minTime does.
 * Starts with empty queues: an event right after another of the same installation waits longer.
 */
function modelOnGitHub(calls: RecordedCall[], roundTripMs: number): { totalMs: number; spacingMs: number } {
  let clock = 0;
  let spacingMs = 0;
  let lastWrite = -Infinity;
  let lastNotification = -Infinity;
  for (const call of calls) {
    let start = clock;
    if (isWrite(call)) {
      start = Math.max(start, lastWrite + PROBOT_WRITE_SPACING_MS);
      lastWrite = start;
      if (notifies(call)) {
        start = Math.max(start, lastNotification + PROBOT_NOTIFICATION_SPACING_MS);
        lastNotification = start;
      }
    }
    spacingMs += start - clock;
    clock = start + roundTripMs;
  }
  return { totalMs: clock, spacingMs };
}

// The first event pays the installation token exchange; the token is cached for later events. It
// also finds the PR's sticky comment and the configuration's ETag: what a process new to the track pays.
const cold = await deliverChecked(1);
const sizes = [1, 10, 100];
const recorded = new Map<number, RecordedCall[]>();
for (const n of sizes) recorded.set(n, await deliverChecked(n));

/**
 * The burst, simulated: ten tracks of one installation (feature-f1 to feature-f10, each at GREEN
 * with its own open PR) each push a 1-commit step in the same minute, and the ten deliveries run
 * at once against one consort/state, as GitHub delivers them. Every write they make counts against
 * GitHub's secondary limit of about 80 content-creating requests a minute per installation (a read
 * does not). Each track must end at green-verify with its cycle dispatched, and every request must
 * be one GitHub documents.
 */
async function burst(): Promise<{ calls: number; writes: number; stateWrites: number }> {
  fake.reset(BURST_BRANCHES);
  await Promise.all(
    BURST_BRANCHES.map((branch) =>
      probot.receive({ id: randomUUID(), name: "push", payload: pushPayload(1, branch) } as Parameters<
        Probot["receive"]
      >[0]),
    ),
  );
  const stuck = BURST_BRANCHES.filter(
    (b) => (JSON.parse(fake.stateFile(b)) as { snapshot: TrackSnapshot }).snapshot.stage !== "green-verify",
  );
  if (stuck.length > 0 || fake.dispatched !== BURST_TRACKS)
    throw new Error(
      `the burst should move all ${BURST_TRACKS} tracks to green-verify with one dispatch each; stuck: ${stuck.join(", ") || "none"}, dispatched ${fake.dispatched}`,
    );
  const violations = fake.requests.flatMap((r) => checkRequest(r.method, r.path, r.body).violations);
  if (violations.length > 0)
    throw new Error(`the burst made requests GitHub does not document:\n  ${violations.join("\n  ")}`);
  return {
    calls: fake.requests.length,
    writes: fake.requests.filter(isWrite).length,
    stateWrites: fake.requests.filter((r) => r.method === "PUT").length,
  };
}
const burst10 = await burst();
console.log(
  `\nburst: ${BURST_TRACKS} tracks of one installation each pushing a step at once: ${burst10.calls} calls, ${burst10.writes} writes (${burst10.stateWrites} state writes), against GitHub's ~80 content-creating requests a minute`,
);

const runs = benchRuns(60);
const rows: Summary[] = [];
for (const n of sizes) {
  rows.push(await measure(`push of ${n} commit${n > 1 ? "s" : ""}`, () => deliver(n), { runs, warmup: 10 }));
}
printTable("app: push webhook to finished effects (ms), in process: GitHub answers at once, no write spacing", rows, {
  baseline: "push of 1 commit",
});

const { low, high } = GITHUB_ROUND_TRIP_MS;
const modelled = sizes.map((n, i) => {
  const calls = recorded.get(n)!;
  const ours = rows[i]!.median;
  const [atLow, atHigh] = [low, high].map((rtt) => modelOnGitHub(calls, rtt));
  return {
    n,
    calls: calls.length,
    writes: calls.filter(isWrite).length,
    notifying: calls.filter(notifies).length,
    ours,
    spacing: atLow!.spacingMs,
    low: ours + atLow!.totalMs,
    high: ours + atHigh!.totalMs,
  };
});
console.log(
  `\nmodelled on GitHub (ours + ${low}–${high} ms per call + Probot's write spacing of ${PROBOT_WRITE_SPACING_MS / 1000} s, ${PROBOT_NOTIFICATION_SPACING_MS / 1000} s for notifying writes), per event:`,
);
for (const m of modelled) {
  console.log(
    `  push of ${m.n}: ${m.calls} calls (${m.writes} writes, ${m.notifying} notifying): ${(m.low / 1000).toFixed(1)}–${(m.high / 1000).toFixed(1)} s, of which write spacing ${(m.spacing / 1000).toFixed(1)} s at ${low} ms per call and ours ${m.ours.toFixed(0)} ms`,
  );
}
console.log(
  "(calls counted from the run; the installation token, cached after an installation's first event, not included)",
);
console.log(
  `push of 1: ${recorded.get(1)!.filter((c) => c.notModified).length} of its calls a 304 (free); on a process new to the track ${cold.filter((c) => !/^\/app\/installations\//.test(c.path)).length} calls`,
);
if (wantsJson()) {
  const push1 = modelled[0]!;
  printJson({
    push100_ms_median: Number(rows[2]!.median.toFixed(2)),
    ...tailEntry("push100_ms", rows[2]!),
    push1_api_calls: push1.calls,
    // The calls GitHub counts against the rate limit (a 304 to a conditional read is free).
    push1_api_calls_charged: push1.calls - recorded.get(1)!.filter((c) => c.notModified).length,
    // A process that has not yet seen this PR's comment or the configuration's ETag (the token exchange left out).
    push1_api_calls_cold: cold.filter((c) => !/^\/app\/installations\//.test(c.path)).length,
    push1_api_writes: push1.writes,
    push1_github_ms_low: Math.round(push1.low),
    push1_github_ms_high: Math.round(push1.high),
    // Ten tracks of one installation each pushing a step within the same minute, simulated (see burst()).
    burst10_writes_per_min: burst10.writes,
  });
}
