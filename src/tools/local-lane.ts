import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import lockfile from "proper-lockfile";
import { simpleGit } from "simple-git";
import { z } from "zod";
import { formatZodError } from "../contracts/zod-error.js";
import { GateName } from "../contracts/gates.js";
import { CycleRequest } from "../contracts/cycle-request.js";
import { DeployRequest } from "../contracts/deploy.js";
import { TrackId } from "../state/index.js";
import { ToolError } from "./errors.js";

/**
 * The local lane: a track's state on a plain checkout, kept in the repository's git directory
 * (`.git/consort/tracks/<id>.json`), where no push, clone or commit carries it. It is a rehearsal:
 * unsigned, marked so, and never evidence for the app (which reads only signed files on
 * consort/state). The same push reader and machine as the app move it on (`replayTrack`); a person
 * at the terminal may approve its gates (`consort approve`).
 */

/** What every lane file says of itself, so no reader takes it for the app's state. */
const REHEARSAL_NOTE =
  "a local rehearsal kept in the git directory: never pushed, and never evidence for the Consort app";

const Sha = z.string().regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/, "a full git commit sha");

/** A gate a person approved at the terminal, for rehearsal. */
export const LocalApproval = z
  .object({
    gate: GateName,
    /** The approver's git address (git config user.email). */
    by: z.string().min(1),
    at: z.string().min(1),
    /** The head the approval was given at: the gate's commits end there. */
    commit: Sha,
  })
  .strict();
export type LocalApproval = z.infer<typeof LocalApproval>;

/**
 * A job the machine asked for and nobody has run yet: the very request the app would dispatch
 * (`workflowRequestOf`), kept until `consort cycle` runs it and its verdict moves the lane on.
 */
export const LaneRequest = z.discriminatedUnion("workflow", [
  z.object({ workflow: z.literal("cycle"), dispatchId: z.string().min(1), request: CycleRequest }).strict(),
  z.object({ workflow: z.literal("deploy"), dispatchId: z.string().min(1), request: DeployRequest }).strict(),
]);
export type LaneRequest = z.infer<typeof LaneRequest>;

/** A job the lane ran: what it answered and where its result was written. */
export const LaneRun = z
  .object({
    dispatchId: z.string().min(1),
    workflow: z.enum(["cycle", "deploy"]),
    commit: Sha,
    verdict: z.string().min(1),
    at: z.string().min(1),
    result: z.string().min(1),
  })
  .strict();
export type LaneRun = z.infer<typeof LaneRun>;

export const LaneFile = z
  .object({
    kind: z.literal("consort-local-lane"),
    rehearsal: z.literal(true),
    note: z.literal(REHEARSAL_NOTE),
    trackId: TrackId,
    /** Where the track left the default branch: its first gate's commits start there. */
    base: Sha,
    /** The orchestrator snapshot, restored (and so checked) by the reader. */
    snapshot: z.unknown(),
    approvals: z.array(LocalApproval),
    /** Each refused commit's own reasons, by sha, as the replay that judged it found them. */
    refusals: z.record(Sha, z.array(z.string())),
    /** The cycle or release the machine waits for, when it waits for one. */
    pending: LaneRequest.optional(),
    /** The jobs run so far, oldest first (a run's number is its place here). */
    runs: z.array(LaneRun).optional(),
  })
  .strict();
export type LaneFile = z.infer<typeof LaneFile>;

/** The folder of the local lane in the checkout's git directory (shared by its worktrees). */
async function laneDir(repoPath: string): Promise<string> {
  const common = (await simpleGit(repoPath).raw(["rev-parse", "--git-common-dir"])).trim();
  return join(resolve(repoPath, common), "consort");
}

export const lanePath = async (repoPath: string, trackId: string) =>
  join(await laneDir(repoPath), "tracks", `${trackId}.json`);

/** The track's lane file, or undefined when the checkout has none; a file that does not parse is refused. */
export async function readLane(repoPath: string, trackId: string): Promise<LaneFile | undefined> {
  return (await loadLane(repoPath, trackId)).file;
}

/** The lane file and its text as read (for `writeLane`'s compare-and-swap); none when there is no file. */
export async function loadLane(repoPath: string, trackId: string): Promise<{ file?: LaneFile; text?: string }> {
  const path = await lanePath(repoPath, trackId);
  const text = await laneText(path);
  if (text === undefined) return {};
  return { file: parseLane(path, text, trackId), text };
}

const laneText = (path: string) =>
  readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined;
    throw error;
  });

function parseLane(path: string, text: string, trackId: string): LaneFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw badLane(path, `it is not JSON: ${(error as Error).message}`);
  }
  const parsed = LaneFile.safeParse(raw);
  if (!parsed.success) throw badLane(path, formatZodError(parsed.error, "it breaks its schema", { inline: true }));
  if (parsed.data.trackId !== trackId) throw badLane(path, `it is the lane of track "${parsed.data.trackId}"`);
  return parsed.data;
}

/**
 * Write the lane when it still reads as `expected` (its text when read; undefined: there was no
 * file), under a lock, so a board polling the lane and a person approving a gate never lose each
 * other's write. Not written when another process wrote it meanwhile: its newer lane stands.
 */
export async function writeLane(
  repoPath: string,
  lane: Omit<LaneFile, "kind" | "rehearsal" | "note">,
  expected: string | undefined,
): Promise<{ path: string; written: boolean }> {
  const path = await lanePath(repoPath, lane.trackId);
  const text = laneFileText(lane);
  // Nothing changed (a board refresh, a second `consort next`): no write, no lock.
  if (text === expected) return { path, written: false };
  await mkdir(dirname(path), { recursive: true });
  const release = await lockfile.lock(path, {
    lockfilePath: `${path}.lock`,
    realpath: false,
    stale: 15_000,
    retries: { retries: 40, minTimeout: 50, maxTimeout: 250 },
  });
  try {
    if ((await laneText(path)) !== expected) return { path, written: false };
    // Written whole, then renamed: a reader never sees half a file.
    const partial = `${path}.${process.pid}.partial`;
    await writeFile(partial, text);
    await rename(partial, path);
    return { path, written: true };
  } finally {
    await release().catch(() => {});
  }
}

function laneFileText(lane: Omit<LaneFile, "kind" | "rehearsal" | "note">): string {
  const file: LaneFile = { kind: "consort-local-lane", rehearsal: true, note: REHEARSAL_NOTE, ...lane };
  return `${JSON.stringify(file, null, 2)}\n`;
}

function badLane(path: string, why: string): ToolError {
  return new ToolError(
    `The local lane ${path} cannot be read: ${why}.`,
    `Delete ${path} to start the rehearsal over from the merge base (its approvals are lost; the branch's commits are judged again).`,
    "INVALID_STATE",
  );
}
