import { z } from "zod";
import { defaultConfig } from "../config/consort-config.js";
import { readGitHubConfig } from "../config/load.js";
import type { GitHubClient } from "../github/client.js";
import { httpStatus } from "../github/client.js";
import { restoreSnapshot } from "../orchestrator/index.js";
import { createStateStore, STATE_BRANCH } from "../state/index.js";
import type { BoardSource, BoardViewer } from "./server.js";
import type { BoardTrack } from "./view.js";

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
  /** A client acting as the app's installation (Probot's `app.auth(id)`). */
  installationClient(installationId: number): Promise<GitHubClient>;
  changes: BoardChanges;
  /** How often the state refs of watched repositories are polled while a page is open; default 2 s. */
  pollMs?: number;
  /** How long a user's list of readable repositories is reused; default 30 s. */
  accessCacheMs?: number;
  clock?: () => Date;
  log?: { warn(message: string): void };
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

export function appBoardSource(options: AppSourceOptions): BoardSource {
  const clock = options.clock ?? (() => new Date());
  const pollMs = options.pollMs ?? 2000;
  const accessCacheMs = options.accessCacheMs ?? 30_000;
  const access = new Map<string, { at: number; repos: Readable[] }>();
  const repoCache = new Map<string, { etag: string; tracks: BoardTrack[] }>();
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
      return { kind: "changed" as const, etag: response.headers.etag ?? "" };
    } catch (error) {
      if (httpStatus(error) === 304) return { kind: "unchanged" as const };
      if (httpStatus(error) === 404) return { kind: "none" as const };
      throw error;
    }
  }

  async function repositoryTracks(target: Readable): Promise<BoardTrack[]> {
    const octokit = await options.installationClient(target.installationId);
    const cached = repoCache.get(target.fullName);
    const ref = await readRef(octokit, target, cached?.etag);
    if (ref.kind === "unchanged" && cached) return cached.tracks;
    if (ref.kind === "none") {
      repoCache.set(target.fullName, { etag: "", tracks: [] });
      return [];
    }
    const store = createStateStore({ octokit, owner: target.owner, repo: target.repo, key: options.stateKey });
    const config = await readGitHubConfig({
      octokit,
      owner: target.owner,
      repo: target.repo,
      defaultBranch: target.defaultBranch,
    });
    const tracks: BoardTrack[] = [];
    for (const trackId of await store.list()) {
      try {
        const state = await store.read(trackId);
        if (!state) continue;
        tracks.push({
          repository: target.fullName,
          snapshot: restoreSnapshot(state.snapshot),
          // A repository whose configuration Consort cannot use still shows its tracks, under the defaults.
          config: config.ok ? config.config : defaultConfig(),
          provenance: "signed",
        });
      } catch (error) {
        // Tampered state shows nowhere as if it were sound: the checks on the PR say what failed.
        options.log?.warn(`board: ${target.fullName} track ${trackId} left off: ${(error as Error).message}`);
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

  return {
    async tracks(viewer) {
      const repos = await readable(viewer);
      const all: BoardTrack[] = [];
      for (const target of repos) {
        watched.set(target.fullName, target);
        all.push(...(await repositoryTracks(target)));
      }
      return all;
    },
    subscribe(listener) {
      listeners.add(listener);
      if (!timer) schedule();
      return () => listeners.delete(listener);
    },
  };
}
