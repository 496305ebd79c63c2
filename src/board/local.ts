import { basename } from "node:path";
import { simpleGit } from "simple-git";
import type { ConsortConfig } from "../config/consort-config.js";
import { restoreSnapshot } from "../orchestrator/index.js";
import { checkStateFile, expandStored, gitStoredSource, STATE_REFS, TrackStateFile, unsealed } from "../state/index.js";
import { localLane, replayTrack, ToolError } from "../tools/index.js";
import type { BoardSource } from "./server.js";
import type { BranchCommit } from "./timeline.js";
import type { BoardTrack, TrackDetails } from "./view.js";

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

/** A ref as a person names it: `origin/consort/state`, `consort/state`. */
const shortRef = (ref: string) => ref.replace(/^refs\/(remotes\/|heads\/)/, "");

/** The first of `refs` this checkout has, or undefined. */
async function firstRef(repoPath: string, refs: string[]): Promise<string | undefined> {
  for (const ref of refs) {
    const found = await simpleGit(repoPath)
      .raw(["rev-parse", "--verify", "--quiet", ref])
      .then((sha) => sha.trim() !== "")
      .catch(() => false);
    if (found) return ref;
  }
  return undefined;
}

const FIELD = "\x1f";
const RECORD = "\x1e";

/**
 * Every commit of a track's branch in this checkout since its merge base with the base branch,
 * oldest first (the local branch, else origin's), linked to GitHub when origin is there.
 */
async function localCommits(repoPath: string, track: BoardTrack): Promise<TrackDetails["commits"]> {
  const { branch, baseBranch } = track.snapshot.context;
  const head = await firstRef(repoPath, [`refs/heads/${branch}`, `refs/remotes/origin/${branch}`]);
  const base = await firstRef(repoPath, [`refs/remotes/origin/${baseBranch}`, `refs/heads/${baseBranch}`]);
  if (!head || !base) return undefined;
  const out = await simpleGit(repoPath).raw([
    "log",
    "--reverse",
    `--format=%H${FIELD}%aI${FIELD}%an${FIELD}%P${FIELD}%B${RECORD}`,
    `${base}..${head}`,
  ]);
  const onGitHub = !track.repository.startsWith("local/");
  const list: BranchCommit[] = out
    .split(RECORD)
    .map((record) => record.replace(/^\n/, ""))
    .filter((record) => record.includes(FIELD))
    .map((record) => {
      const [sha, at, author, parents, message] = record.split(FIELD) as [string, string, string, string, string];
      return {
        sha,
        at: new Date(at).toISOString(),
        author: author || null,
        message,
        merge: parents.trim().split(" ").length > 1,
        url: onGitHub ? `https://github.com/${track.repository}/commit/${sha}` : null,
      };
    });
  return { list, source: `the branch's commits in this checkout (git log ${shortRef(base)}..${shortRef(head)})` };
}

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
  let cached: { signature: string; tracks: Promise<BoardTrack[]>; problems: string[] } | undefined;
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

  async function stateTracks(problems: string[]): Promise<BoardTrack[]> {
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
      const at = (await git.raw(["rev-parse", ref])).trim().slice(0, 7);
      const stateSource = `${shortRef(ref)} at ${at}`;
      for (const name of names) {
        const path = `tracks/${name}`;
        const text = await git.raw(["show", `${ref}:${path}`]);
        const track = await readStateFile(text, ref, path, name.slice(0, -".json".length), problems);
        if (track) tracks.push({ ...track, stateSource });
      }
      return tracks;
    }
    return [];
  }

  async function readStateFile(
    text: string,
    ref: string,
    path: string,
    trackId: string,
    problems: string[],
  ): Promise<BoardTrack | undefined> {
    const where = `${ref}:${path}`;
    const leftOff = (reason: string) => {
      const message = `${where} is left off the board: ${reason}`;
      problems.push(message);
      warn(message);
    };
    try {
      let file: TrackStateFile;
      if (options.stateKey) {
        const checked = checkStateFile(text, options.stateKey, { trackId });
        if (checked.problems.length > 0 || !checked.file) {
          leftOff(checked.problems.join("; "));
          return undefined;
        }
        file = checked.file;
      } else {
        file = TrackStateFile.parse(JSON.parse(text));
      }
      // Every unit's evidence is shown: a compact file's texts and finished units' records are read back.
      const { state } = await expandStored(trackId, unsealed(file), true, gitStoredSource(options.repoPath, ref));
      return {
        repository: file.repository,
        snapshot: restoreSnapshot(state.snapshot),
        config: options.config,
        provenance: options.stateKey ? "signed" : "unsigned",
      };
    } catch (error) {
      leftOff(error instanceof Error ? error.message.split("\n")[0]! : String(error));
      return undefined;
    }
  }

  async function load(problems: string[]): Promise<BoardTrack[]> {
    const [fromState, repository] = await Promise.all([stateTracks(problems), repositoryName(options.repoPath)]);
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
        commitRefusals: track.refusals,
        ...(track.fromState
          ? { stateSource: `${shortRef(track.fromState.ref)} at ${track.fromState.head.slice(0, 7)}` }
          : track.lane
            ? { stateSource: localLane(track) }
            : {}),
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
    async details(track) {
      try {
        const commits = await localCommits(options.repoPath, track);
        return commits
          ? { commits, problems: [] }
          : {
              problems: [
                `The branch's commits: this checkout has neither ${track.snapshot.context.branch} nor origin/${track.snapshot.context.branch} with its base ${track.snapshot.context.baseBranch} (git fetch origin), so only the steps the machine recorded are listed.`,
              ],
            };
      } catch (error) {
        return { problems: [`The branch's commits could not be listed: ${(error as Error).message.split("\n")[0]}`] };
      }
    },
    async tracks() {
      const now = await signature();
      if (cached?.signature !== now) {
        const problems: string[] = [];
        cached = { signature: now, tracks: load(problems), problems };
      }
      try {
        return { tracks: await cached.tracks, problems: cached.problems };
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
