import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import nock from "nock";
import { Octokit } from "@octokit/rest";
import type { TrackSnapshot } from "../../src/orchestrator/types.js";
import { emptyTrackState, sealState, serialiseStateFile } from "../../src/state/index.js";
import type { BranchCommit } from "../../src/board/timeline.js";
import { checkRequest } from "../helpers/github-api.js";

/**
 * GitHub as the board meets it, remembering who may read what.
 *
 * - github.com's OAuth web flow on a real local server (the browser is redirected there):
 *   /login/oauth/authorize sends the browser back to the callback with a one-time code and the
 *   state it was given, as GitHub does once the user authorises; /login/oauth/access_token answers
 *   in GitHub's documented JSON shape (`access_token`, `token_type`, `scope`; a bad code is
 *   `200 {"error":"bad_verification_code",…}`). That endpoint is not in the REST description.
 * - api.github.com through nock, every request checked against @octokit/openapi: GET /user,
 *   /user/installations, /user/installations/{id}/repositories for the user's token (only what the
 *   user may read), and the app's reads of consort/state (ref with ETag and If-None-Match → 304,
 *   commit, trees, contents) for an installation token.
 */

interface Repo {
  owner: string;
  name: string;
  private: boolean;
  installationId: number;
  /** Track id → sealed state file text. */
  tracks: Map<string, string>;
  stateVersion: number;
  /** `base...head` → the commits GitHub's compare lists, oldest first. */
  compares: Map<string, BranchCommit[]>;
  /** Commit sha → the check runs on it (any app's). */
  checkRuns: Map<string, CheckRunSpec[]>;
}

/** A check run as some app wrote it on a commit. */
export interface CheckRunSpec {
  name: string;
  appId: number;
  conclusion: "success" | "failure" | null;
  summary: string;
  completedAt: string;
}

const API = "https://api.github.com";
const b64 = (text: string) => Buffer.from(text).toString("base64");
const hex = (text: string) => createHash("sha1").update(text).digest("hex");

export class BoardGitHub {
  readonly clientId = "Iv1.boardtest0000001";
  readonly clientSecret = "board-test-client-secret-0123456789";
  readonly violations: string[] = [];
  readonly apiCalls: Array<{ method: string; path: string; status: number; who: string }> = [];
  /** What the OAuth server was asked (authorize and token exchanges). */
  readonly oauthCalls: Array<{ path: string; params: Record<string, string> }> = [];
  /** The login the next authorize request signs in as (the user who clicks "Authorize"). */
  nextUser = "alice";
  private readonly repos = new Map<string, Repo>();
  private readonly access = new Map<string, Set<string>>();
  private readonly tokens = new Map<string, string>();
  private readonly codes = new Map<string, string>();
  private server?: Server;
  url = "";

  constructor(private readonly stateKey: string) {}

  addRepo(fullName: string, options: { private: boolean; installationId: number; readers: string[] }): void {
    const [owner, name] = fullName.split("/") as [string, string];
    this.repos.set(fullName, {
      owner,
      name,
      private: options.private,
      installationId: options.installationId,
      tracks: new Map(),
      stateVersion: 0,
      compares: new Map(),
      checkRuns: new Map(),
    });
    for (const login of options.readers) {
      const set = this.access.get(login) ?? new Set<string>();
      set.add(fullName);
      this.access.set(login, set);
    }
  }

  /** The app writes a track's state (sealed with the app's key), moving consort/state. */
  writeState(fullName: string, snapshot: TrackSnapshot): void {
    const repo = this.repos.get(fullName)!;
    const state = emptyTrackState({
      trackId: snapshot.context.trackId,
      repository: fullName,
      branch: snapshot.context.branch,
      snapshot,
      now: new Date(snapshot.context.updatedAt),
    });
    repo.tracks.set(snapshot.context.trackId, serialiseStateFile(sealState(state, this.stateKey)));
    repo.stateVersion += 1;
  }

  /** The commit consort/state stands at (what the ref answers). */
  stateCommit(fullName: string): string {
    return hex(`commit ${this.repos.get(fullName)!.stateVersion}`);
  }

  /** The track's branch holds these commits since its merge base with `base` (GitHub's compare answers them). */
  setCommits(fullName: string, basehead: string, commits: BranchCommit[]): void {
    this.repos.get(fullName)!.compares.set(basehead, commits);
  }

  /** An app writes a check run on a commit. */
  addCheckRun(fullName: string, sha: string, run: CheckRunSpec): void {
    const runs = this.repos.get(fullName)!.checkRuns;
    runs.set(sha, [...(runs.get(sha) ?? []), run]);
  }

  /** Someone edits a track's file on consort/state by hand (its signature no longer matches). */
  tamper(fullName: string, trackId: string): void {
    const repo = this.repos.get(fullName)!;
    repo.tracks.set(
      trackId,
      repo.tracks.get(trackId)!.replace('"approver": "lead-human"', '"approver": "sneaky-agent"'),
    );
    repo.stateVersion += 1;
  }

  /** A client acting as the app's installation (what Probot's `app.auth(id)` gives). */
  installationClient = async (installationId: number) =>
    new Octokit({
      auth: `ghs_installation_${installationId}`,
      request: { retries: 0 },
      log: { debug() {}, info() {}, warn() {}, error() {} },
    });

  /** Start github.com's OAuth server on 127.0.0.1; `callback` is the app's registered callback URL. */
  async start(callback: () => string): Promise<void> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (url.pathname === "/login/oauth/authorize" && req.method === "GET") {
        const params = Object.fromEntries(url.searchParams);
        this.oauthCalls.push({ path: url.pathname, params });
        if (params.client_id !== this.clientId) {
          res.writeHead(404).end("Not Found");
          return;
        }
        // GitHub takes a redirect_uri only if it is one of the app's callback URLs; otherwise it sends
        // the browser to the first registered one with the error, or shows its own page when none is.
        const registered = callback();
        if (params.redirect_uri !== undefined && params.redirect_uri !== registered) {
          const refused = new URL(registered);
          refused.searchParams.set("error", "redirect_uri_mismatch");
          refused.searchParams.set(
            "error_description",
            "The redirect_uri MUST match the registered callback URL for this application.",
          );
          refused.searchParams.set(
            "error_uri",
            "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch",
          );
          if (params.state !== undefined) refused.searchParams.set("state", params.state);
          res.writeHead(302, { location: refused.toString() }).end();
          return;
        }
        const code = randomBytes(10).toString("hex");
        this.codes.set(code, this.nextUser);
        const back = new URL(params.redirect_uri ?? registered);
        back.searchParams.set("code", code);
        if (params.state !== undefined) back.searchParams.set("state", params.state);
        res.writeHead(302, { location: back.toString() }).end();
        return;
      }
      if (url.pathname === "/login/oauth/access_token" && req.method === "POST") {
        let text = "";
        req.on("data", (chunk: Buffer) => (text += chunk.toString()));
        req.on("end", () => {
          const params = (req.headers["content-type"] ?? "").includes("json")
            ? (JSON.parse(text) as Record<string, string>)
            : Object.fromEntries(new URLSearchParams(text));
          this.oauthCalls.push({
            path: url.pathname,
            params: { ...params, client_secret: params.client_secret ? "(given)" : "" },
          });
          const json = (body: unknown) =>
            res.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
          if (params.client_id !== this.clientId || params.client_secret !== this.clientSecret)
            return json({
              error: "incorrect_client_credentials",
              error_description: "The client_id and/or client_secret passed are incorrect.",
              error_uri:
                "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#incorrect-client-credentials",
            });
          const login = params.code ? this.codes.get(params.code) : undefined;
          if (!login)
            return json({
              error: "bad_verification_code",
              error_description: "The code passed is incorrect or expired.",
              error_uri:
                "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#bad-verification-code",
            });
          this.codes.delete(params.code!);
          const token = `ghu_${randomBytes(12).toString("hex")}`;
          this.tokens.set(token, login);
          json({
            access_token: token,
            expires_in: 28800,
            refresh_token: `ghr_${randomBytes(12).toString("hex")}`,
            refresh_token_expires_in: 15811200,
            token_type: "bearer",
            scope: "",
          });
        });
        return;
      }
      res.writeHead(404).end("Not Found");
    });
    await new Promise<void>((done) => this.server!.listen(0, "127.0.0.1", () => done()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server!.close(() => done()));
  }

  /** Answer api.github.com through nock (again after each test: the setup cleans nock). */
  intercept(): void {
    const scope = nock(API).persist();
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
      // eslint-disable-next-line @typescript-eslint/no-this-alias
      const double = this;
      scope
        .intercept(() => true, method)
        .reply(function (uri, body) {
          return double.answer(method, uri, body, this.req.headers);
        });
    }
  }

  verify(): void {
    if (this.violations.length > 0) throw new Error(`GitHub double found problems:\n  ${this.violations.join("\n  ")}`);
  }

  private answer(
    method: string,
    uri: string,
    rawBody: unknown,
    headers: Record<string, string | string[] | undefined>,
  ): [number, unknown?, Record<string, string>?] {
    const url = new URL(uri, API);
    const body = typeof rawBody === "string" && rawBody !== "" ? (JSON.parse(rawBody) as unknown) : undefined;
    const { violations } = checkRequest(method, uri, body);
    this.violations.push(...violations);
    const token = String(headers.authorization ?? "").replace(/^(?:Bearer|token) /i, "");
    const reply = this.route(method, url, token, String(headers["if-none-match"] ?? ""));
    this.apiCalls.push({
      method,
      path: url.pathname,
      status: reply[0],
      who: this.tokens.get(token) ?? token.split("_").slice(0, 2).join("_"),
    });
    return reply;
  }

  private route(
    method: string,
    url: URL,
    token: string,
    ifNoneMatch: string,
  ): [number, unknown?, Record<string, string>?] {
    const notFound: [number, unknown] = [
      404,
      { message: "Not Found", documentation_url: "https://docs.github.com/rest" },
    ];
    const path = decodeURIComponent(url.pathname);
    const login = this.tokens.get(token);
    if (method === "GET" && path === "/user")
      return login ? [200, { login, id: 1000 + login.length, type: "User" }] : [401, { message: "Bad credentials" }];
    if (method === "GET" && path === "/user/installations") {
      if (!login) return [401, { message: "Bad credentials" }];
      const ids = [
        ...new Set([...(this.access.get(login) ?? [])].map((name) => this.repos.get(name)!.installationId)),
      ].sort();
      return [
        200,
        {
          total_count: ids.length,
          installations: ids.map((id) => ({
            id,
            account: { login: "acme" },
            app_id: 123456,
            target_type: "Organization",
          })),
        },
      ];
    }
    const installationRepos = /^\/user\/installations\/(\d+)\/repositories$/.exec(path);
    if (method === "GET" && installationRepos) {
      if (!login) return [401, { message: "Bad credentials" }];
      const id = Number(installationRepos[1]);
      const readable = [...(this.access.get(login) ?? [])]
        .map((name) => this.repos.get(name)!)
        .filter((repo) => repo.installationId === id);
      if (readable.length === 0) return notFound;
      return [
        200,
        {
          total_count: readable.length,
          repositories: readable.map((repo) => ({
            id: hex(repo.name).length,
            name: repo.name,
            full_name: `${repo.owner}/${repo.name}`,
            owner: { login: repo.owner },
            private: repo.private,
            default_branch: "main",
          })),
        },
      ];
    }
    const repoPath = /^\/repos\/([^/]+)\/([^/]+)\/(.+)$/.exec(path);
    if (!repoPath) return notFound;
    const repo = this.repos.get(`${repoPath[1]}/${repoPath[2]}`);
    // An installation token reads only its own installation's repositories.
    if (!repo || token !== `ghs_installation_${repo.installationId}`) return notFound;
    const rest = repoPath[3]!;
    const commit = hex(`commit ${repo.stateVersion}`);
    const root = hex(`root ${repo.stateVersion}`);
    const tracksTree = hex(`tracks ${repo.stateVersion}`);
    if (rest === "git/ref/heads/consort/state") {
      if (repo.tracks.size === 0) return notFound;
      const etag = `"${commit}"`;
      if (ifNoneMatch === etag) return [304, "", { etag }];
      return [
        200,
        {
          ref: "refs/heads/consort/state",
          node_id: "REF_1",
          url: `${API}/repos/x`,
          object: { sha: commit, type: "commit", url: `${API}/x` },
        },
        { etag },
      ];
    }
    if (rest === `git/commits/${commit}`)
      return [200, { sha: commit, tree: { sha: root, url: `${API}/x` }, parents: [], message: "state" }];
    if (rest === `git/trees/${root}`)
      return [
        200,
        { sha: root, truncated: false, tree: [{ path: "tracks", mode: "040000", type: "tree", sha: tracksTree }] },
      ];
    if (rest === `git/trees/${tracksTree}`)
      return [
        200,
        {
          sha: tracksTree,
          truncated: false,
          tree: [...repo.tracks.keys()].map((id) => ({
            path: `${id}.json`,
            mode: "100644",
            type: "blob",
            sha: hex(id),
          })),
        },
      ];
    const compare = /^compare\/(.+)$/.exec(rest);
    if (method === "GET" && compare) {
      const commits = repo.compares.get(compare[1]!);
      if (!commits) return notFound;
      const perPage = Number(url.searchParams.get("per_page") ?? 250);
      const page = Number(url.searchParams.get("page") ?? 1);
      const base = compare[1]!.split("...")[0]!;
      return [
        200,
        {
          url: `${API}/repos/${repo.owner}/${repo.name}/compare/${compare[1]}`,
          html_url: `https://github.com/${repo.owner}/${repo.name}/compare/${compare[1]}`,
          status: "ahead",
          ahead_by: commits.length,
          behind_by: 0,
          total_commits: commits.length,
          base_commit: { sha: hex(base) },
          merge_base_commit: { sha: hex(base) },
          commits: commits.slice((page - 1) * perPage, page * perPage).map((c) => ({
            sha: c.sha,
            node_id: `C_${c.sha.slice(0, 8)}`,
            html_url: c.url,
            url: `${API}/repos/${repo.owner}/${repo.name}/commits/${c.sha}`,
            author: c.author ? { login: c.author, id: c.author.length, type: "User" } : null,
            committer: c.author ? { login: c.author, id: c.author.length, type: "User" } : null,
            parents: c.merge ? [{ sha: hex(`${c.sha}^1`) }, { sha: hex(`${c.sha}^2`) }] : [{ sha: hex(`${c.sha}^1`) }],
            commit: {
              message: c.message,
              author: { name: c.author ?? "someone", email: "someone@example.com", date: c.at },
              committer: { name: c.author ?? "someone", email: "someone@example.com", date: c.at },
            },
          })),
          files: [],
        },
      ];
    }
    const checkRuns = /^commits\/([0-9a-f]{40})\/check-runs$/.exec(rest);
    if (method === "GET" && checkRuns) {
      const name = url.searchParams.get("check_name");
      const runs = (repo.checkRuns.get(checkRuns[1]!) ?? []).filter((run) => !name || run.name === name);
      return [
        200,
        {
          total_count: runs.length,
          check_runs: runs.map((run, index) => ({
            id: 9000 + index,
            name: run.name,
            head_sha: checkRuns[1],
            status: "completed",
            conclusion: run.conclusion,
            started_at: run.completedAt,
            completed_at: run.completedAt,
            html_url: `https://github.com/${repo.owner}/${repo.name}/runs/${9000 + index}`,
            output: { title: run.name, summary: run.summary, text: null, annotations_count: 0 },
            app: { id: run.appId, slug: `app-${run.appId}`, name: `App ${run.appId}` },
          })),
        },
      ];
    }
    const contents = /^contents\/(.+)$/.exec(rest);
    if (contents) {
      const file = /^tracks\/(.+)\.json$/.exec(contents[1]!);
      const text = file ? repo.tracks.get(file[1]!) : undefined;
      if (!text) return notFound;
      return [
        200,
        {
          type: "file",
          encoding: "base64",
          content: b64(text),
          path: contents[1],
          name: `${file![1]}.json`,
          sha: hex(text),
          size: text.length,
        },
      ];
    }
    return notFound;
  }
}
