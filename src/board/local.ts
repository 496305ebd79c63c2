import { basename } from "node:path";
import { simpleGit } from "simple-git";
import type { ConsortConfig } from "../config/consort-config.js";
import { restoreSnapshot } from "../orchestrator/index.js";
import { checkStateFile, STATE_BRANCH, TrackStateFile } from "../state/index.js";
import { ToolError } from "../tools/registry.js";
import { replayTrack } from "../tools/replay.js";
import type { BoardSource } from "./server.js";
import type { BoardTrack } from "./view.js";

/**
 * The tracks of a local checkout, for `consort board`: every track file of a fetched (or local)
 * `consort/state` branch, and the checked-out branch replayed from its commits as `consort next`
 * does (skipped when the state branch already holds that track, which knows its approvals). A change
 * is noticed by polling the refs, so the page follows commits as they land.
 */

export interface LocalSourceOptions {
  repoPath: string;
  config: ConsortConfig;
  /** CONSORT_STATE_KEY, to check the state files' signatures; without it they are read unsigned. */
  stateKey?: string;
  /** How often the refs are compared; default 250 ms. */
  pollMs?: number;
  clock?: () => Date;
  /** Unreadable state files are reported here (and left off the board). */
  warn?: (message: string) => void;
}

/** Where a fetched state branch may sit, most authoritative first (as src/tools/replay.ts reads it). */
const STATE_REFS = [`refs/remotes/origin/${STATE_BRANCH}`, `refs/heads/${STATE_BRANCH}`];

/** `owner/name` of the checkout's origin on GitHub, else `local/<folder>`. */
async function repositoryName(repoPath: string): Promise<string> {
  const url = await simpleGit(repoPath)
    .raw(["remote", "get-url", "origin"])
    .then((out) => out.trim())
    .catch(() => "");
  const match = /github\.com[:/]([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+?)(?:\.git)?$/.exec(url);
  if (match) return `${match[1]}/${match[2]}`;
  const folder = basename(repoPath).replace(/[^A-Za-z0-9._-]/g, "-") || "checkout";
  return `local/${folder}`;
}

export function localBoardSource(options: LocalSourceOptions): BoardSource & { close(): void } {
  const git = simpleGit(options.repoPath);
  const clock = options.clock ?? (() => new Date());
  const warn = options.warn ?? (() => {});
  const pollMs = options.pollMs ?? 250;
  const listeners = new Set<() => void>();
  let cached: { signature: string; tracks: Promise<BoardTrack[]> } | undefined;
  let lastSignature: string | undefined;
  let timer: NodeJS.Timeout | undefined;

  /** What the board's content depends on: the checked-out branch, every branch head and the state refs. */
  async function signature(): Promise<string> {
    const [head, refs] = await Promise.all([
      git.raw(["symbolic-ref", "-q", "HEAD"]).catch(() => "detached"),
      git.raw(["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", ...STATE_REFS]).catch(() => ""),
    ]);
    return `${head.trim()}\n${refs.trim()}`;
  }

  async function stateTracks(): Promise<BoardTrack[]> {
    for (const ref of STATE_REFS) {
      const exists = await git
        .raw(["rev-parse", "--verify", "--quiet", ref])
        .then((out) => out.trim() !== "")
        .catch(() => false);
      if (!exists) continue;
      const names = (await git.raw(["ls-tree", "--name-only", `${ref}:tracks`]).catch(() => ""))
        .split("\n")
        .filter((name) => name.endsWith(".json"));
      const tracks: BoardTrack[] = [];
      for (const name of names) {
        const path = `tracks/${name}`;
        const text = await git.raw(["show", `${ref}:${path}`]);
        const track = readStateFile(text, `${ref}:${path}`, name.slice(0, -".json".length));
        if (track) tracks.push(track);
      }
      return tracks;
    }
    return [];
  }

  function readStateFile(text: string, where: string, trackId: string): BoardTrack | undefined {
    try {
      let file: TrackStateFile;
      if (options.stateKey) {
        const checked = checkStateFile(text, options.stateKey, { trackId });
        if (checked.problems.length > 0 || !checked.file) {
          warn(`${where} is left off the board: ${checked.problems.join("; ")}`);
          return undefined;
        }
        file = checked.file;
      } else {
        file = TrackStateFile.parse(JSON.parse(text));
      }
      return {
        repository: file.repository,
        snapshot: restoreSnapshot(file.snapshot),
        config: options.config,
        provenance: options.stateKey ? "signed" : "unsigned",
      };
    } catch (error) {
      warn(`${where} is left off the board: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
      return undefined;
    }
  }

  async function load(): Promise<BoardTrack[]> {
    const [fromState, repository] = await Promise.all([stateTracks(), repositoryName(options.repoPath)]);
    try {
      const stateKey = options.stateKey;
      const track = await replayTrack(
        options.repoPath,
        options.config,
        clock().toISOString(),
        stateKey ? { stateKey } : {},
      );
      const held = fromState.findIndex((t) => t.snapshot.context.trackId === track.trackId);
      // The app's verified state with the commits since replayed on top is the newest view of this track.
      const replayed: BoardTrack = {
        repository: held >= 0 ? fromState[held]!.repository : repository,
        snapshot: track.snapshot,
        config: options.config,
        provenance: track.fromState && track.commits === 0 ? "signed" : "commits",
      };
      if (held < 0) return [...fromState, replayed];
      if (track.fromState) return fromState.map((t, index) => (index === held ? replayed : t));
    } catch (error) {
      // On the default branch or a detached HEAD there is no track to replay: the state branch still shows.
      if (!(error instanceof ToolError)) throw error;
    }
    return fromState;
  }

  async function poll(): Promise<void> {
    const now = await signature();
    if (lastSignature !== undefined && now !== lastSignature) for (const listener of listeners) listener();
    lastSignature = now;
  }

  function schedule(): void {
    timer = setTimeout(() => {
      void poll().finally(() => {
        if (listeners.size > 0) schedule();
        else timer = undefined;
      });
    }, pollMs);
    timer.unref();
  }

  return {
    async tracks() {
      const now = await signature();
      if (cached?.signature !== now) cached = { signature: now, tracks: load() };
      try {
        return await cached.tracks;
      } catch (error) {
        cached = undefined;
        throw error;
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      if (!timer) {
        void signature().then((now) => (lastSignature ??= now));
        schedule();
      }
      return () => listeners.delete(listener);
    },
    close() {
      listeners.clear();
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
