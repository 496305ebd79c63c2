import { readFile, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { simpleGit } from "simple-git";
import { formatZodError } from "../contracts/zod-error.js";
import { blobText, textLeftOut } from "../github/blob-text.js";
import type { GitHubClient } from "../github/client.js";
import { githubMessage, httpStatus } from "../github/client.js";
import {
  checkStateFile,
  createStateStore,
  expandStored,
  githubStoredSource,
  STATE_BRANCH,
  expandStateFileFromGit,
  unsealed,
  TamperedStateError,
  TrackId,
  trackIdForBranch,
  trackPath,
  TrackStateFile,
} from "../state/index.js";
import { ToolError } from "./errors.js";
import { consortCommand } from "../contracts/command.js";

/**
 * Reading a track's state for the tools, read-only. From a file (`--state`): a signed state file
 * as stored on `consort/state`, or a bare orchestrator snapshot. From GitHub: the track's file on
 * the repository's `consort/state` branch. A signed file is verified with CONSORT_STATE_KEY; when
 * the key is absent it is refused unless the server was started to read unverified state, and
 * every answer then says so (the app verifies it again before anything advances).
 */

export type StateSource =
  | { kind: "file"; path: string }
  | { kind: "github"; owner: string; repo: string; octokit: GitHubClient }
  | { kind: "none" };

export interface StateReading {
  /** The HMAC key of state files (CONSORT_STATE_KEY); never logged or returned. */
  key?: string;
  /** Read signed state without checking its signature (the server was told to). */
  allowUnverified: boolean;
}

export interface LoadedState {
  trackId: string;
  /** The orchestrator snapshot, not yet restored (the caller restores it, failing closed). */
  snapshot: unknown;
  source: { kind: "file" | "github" | "commits"; location: string; verified: boolean };
}

/** The track a call is about: the one it names, else the one paired with the checkout's branch. */
export async function resolveTrackId(repoPath: string, requested: string | undefined): Promise<string> {
  if (requested !== undefined) {
    const parsed = TrackId.safeParse(requested);
    if (!parsed.success)
      throw new ToolError(
        formatZodError(parsed.error, `"${requested}" is not a track id`, { inline: true }),
        "Pass the track id (the branch name made filename-safe), or omit it to use the checkout's branch.",
        "INVALID_TRACK",
      );
    return parsed.data;
  }
  let branch: string;
  try {
    branch = await currentBranch(repoPath);
  } catch (error) {
    throw new ToolError(
      `Could not read the current git branch of ${repoPath}: ${(error as Error).message.split("\n")[0]}`,
      "Start the server in a git checkout (-C), or pass the track id explicitly.",
      "NO_BRANCH",
    );
  }
  if (!branch || branch === "HEAD")
    throw new ToolError(
      `${repoPath} is on a detached HEAD, so it names no track.`,
      "Check out the track's branch, or pass the track id explicitly.",
      "NO_BRANCH",
    );
  return trackIdForBranch(branch);
}

/**
 * The checkout's branch, read from `.git/HEAD` (following a worktree's `gitdir:`) so a tool call
 * does not spawn git; anything unusual falls back to asking git itself.
 */
export async function currentBranch(repoPath: string): Promise<string> {
  try {
    let gitDir = join(repoPath, ".git");
    if ((await stat(gitDir)).isFile()) {
      const pointer = /^gitdir:\s*(.+)$/m.exec(await readFile(gitDir, "utf8"));
      if (!pointer) throw new Error("unreadable .git file");
      gitDir = resolve(repoPath, pointer[1]!.trim());
    }
    const head = (await readFile(join(gitDir, "HEAD"), "utf8")).trim();
    const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(head);
    return ref ? ref[1]! : "HEAD";
  } catch {
    return (await simpleGit(repoPath).revparse(["--abbrev-ref", "HEAD"])).trim();
  }
}

export async function loadState(source: StateSource, reading: StateReading, trackId: string): Promise<LoadedState> {
  switch (source.kind) {
    case "none":
      throw new ToolError(
        "No track state is available to this server.",
        `Start \`${consortCommand("mcp")}\` with --state <file>, or with GITHUB_TOKEN set so it reads the repository's consort/state branch.`,
        "NO_STATE",
      );
    case "file":
      return loadFromFile(source.path, reading, trackId);
    case "github":
      return loadFromGitHub(source, reading, trackId);
  }
}

/** The JSON of a state file, or an INVALID_STATE tool error naming `what` with `hint`. */
function parseStateJson(text: string, what: string, hint: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ToolError(`${what} is not valid JSON: ${(error as Error).message}`, hint, "INVALID_STATE");
  }
}

async function loadFromFile(path: string, reading: StateReading, trackId: string): Promise<LoadedState> {
  const location = resolve(path);
  let text: string;
  try {
    text = await readFile(location, "utf8");
  } catch (error) {
    throw new ToolError(
      `Could not read the state file ${location}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      "Check the --state path the server was started with.",
      "NO_STATE",
    );
  }
  const raw = parseStateJson(
    text,
    `The state file ${location}`,
    "Point --state at a track state file or an orchestrator snapshot.",
  );
  if (raw && typeof raw === "object" && "signature" in raw) {
    const fileTrack = (raw as { trackId?: unknown }).trackId;
    if (typeof fileTrack === "string" && fileTrack !== trackId) {
      throw new ToolError(
        `The state file ${location} is for track "${fileTrack}", not "${trackId}".`,
        `Call again with track "${fileTrack}", or start the server with that track's state file.`,
        "WRONG_TRACK",
      );
    }
    const file = verifySigned(text, reading, trackId, location);
    let state;
    try {
      // A compact file's texts and records are in the repository's git history: the clone the file is in.
      state = await expandStateFileFromGit(unsealed(file), dirname(location));
    } catch (error) {
      throw new ToolError(
        `The state file ${location} refers to its track's texts and finished units' records, which the git directory it is in does not hold: ${(error as Error).message}`,
        `Keep it in a clone that fetched the state branch (git fetch origin ${STATE_BRANCH}), or read the track from GitHub instead (a token and the repository).`,
        "INVALID_STATE",
      );
    }
    return {
      trackId,
      snapshot: state.snapshot,
      source: { kind: "file", location, verified: reading.key !== undefined },
    };
  }
  // A bare snapshot is a person's own local file: there is no signature to check.
  const snapshotTrack = (raw as { context?: { trackId?: unknown } } | null)?.context?.trackId;
  if (typeof snapshotTrack === "string" && snapshotTrack !== trackId) {
    throw new ToolError(
      `The snapshot in ${location} is for track "${snapshotTrack}", not "${trackId}".`,
      `Call again with track "${snapshotTrack}".`,
      "WRONG_TRACK",
    );
  }
  return { trackId, snapshot: raw, source: { kind: "file", location, verified: false } };
}

async function loadFromGitHub(
  source: Extract<StateSource, { kind: "github" }>,
  reading: StateReading,
  trackId: string,
): Promise<LoadedState> {
  const { owner, repo, octokit } = source;
  const location = `${owner}/${repo}@${STATE_BRANCH}:${trackPath(trackId)}`;
  if (reading.key) {
    let state;
    try {
      // Status shows every unit's evidence: the finished units' records are read too.
      state = await createStateStore({ octokit, owner, repo, key: reading.key }).read(trackId, { history: true });
    } catch (error) {
      if (error instanceof TamperedStateError)
        throw new ToolError(
          error.message,
          "Do not work on this track until a maintainer re-seals its state.",
          "TAMPERED_STATE",
        );
      throw new ToolError(
        `Could not read ${location}: ${(error as Error).message}`,
        "Check the token's access to the repository and try again.",
        "STATE_UNAVAILABLE",
      );
    }
    if (!state) throw noTrack(location, trackId);
    return { trackId, snapshot: state.snapshot, source: { kind: "github", location, verified: true } };
  }
  let data: unknown;
  try {
    data = (await octokit.rest.repos.getContent({ owner, repo, path: trackPath(trackId), ref: STATE_BRANCH })).data;
  } catch (error) {
    if (httpStatus(error) === 404) throw noTrack(location, trackId);
    throw new ToolError(
      `Could not read ${location}: ${githubMessage(error)}`,
      "Check the token's access to the repository and try again.",
      "STATE_UNAVAILABLE",
    );
  }
  const file = data as { type?: string; encoding?: string; content?: string; sha?: string };
  let text: string | undefined;
  if (!Array.isArray(data) && file.type === "file") {
    if (file.encoding === "base64" && typeof file.content === "string")
      text = Buffer.from(file.content, "base64").toString("utf8");
    else if (textLeftOut(file))
      text = await blobText(octokit, owner, repo, file.sha).catch((error: unknown) => {
        throw new ToolError(
          `Could not read ${location} (its blob ${file.sha.slice(0, 12)}): ${githubMessage(error)}`,
          "Check the token's access to the repository and try again.",
          "STATE_UNAVAILABLE",
        );
      });
  }
  if (text === undefined) {
    throw new ToolError(
      `${location} is not a readable state file.`,
      "Ask a maintainer to check the consort/state branch.",
      "INVALID_STATE",
    );
  }
  const parsed = verifySigned(text, reading, trackId, location);
  let snapshot: unknown;
  try {
    snapshot = (
      await expandStored(trackId, unsealed(parsed), true, githubStoredSource(octokit, owner, repo, STATE_BRANCH))
    ).state.snapshot;
  } catch (error) {
    throw new ToolError(
      `Could not read what ${location} refers to: ${(error as Error).message}`,
      "Check the token's access to the repository and try again.",
      "STATE_UNAVAILABLE",
    );
  }
  return { trackId, snapshot, source: { kind: "github", location, verified: false } };
}

function noTrack(location: string, trackId: string): ToolError {
  return new ToolError(
    `Track "${trackId}" has no state (${location} does not exist).`,
    "The app starts a track when its branch is created; check the branch name, or pass another track id.",
    "NO_STATE",
  );
}

/** A signed file: verified with the key; without one, only its schema, and only when allowed. */
function verifySigned(text: string, reading: StateReading, trackId: string, location: string): TrackStateFile {
  if (reading.key) {
    const { problems, file } = checkStateFile(text, reading.key, { trackId });
    if (problems.length > 0 || !file) {
      throw new ToolError(
        `The state ${location} is tampered: ${problems.join("; ")}.`,
        "Do not work on this track until a maintainer re-seals its state.",
        "TAMPERED_STATE",
      );
    }
    return file;
  }
  if (!reading.allowUnverified) {
    throw new ToolError(
      `The state ${location} is signed, and this server has no CONSORT_STATE_KEY to verify it.`,
      "Set CONSORT_STATE_KEY for the server, or start it with --unverified-state to read state without checking its signature (the app still verifies it before anything advances).",
      "UNVERIFIED_STATE",
    );
  }
  const raw = parseStateJson(text, `The state ${location}`, "Ask a maintainer to check the consort/state branch.");
  const parsed = TrackStateFile.safeParse(raw);
  if (!parsed.success) {
    throw new ToolError(
      `${formatZodError(parsed.error, `The state ${location} breaks its schema`, { inline: true })}.`,
      "Do not work on this track until a maintainer restores its state.",
      "TAMPERED_STATE",
    );
  }
  if (parsed.data.trackId !== trackId) {
    throw new ToolError(
      `The state ${location} is for track "${parsed.data.trackId}", not "${trackId}".`,
      "Ask a maintainer to check the consort/state branch.",
      "TAMPERED_STATE",
    );
  }
  return parsed.data;
}
