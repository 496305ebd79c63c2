import { z } from "zod";
import { defaultConfig } from "../config/consort-config.js";
import { readGitHubConfig } from "../github/config.js";
import type { GitHubClient } from "../github/client.js";
import { httpStatus } from "../github/client.js";
import { restoreSnapshot } from "../orchestrator/index.js";
import { createStateStore, STATE_BRANCH } from "../state/index.js";
import type { BoardSource, BoardViewer } from "./server.js";
import type { DeadLetter } from "./pages.js";
import type { BranchCommit } from "./timeline.js";
import type { BoardTrack, TrackDetails } from "./view.js";

/**
 * The tracks the app's board shows a signed-in user: only repositories the user's own token can
 * read through the app's installations (GET /user/installations, then each installation's
 * /user/installations/{id}/repositories), read with the installation's token and the state key.
 * A repository's tracks are kept until its `consort/state` ref moves: the ref is read with
 * If-None-Match, and GitHub does not count a 304 against the rate limit. Changes reach open pages
 * at once when this process wrote the state (`changes`), and through that conditional poll when
 * another process did.
 */

export interface AppSourceOptions {
  /** https://api.github.com, or a test double. */
  apiUrl: string;
  stateKey: string;
  /** Keys retired by a rotation (CONSORT_STATE_KEYS_PREVIOUS), which still open the files they sealed. */
  previousStateKeys?: readonly string[];
  /**
   * The app's id: a track's page shows the consort/schema check run this app wrote, never one of
   * that name by another app. Without it the page shows none, and says why.
   */
  appId?: number;
  /** A client acting as the app's installation (Probot's `app.auth(id)`). */
  installationClient(installationId: number): Promise<GitHubClient>;
  changes: BoardChanges;
  /** How often the state refs of watched repositories are polled while a page is open; default 2 s. */
  pollMs?: number;
  /** How long a user's list of readable repositories is reused; default 30 s. */
  accessCacheMs?: number;
  clock?: () => Date;
  log?: { warn(message: string): void };
  /** The app's dead letters (src/queue), every repository's: the board shows those of repositories the viewer may read. */
  deadLetters?: () => Promise<DeadLetter[]>;
}

/** State writes in this process, announced to open pages. */
export class BoardChanges {
  private readonly listeners = new Set<(repository: string) => void>();
  notify(repository: string): void {
    for (const listener of this.listeners) listener(repository);
  }
  subscribe(listener: (repository: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

const Installations = z.object({
  installations: z.array(z.object({ id: z.number().int() }).loose()),
});
const Repositories = z.object({
  repositories: z.array(
    z
      .object({
        full_name: z.string(),
        name: z.string(),
        owner: z.object({ login: z.string() }).loose(),
        default_branch: z.string(),
      })
      .loose(),
  ),
});

interface Readable {
  installationId: number;
  owner: string;
  repo: string;
  fullName: string;
  defaultBranch: string;
}

const MAX_PAGES = 10;

/** GitHub's compare of the base branch with the track's (GET /repos/{owner}/{repo}/compare/{basehead}). */
const Compare = z.object({
  commits: z.array(
    z
      .object({
        sha: z.string(),
        html_url: z.string(),
        parents: z.array(z.object({ sha: z.string() }).loose()),
        author: z.object({ login: z.string() }).loose().nullable(),
        commit: z
          .object({
            message: z.string(),
            author: z.object({ name: z.string().optional(), date: z.string().optional() }).loose().nullable(),
          })
          .loose(),
      })
      .loose(),
  ),
});

/** The check runs of a commit (GET /repos/{owner}/{repo}/commits/{ref}/check-runs). */
const CheckRuns = z.object({
  check_runs: z.array(
    z
      .object({
        name: z.string(),
        head_sha: z.string(),
        status: z.string(),
        conclusion: z.string().nullable(),
        completed_at: z.string().nullable().optional(),
        started_at: z.string().nullable().optional(),
        app: z.object({ id: z.number() }).loose().nullable(),
        output: z.object({ summary: z.string().nullable().optional() }).loose(),
      })
      .loose(),
  ),
});

const SCHEMA_CHECK = "consort/schema";

export function appBoardSource(options: AppSourceOptions): BoardSource {
  const clock = options.clock ?? (() => new Date());
  const pollMs = options.pollMs ?? 2000;
  const accessCacheMs = options.accessCacheMs ?? 30_000;
  const access = new Map<string, { at: number; repos: Readable[] }>();
  const repoCache = new Map<string, { etag: string; tracks: BoardTrack[] }>();
  const targets = new Map<string, Readable>();
  const watched = new Map<string, Readable>();
  const listeners = new Set<() => void>();
  let timer: NodeJS.Timeout | undefined;

  async function userGet(token: string, path: string): Promise<unknown> {
    const response = await fetch(`${options.apiUrl}${path}`, {
      headers: {
        authorization: `Bearer ${token}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
      },
    });
    if (!response.ok) throw new Error(`GitHub answered GET ${path.split("?")[0]} with ${response.status}`);
    return response.json();
  }

  /** Every repository the user's token can read through the app's installations. */
  async function readable(viewer: BoardViewer): Promise<Readable[]> {
    if (!viewer.token || !viewer.login) return [];
    const key = viewer.token;
    const kept = access.get(key);
    if (kept && clock().getTime() - kept.at < accessCacheMs) return kept.repos;
    const repos: Readable[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const { installations } = Installations.parse(
        await userGet(key, `/user/installations?per_page=100&page=${page}`),
      );
      for (const installation of installations) {
        for (let repoPage = 1; repoPage <= MAX_PAGES; repoPage++) {
          const { repositories } = Repositories.parse(
            await userGet(key, `/user/installations/${installation.id}/repositories?per_page=100&page=${repoPage}`),
          );
          for (const repository of repositories)
            repos.push({
              installationId: installation.id,
              owner: repository.owner.login,
              repo: repository.name,
              fullName: repository.full_name,
              defaultBranch: repository.default_branch,
            });
          if (repositories.length < 100) break;
        }
      }
      if (installations.length < 100) break;
    }
    access.set(key, { at: clock().getTime(), repos });
    return repos;
  }

  /** The state ref's ETag and commit, or undefined (not modified / no state branch). */
  async function readRef(octokit: GitHubClient, target: Readable, etag?: string) {
    try {
      const response = await octokit.request("GET /repos/{owner}/{repo}/git/ref/{ref}", {
        owner: target.owner,
        repo: target.repo,
        ref: `heads/${STATE_BRANCH}`,
        headers: etag ? { "if-none-match": etag } : {},
      });
      return { kind: "changed" as const, etag: response.headers.etag ?? "", sha: response.data.object.sha };
    } catch (error) {
      if (httpStatus(error) === 304) return { kind: "unchanged" as const };
      if (httpStatus(error) === 404) return { kind: "none" as const };
      throw error;
    }
  }

  async function repositoryTracks(target: Readable, problems: string[]): Promise<BoardTrack[]> {
    const octokit = await options.installationClient(target.installationId);
    const cached = repoCache.get(target.fullName);
    const ref = await readRef(octokit, target, cached?.etag);
    if (ref.kind === "unchanged" && cached) return cached.tracks;
    if (ref.kind === "none") {
      repoCache.set(target.fullName, { etag: "", tracks: [] });
      return [];
    }
    const store = createStateStore({
      octokit,
      owner: target.owner,
      repo: target.repo,
      key: options.stateKey,
      previousKeys: options.previousStateKeys ?? [],
    });
    const config = await readGitHubConfig({
      octokit,
      owner: target.owner,
      repo: target.repo,
      defaultBranch: target.defaultBranch,
    });
    const tracks: BoardTrack[] = [];
    const stateSource = ref.kind === "changed" && ref.sha ? `consort/state at ${ref.sha.slice(0, 7)}` : "consort/state";
    for (const trackId of await store.list()) {
      try {
        // The board shows every unit's evidence: the finished units' records are read too.
        const state = await store.read(trackId, { history: true });
        if (!state) continue;
        tracks.push({
          repository: target.fullName,
          snapshot: restoreSnapshot(state.snapshot),
          // A repository whose configuration Consort cannot use still shows its tracks, under the defaults.
          config: config.ok ? config.config : defaultConfig(),
          provenance: "signed",
          stateSource,
        });
      } catch (error) {
        // Tampered state shows nowhere as if it were sound: the board names it, the PR's checks say more.
        const reason = (error as Error).message.split("\n")[0];
        problems.push(`${target.fullName}: track ${trackId} is left off: ${reason}`);
        options.log?.warn(`board: ${target.fullName} track ${trackId} left off: ${reason}`);
      }
    }
    if (ref.kind === "changed" && ref.etag) repoCache.set(target.fullName, { etag: ref.etag, tracks });
    return tracks;
  }

  async function poll(): Promise<void> {
    for (const target of watched.values()) {
      const cached = repoCache.get(target.fullName);
      if (!cached?.etag) continue;
      try {
        const octokit = await options.installationClient(target.installationId);
        const ref = await readRef(octokit, target, cached.etag);
        if (ref.kind !== "unchanged") {
          repoCache.delete(target.fullName);
          for (const listener of listeners) listener();
        }
      } catch (error) {
        options.log?.warn(`board: polling ${target.fullName} failed: ${(error as Error).message}`);
      }
    }
  }

  function schedule(): void {
    timer = setTimeout(() => {
      void poll().finally(() => (listeners.size > 0 ? schedule() : (timer = undefined)));
    }, pollMs);
    timer.unref();
  }

  options.changes.subscribe((repository) => {
    repoCache.delete(repository);
    for (const listener of listeners) listener();
  });

  /** Every commit of the track's branch since its merge base with the base branch, oldest first. */
  async function branchCommits(octokit: GitHubClient, target: Readable, track: BoardTrack) {
    const { baseBranch, branch } = track.snapshot.context;
    const list: BranchCommit[] = [];
    for (let page = 1; page <= MAX_PAGES; page++) {
      const response = await octokit.request("GET /repos/{owner}/{repo}/compare/{basehead}", {
        owner: target.owner,
        repo: target.repo,
        basehead: `${baseBranch}...${branch}`,
        per_page: 100,
        page,
      });
      const { commits } = Compare.parse(response.data);
      for (const commit of commits)
        list.push({
          sha: commit.sha,
          at: commit.commit.author?.date ?? "",
          author: commit.author?.login ?? commit.commit.author?.name ?? null,
          message: commit.commit.message,
          merge: commit.parents.length > 1,
          url: commit.html_url,
        });
      if (commits.length < 100) break;
    }
    return { list, source: `the branch's commits on GitHub (compare ${baseBranch}...${branch})` };
  }

  /** The consort/schema check run this app wrote on the commit the track's checks stand on. */
  async function schemaCheck(
    octokit: GitHubClient,
    target: Readable,
    track: BoardTrack,
  ): Promise<TrackDetails["schema"]> {
    const { context } = track.snapshot;
    const sha = context.rejectedHead?.sha ?? context.head;
    const response = await octokit.request("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", {
      owner: target.owner,
      repo: target.repo,
      ref: sha,
      check_name: SCHEMA_CHECK,
      filter: "latest",
    });
    const ours = CheckRuns.parse(response.data).check_runs.find(
      (run) => run.name === SCHEMA_CHECK && run.app?.id === options.appId,
    );
    if (!ours?.output.summary)
      return {
        markdown: null,
        conclusion: null,
        source: `the consort/schema check runs on ${sha.slice(0, 7)}: none by this app yet (it is written on the track's next update)`,
      };
    const when = ours.completed_at ?? ours.started_at;
    return {
      markdown: ours.output.summary,
      conclusion: ours.conclusion ?? ours.status,
      source: `the consort/schema check run on ${sha.slice(0, 7)}${when ? ` (${when})` : ""}`,
    };
  }

  return {
    async details(track) {
      const target = targets.get(track.repository.toLowerCase());
      if (!target) return { problems: [] };
      const octokit = await options.installationClient(target.installationId);
      const problems: string[] = [];
      const [commits, schema] = await Promise.all([
        branchCommits(octokit, target, track).catch((error: unknown) => {
          problems.push(
            httpStatus(error) === 404
              ? `The branch's commits: ${track.snapshot.context.branch} is not on GitHub any more (merged or deleted), so only the steps the machine recorded are listed.`
              : `The branch's commits could not be listed: ${(error as Error).message.split("\n")[0]}`,
          );
          return undefined;
        }),
        options.appId === undefined
          ? (problems.push(
              "The schema diff: APP_ID is not set, so the board cannot tell this app's consort/schema check from another app's.",
            ),
            undefined)
          : schemaCheck(octokit, target, track).catch((error: unknown) => {
              problems.push(`The consort/schema check could not be read: ${(error as Error).message.split("\n")[0]}`);
              return undefined;
            }),
      ]);
      return { ...(commits ? { commits } : {}), ...(schema ? { schema } : {}), problems };
    },
    async tracks(viewer) {
      const repos = await readable(viewer);
      const all: BoardTrack[] = [];
      const problems: string[] = [];
      for (const target of repos) {
        watched.set(target.fullName, target);
        targets.set(target.fullName.toLowerCase(), target);
        try {
          all.push(...(await repositoryTracks(target, problems)));
        } catch (error) {
          // One repository that cannot be read does not hide the others; it is named with why.
          problems.push(
            `${target.fullName}: its consort/state could not be read: ${(error as Error).message.split("\n")[0]}`,
          );
        }
      }
      if (!options.deadLetters) return { tracks: all, problems };
      // Only the repositories the viewer's own token reads: a dead letter's reason is GitHub's answer about the repository.
      const seen = new Set(repos.map((r) => r.fullName.toLowerCase()));
      const deadLetters = await options.deadLetters().then(
        (dead) => dead.filter((d) => seen.has(d.repository.toLowerCase())),
        (error: unknown) => {
          problems.push(
            `The app's failed deliveries could not be read from its Postgres: ${(error as Error).message.split("\n")[0]}`,
          );
          return [];
        },
      );
      return { tracks: all, problems, deadLetters };
    },
    subscribe(listener) {
      listeners.add(listener);
      if (!timer) schedule();
      return () => listeners.delete(listener);
    },
  };
}
