import { formatZodError } from "../contracts/zod-error.js";
import { blobText, textLeftOut } from "../github/blob-text.js";
import type { GitHubClient } from "../github/client.js";
import { githubMessage, httpStatus } from "../github/client.js";
import { GitHubError, isLostRace } from "../github/errors.js";
import { StateConflictError, StateStoreError, TamperedStateError } from "./errors.js";
import { gitBlobId } from "../gates/hash.js";
import {
  compact,
  expandStored,
  keepText,
  keptTexts,
  textsFrom,
  type CompactBasis,
  type StoredSource,
  type TextsByBlob,
} from "./compact.js";
import { canonicalJson, checkStateFile, openStateFile, sealState, serialiseStateFile, unsealed } from "./seal.js";
import { notTheAppsCommit, StateCommit } from "./tip.js";
import {
  MAX_PROCESSED_DELIVERIES,
  STATE_BRANCH,
  TrackId,
  TrackState,
  trackPath,
  type TrackStateFile,
} from "./schema.js";

/**
 * The state store (docs/ARCHITECTURE.md, State): one signed file per track on `consort/state`. A change is one
 * Contents API PUT whose compare-and-swap is the file's blob sha (GitHub answers 409 when the file
 * changed since it was read), so a step costs one read and one write instead of the Git Data API's
 * ref, commit and file reads and tree, commit and ref writes. Only the first write to a repository
 * without the branch goes through the Git Data API (an orphan commit and a ref creation, refused
 * if the branch appeared meanwhile). A lost compare-and-swap re-reads and re-applies the change, a
 * bounded number of times. Nothing is cached: any replica can serve any event.
 */

export interface StateStoreOptions {
  octokit: GitHubClient;
  owner: string;
  repo: string;
  /** The HMAC key (CONSORT_STATE_KEY) that seals every write. Never logged. */
  key: string;
  /** Keys retired by a rotation (CONSORT_STATE_KEYS_PREVIOUS): files they sealed still open; the next write re-seals them with `key`. Never logged. */
  previousKeys?: readonly string[];
  /** Attempts at the compare-and-swap before giving up; default 5. */
  maxAttempts?: number;
  clock?: () => Date;
  /** Base pause before re-reading after a second or later lost compare-and-swap, grown per attempt with jitter (the first is re-read at once); default 50 ms. */
  retryDelayMs?: number;
  /**
   * The newest `sequence` this app has read or written per track (`owner/repo/track`), shared by
   * every store of the process: a file older than that was rolled back and is refused.
   */
  sequences?: Map<string, number>;
  /**
   * The app's bot login (`<slug>[bot]`), asked for once when first needed. Given, the tip of
   * consort/state must be a commit the app wrote (see src/state/tip.ts), else every read of the
   * branch is refused as tampered until a maintainer re-seals; the CLI's and the board's readers,
   * which have no app identity, leave it out and check the files' seals only.
   */
  writer?: () => Promise<string>;
  /**
   * Texts of state files by blob sha that this process read or wrote, shared by its stores: a blob
   * sha names its content, so when the tip commit names the track's blob, the file is not read again.
   */
  blobTexts?: Map<string, string>;
}

/** What a re-seal did: nothing to do, or which version it restored and how that differs from the refused file. */
type ResealOutcome =
  | { outcome: "unchanged"; state: TrackState; attempts: number }
  | {
      outcome: "written";
      state: TrackState;
      commit: string;
      attempts: number;
      /** The state-branch commit whose version was restored. */
      restoredFrom: string;
      /** The refused file against the restored one: `-` lines only in the refused file, `+` lines restored. */
      difference: string[];
    };

/** How many versions of a file re-seal looks back through for one that verifies. */
const RESEAL_HISTORY = 100;

type UpdateOutcome =
  | { outcome: "written"; state: TrackState; commit: string; attempts: number }
  /** The delivery id was already applied: nothing was written. */
  | { outcome: "duplicate-delivery"; state: TrackState; attempts: number }
  /** The change function asked for no change (returned undefined or the same state). */
  | { outcome: "unchanged"; state: TrackState | undefined; attempts: number };

/** Given the current state (a private copy; undefined for a new track), the next state, or undefined for no change. */
type StateChange = (current: TrackState | undefined) => TrackState | undefined;

export interface StateStore {
  readonly branch: string;
  /**
   * The track's verified state, or undefined when it has none. Throws TamperedStateError. With
   * `history`, every finished unit's record is read and merged in (the board, the evidence JSON,
   * status); without it the state holds what the next decision needs (src/state/compact.ts).
   */
  read(trackId: string, options?: { history?: boolean }): Promise<TrackState | undefined>;
  /** Apply `change` for one webhook delivery, at most once per delivery id. Throws TamperedStateError, StateConflictError. */
  update(trackId: string, deliveryId: string, change: StateChange): Promise<UpdateOutcome>;
  /**
   * Restore the newest version of a track's file that still verifies (from the history of the
   * state branch), as a new version, recording who did it; never re-signs content the app did not
   * seal. The caller checks admin permission first.
   */
  reseal(trackId: string, actor: string, reason?: string): Promise<ResealOutcome>;
  /** The ids of every track with a state file. */
  list(): Promise<string[]>;
  /** The raw text of a track's file and what fails in it (empty when sound), for a maintainer deciding whether to re-seal. */
  inspect(trackId: string): Promise<{ path: string; text: string; problems: string[] } | undefined>;
}

interface Head {
  commit: string;
  tree: string;
}

/** A track's file as read: its text and the blob sha a write must name to replace it. */
interface StoredFile {
  text: string;
  blob: string;
}

/** The branch as read for one track: its file, whether the branch exists, and (with a writer) the tip commit and what is wrong with it. */
interface CurrentRead {
  file?: StoredFile;
  branch: boolean;
  tip?: StateCommit;
  /** Why the tip is not the app's own commit; undefined when it is, or when no writer was given. */
  foreignTip?: string;
}

/** How many blob texts a process keeps (a state file is a few KB). */
const BLOB_TEXTS_KEPT = 500;
/** How far below a foreign tip re-seal looks for the app's own last commit. */
const FOREIGN_COMMITS_WALKED = 50;

const REF = `heads/${STATE_BRANCH}`;

/** How many texts a compact state refers to are read from git at once. */
const TEXT_READS_AT_ONCE = 8;

/**
 * What `read` last found for each track, per client (one client serves one webhook delivery), so
 * the `update` that follows in the same delivery need not read the file again. It is only a
 * starting guess: a write names the blob it replaces, so GitHub refuses it when the file changed
 * since (then the file is read again), and an update that would write nothing re-reads first.
 */
const lastReads = new WeakMap<object, Map<string, CurrentRead>>();

export function createStateStore(options: StateStoreOptions): StateStore {
  const { octokit, owner, repo, key } = options;
  const previousKeys = options.previousKeys ?? [];
  const maxAttempts = options.maxAttempts ?? 5;
  const clock = options.clock ?? (() => new Date());
  const retryDelayMs = options.retryDelayMs ?? 50;
  // The first lost race is re-read at once: the app's queue runs a repository's deliveries one at
  // a time, so the other writer was outside it (`consort reconcile`, a re-seal, CONSORT_QUEUE=off)
  // and has written by now. Losing again means that writer is still busy: only then pause, with
  // jitter, so two writers do not re-read in lockstep and lose to each other every time.
  const pause = (attempt: number) =>
    attempt === 1 || attempt >= maxAttempts || retryDelayMs <= 0
      ? Promise.resolve()
      : new Promise<void>((done) => setTimeout(done, retryDelayMs * (attempt - 1) * (0.5 + Math.random())));
  const repository = `${owner}/${repo}`;
  if (!key) throw new StateStoreError("No state key given", "set CONSORT_STATE_KEY to 32+ random characters");
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1)
    throw new StateStoreError(`maxAttempts must be a positive integer, got ${maxAttempts}`);

  async function readHead(): Promise<Head | undefined> {
    let commit: string;
    try {
      commit = (await octokit.rest.git.getRef({ owner, repo, ref: REF })).data.object.sha;
    } catch (error) {
      if (httpStatus(error) === 404) return undefined;
      if (httpStatus(error) === 409)
        throw new StateStoreError(
          `${repository} is empty, so it cannot hold ${STATE_BRANCH}`,
          "push a first commit to the default branch",
        );
      throw new StateStoreError(`Could not read ${STATE_BRANCH} of ${repository}: ${githubMessage(error)}`);
    }
    const { data } = await octokit.rest.git.getCommit({ owner, repo, commit_sha: commit });
    return { commit, tree: data.tree.sha };
  }

  /** The track's file at `ref` with its blob sha (the compare-and-swap of the next write); `branch` false when the branch is missing. */
  async function readFile(
    ref: string,
    trackId: string,
    path = trackPath(trackId),
  ): Promise<{ file?: StoredFile; branch: boolean }> {
    let data: unknown;
    try {
      data = (await octokit.rest.repos.getContent({ owner, repo, path, ref })).data;
    } catch (error) {
      // GitHub answers 404 for a missing file and for a missing ref, telling them apart by the message.
      if (httpStatus(error) === 404) return { branch: !/no commit found for the ref/i.test(githubMessage(error)) };
      if (httpStatus(error) === 409)
        throw new StateStoreError(
          `${repository} is empty, so it cannot hold ${STATE_BRANCH}`,
          "push a first commit to the default branch",
        );
      throw new StateStoreError(`Could not read ${path} on ${STATE_BRANCH} of ${repository}: ${githubMessage(error)}`);
    }
    const file = data as { type?: string; encoding?: string; content?: string; sha?: string };
    const commit = /^[0-9a-f]{40,64}$/.test(ref) ? ref : undefined;
    if (Array.isArray(data) || file.type !== "file") {
      throw new TamperedStateError(trackId, path, ["the path is not a regular file"], commit);
    }
    // GitHub inlines a file of up to 1 MB; a larger one (a long track's) comes with encoding
    // "none" and no content, and its blob is read through the Git Data API (up to 100 MB).
    if (textLeftOut(file)) {
      return { file: { text: await readBlob(file.sha, trackId, commit), blob: file.sha }, branch: true };
    }
    if (file.encoding !== "base64" || typeof file.content !== "string") {
      throw new TamperedStateError(
        trackId,
        path,
        [`the file is not readable through the contents API (encoding ${file.encoding ?? "none"})`],
        commit,
      );
    }
    return {
      file: { text: Buffer.from(file.content, "base64").toString("utf8"), blob: String(file.sha) },
      branch: true,
    };
  }

  /** A state file's text by its blob sha, for a file too large for the Contents API to inline. */
  async function readBlob(blob: string, trackId: string, commit: string | undefined): Promise<string> {
    let text: string | undefined;
    try {
      text = await blobText(octokit, owner, repo, blob);
    } catch (error) {
      throw new StateStoreError(
        `Could not read the blob ${blob.slice(0, 12)} of ${trackPath(trackId)} on ${STATE_BRANCH} of ${repository}: ${githubMessage(error)}`,
      );
    }
    if (text === undefined)
      throw new TamperedStateError(
        trackId,
        trackPath(trackId),
        [`the file's blob ${blob.slice(0, 12)} is not readable through the Git Data API`],
        commit,
      );
    return text;
  }

  async function readText(ref: string, trackId: string): Promise<string | undefined> {
    return (await readFile(ref, trackId)).file?.text;
  }

  const blobTexts = options.blobTexts;
  function keepBlob(file: StoredFile): void {
    if (!blobTexts) return;
    blobTexts.delete(file.blob);
    blobTexts.set(file.blob, file.text);
    if (blobTexts.size > BLOB_TEXTS_KEPT) blobTexts.delete(blobTexts.keys().next().value!);
  }

  /** A commit of the state branch (its tip by default) as GitHub's commit API gives it; undefined when the branch is missing. */
  async function readCommit(ref: string): Promise<StateCommit | undefined> {
    let data: unknown;
    try {
      data = (await octokit.rest.repos.getCommit({ owner, repo, ref })).data;
    } catch (error) {
      // GitHub answers 422 "No commit found for SHA: consort/state" when the branch does not exist
      // (404 where it cannot find the ref at all): the first write then starts the branch, and
      // GitHub refuses that ref's creation if the branch was there after all.
      if (httpStatus(error) === 404 || (httpStatus(error) === 422 && /no commit found/i.test(githubMessage(error))))
        return undefined;
      if (httpStatus(error) === 409)
        throw new StateStoreError(
          `${repository} is empty, so it cannot hold ${STATE_BRANCH}`,
          "push a first commit to the default branch",
        );
      throw new StateStoreError(`Could not read ${ref} of ${repository}: ${githubMessage(error)}`);
    }
    const parsed = StateCommit.safeParse(data);
    if (!parsed.success)
      throw new StateStoreError(
        formatZodError(parsed.error, `GitHub's answer for commit ${ref} of ${repository} is not a commit`, {
          inline: true,
        }),
      );
    return parsed.data;
  }

  /**
   * The track's file on the branch. With a writer, the tip commit is read first and judged (one
   * read, where the file's read was), and the file is read at that commit, unless the tip names
   * the file's blob and this process already holds its text: then the tip's read is all it costs.
   */
  async function readCurrent(trackId: string): Promise<CurrentRead> {
    if (!options.writer) {
      const read = await readFile(STATE_BRANCH, trackId);
      if (read.file) keepBlob(read.file);
      return read;
    }
    const tip = await readCommit(STATE_BRANCH);
    if (!tip) return { branch: false };
    const foreignTip = notTheAppsCommit(tip, await options.writer());
    const changed = tip.files?.find((entry) => entry.filename === trackPath(trackId));
    const kept = changed?.sha ? blobTexts?.get(changed.sha) : undefined;
    if (changed?.status === "removed") return { branch: true, tip, foreignTip };
    if (changed?.sha && kept !== undefined)
      return { file: { text: kept, blob: changed.sha }, branch: true, tip, foreignTip };
    const { file } = await readFile(tip.sha, trackId);
    if (file) keepBlob(file);
    return { ...(file ? { file } : {}), branch: true, tip, foreignTip };
  }

  /**
   * The texts a compact state refers to, by blob id: from this process's texts, else read from the
   * repository's git objects (a few at a time) and checked against their ids. A text that cannot
   * be read fails the read closed, naming the blob.
   */
  async function textsFor(trackId: string, blobs: readonly string[]): Promise<TextsByBlob> {
    const out: TextsByBlob = new Map();
    const missing: string[] = [];
    for (const blob of blobs) {
      const text = keptTexts.get(blob);
      if (text === undefined) missing.push(blob);
      else out.set(blob, text);
    }
    for (let i = 0; i < missing.length; i += TEXT_READS_AT_ONCE) {
      await Promise.all(
        missing.slice(i, i + TEXT_READS_AT_ONCE).map(async (blob) => {
          let text: string | undefined;
          try {
            text = await blobText(octokit, owner, repo, blob);
          } catch (error) {
            throw new StateStoreError(
              `Could not read blob ${blob.slice(0, 12)}, a text ${trackPath(trackId)} refers to, from ${repository}: ${githubMessage(error)}`,
            );
          }
          if (text === undefined || gitBlobId(text) !== blob)
            throw new TamperedStateError(
              trackId,
              trackPath(trackId),
              [`the text it refers to by blob ${blob.slice(0, 12)} is not readable as that blob`],
              undefined,
            );
          keepText(blob, text);
          out.set(blob, text);
        }),
      );
    }
    return out;
  }

  /** A stored state as the app works with it, its texts read through the repository's git objects (see expandStored). */
  function expandState(
    trackId: string,
    stored: TrackState,
    ref: string,
    history: boolean,
  ): Promise<{ state: TrackState; basis: CompactBasis }> {
    return expandStored(trackId, stored, history, {
      texts: (blobs) => textsFor(trackId, blobs),
      records: (paths) => inBatches(paths, async (path) => (await readFile(ref, trackId, path)).file?.text),
      commit: /^[0-9a-f]{40,64}$/.test(ref) ? ref : undefined,
    });
  }

  /**
   * Write the state with the finished units' records in one commit through the Git Data API: a
   * tree on the tip the state was read at, a commit on it, and a fast-forward of the branch, which
   * GitHub refuses (422) when anything was written since. Undefined: lost the race.
   */
  async function writeCommit(
    trackId: string,
    read: CurrentRead,
    files: Array<{ path: string; text: string }>,
    message: string,
  ): Promise<string | undefined> {
    const path = trackPath(trackId);
    if (!read.branch) {
      const state = files.find((file) => file.path === path)!;
      return startBranch(
        path,
        state.text,
        message,
        files.filter((file) => file !== state),
      );
    }
    let base = read.tip?.sha;
    let tree = read.tip?.commit.tree?.sha;
    try {
      if (!base) {
        base = (await octokit.rest.git.getRef({ owner, repo, ref: REF })).data.object.sha;
        // Read without the tip: the file there must still be the one read, or this write would undo another.
        const { file } = await readFile(base, trackId);
        if (file?.blob !== read.file?.blob) return undefined;
      }
      tree ??= (await octokit.rest.git.getCommit({ owner, repo, commit_sha: base })).data.tree.sha;
      const entries = files.map((file) => ({
        path: file.path,
        mode: "100644" as const,
        type: "blob" as const,
        content: file.text,
      }));
      const made = await octokit.rest.git.createTree({ owner, repo, base_tree: tree, tree: entries });
      // No author or committer: GitHub then signs the commit as made by the app.
      const commit = await octokit.rest.git.createCommit({
        owner,
        repo,
        message,
        tree: made.data.sha,
        parents: [base],
      });
      await octokit.rest.git.updateRef({ owner, repo, ref: REF, sha: commit.data.sha, force: false });
      const state = files.find((file) => file.path === path);
      if (state) keepBlob({ text: state.text, blob: gitBlobId(state.text) });
      return commit.data.sha;
    } catch (error) {
      if (isLostRace(error)) return undefined;
      throw refusedWrite(path, error);
    }
  }

  /**
   * Write `text` at `path` with a compare-and-swap on what was read: one Contents API PUT naming
   * the blob sha it replaces (none for a new file). Undefined: lost the race (the file changed or
   * appeared since it was read, or the branch moved under a concurrent write), so re-read and retry.
   */
  async function writeFile(
    trackId: string,
    read: CurrentRead,
    path: string,
    text: string,
    message: string,
  ): Promise<string | undefined> {
    if (!read.branch) return startBranch(path, text, message);
    let written: { commit?: string; parent?: string; blob?: string };
    try {
      // No author or committer: GitHub then signs the commit as made by the app.
      const { data } = await octokit.rest.repos.createOrUpdateFileContents({
        owner,
        repo,
        path,
        message,
        content: Buffer.from(text, "utf8").toString("base64"),
        branch: STATE_BRANCH,
        ...(read.file ? { sha: read.file.blob } : {}),
      });
      written = { commit: data.commit.sha, parent: data.commit.parents?.[0]?.sha, blob: data.content?.sha };
    } catch (error) {
      // The branch is not there (never made, or deleted since the read): start it with this file.
      if (httpStatus(error) === 404 && !read.file) return startBranch(path, text, message);
      if (isLostRace(error)) return undefined;
      throw refusedWrite(path, error);
    }
    if (written.blob) keepBlob({ text, blob: written.blob });
    await vouchForParent(trackId, read, written.parent);
    return written.commit;
  }

  /**
   * The commit a write landed on is the tip that was judged, unless someone wrote in between (the
   * blob's compare-and-swap only guards this track's file). Then that commit is judged too, at one
   * read: a foreign one ends this delivery as tampered, naming it. The write stands, so later reads
   * see the app's commit on top: a foreign commit landing in that instant is reported once, not
   * refused for good (and a commit of another replica's is not judged further down).
   */
  async function vouchForParent(trackId: string, read: CurrentRead, parent: string | undefined): Promise<void> {
    if (!options.writer || !read.tip || parent === read.tip.sha) return;
    const landedOn = parent === undefined ? undefined : await readCommit(parent);
    const problem = landedOn
      ? notTheAppsCommit(landedOn, await options.writer())
      : `the write's commit names no parent on ${STATE_BRANCH}, so the commit under it cannot be judged`;
    if (problem) throw new TamperedStateError(trackId, trackPath(trackId), [problem], parent);
  }

  /** The first write of a repository: an orphan commit holding the file(s), and the branch created on it. */
  async function startBranch(
    path: string,
    text: string,
    message: string,
    more: Array<{ path: string; text: string }> = [],
  ): Promise<string | undefined> {
    const entries = [...more, { path, text }].map((file) => ({
      path: file.path,
      mode: "100644" as const,
      type: "blob" as const,
      content: file.text,
    }));
    const tree = await octokit.rest.git.createTree({ owner, repo, tree: entries });
    const commit = await octokit.rest.git.createCommit({ owner, repo, message, tree: tree.data.sha, parents: [] });
    try {
      await octokit.rest.git.createRef({ owner, repo, ref: `refs/${REF}`, sha: commit.data.sha });
    } catch (error) {
      if (isLostRace(error)) return undefined;
      throw refusedWrite(STATE_BRANCH, error, "create");
    }
    return commit.data.sha;
  }

  /**
   * A write GitHub refused for a reason re-reading cannot change (protection, push protection, a
   * lost repository, a missing permission, limits or failures that outlasted their waits): the
   * delivery ends here with GitHub's own reason, and what fixes it.
   */
  function refusedWrite(path: string, error: unknown, verb = "write"): StateStoreError {
    const refusal = GitHubError.from(error);
    const fix: Partial<Record<GitHubError["kind"], string>> = {
      refused: `let the Consort app bypass the rules on ${STATE_BRANCH} (\`consort protect\` installs the ruleset that does), then redeliver the webhook`,
      "not-found": `check that the app's installation still covers ${repository}, then run \`consort reconcile\``,
      forbidden: "accept the permissions the app asks for (Contents: write) in the installation's settings",
    };
    // The cause keeps GitHub's answer, so the delivery queue does not retry what cannot change.
    return Object.assign(
      new StateStoreError(
        `Could not ${verb} ${path} on ${STATE_BRANCH} of ${repository}: ${refusal.describe()}`,
        fix[refusal.kind],
      ),
      { cause: refusal },
    );
  }

  /**
   * Open a file read at the branch. A tampered one is reported with the commit it was read at (one
   * more read, on this path only), so a maintainer can look at exactly that version.
   */
  async function openRead(trackId: string, read: CurrentRead, findCommit = true): Promise<TrackStateFile | undefined> {
    const path = trackPath(trackId);
    let problems: string[] = [];
    let opened: TrackStateFile | undefined;
    try {
      // A file under a foreign tip is not the newest this app has seen, however well sealed.
      opened = read.file ? openCurrent(read.file.text, trackId, read.foreignTip === undefined) : undefined;
    } catch (error) {
      if (!(error instanceof TamperedStateError)) throw error;
      problems = error.problems;
    }
    // Under a commit the app did not write, even a missing file is refused: deleting it would end the track.
    if (read.foreignTip) problems = [read.foreignTip, ...problems];
    if (problems.length === 0) return opened;
    const commit =
      read.tip?.sha ??
      (findCommit
        ? await octokit.rest.git
            .getRef({ owner, repo, ref: REF })
            .then(({ data }) => data.object.sha)
            .catch(() => undefined)
        : undefined);
    throw new TamperedStateError(trackId, path, problems, commit);
  }

  const sequences = options.sequences;
  const sequenceKey = (trackId: string) => `${repository.toLowerCase()}/${trackId}`;

  /** Open a file and refuse it when it is older than a version this app already saw. */
  function openCurrent(text: string, trackId: string, note = true): TrackStateFile {
    const path = trackPath(trackId);
    const file = openStateFile(text, key, { trackId, path, repository }, previousKeys);
    const newest = sequences?.get(sequenceKey(trackId));
    if (newest !== undefined && (file.sequence ?? 0) < newest)
      throw new TamperedStateError(
        trackId,
        path,
        [
          `version ${file.sequence ?? "none"} is older than version ${newest}, which this app already wrote or read: ${STATE_BRANCH} was rolled back`,
        ],
        undefined,
      );
    if (note) noteSequence(trackId, file.sequence);
    return file;
  }

  function noteSequence(trackId: string, sequence: number | undefined): void {
    if (!sequences || sequence === undefined) return;
    sequences.set(sequenceKey(trackId), Math.max(sequences.get(sequenceKey(trackId)) ?? 0, sequence));
  }

  /**
   * The newest version of a track's file at or below `from` (not `refused`) that verifies, is not
   * older than one already seen and, with a writer, was written by the app.
   */
  async function lastValidVersion(
    trackId: string,
    refused: string | undefined,
    from: string,
  ): Promise<{ commit: string; text: string; file: TrackStateFile } | undefined> {
    const path = trackPath(trackId);
    const newest = sequences?.get(sequenceKey(trackId)) ?? 0;
    const { data: history } = await octokit.rest.repos.listCommits({
      owner,
      repo,
      sha: from,
      path,
      per_page: RESEAL_HISTORY,
    });
    const login = options.writer ? await options.writer() : undefined;
    for (const entry of history) {
      const { sha } = entry;
      if (login !== undefined) {
        const listed = StateCommit.safeParse(entry);
        if (!listed.success || notTheAppsCommit(listed.data, login)) continue;
      }
      const text = await readText(sha, trackId);
      if (text === undefined || text === refused) continue;
      const { problems, file } = checkStateFile(text, key, { trackId, repository }, previousKeys);
      if (problems.length === 0 && file && (file.sequence ?? 0) >= newest) return { commit: sha, text, file };
    }
    return undefined;
  }

  /** The newest commit the app wrote on the first-parent line below a foreign tip. */
  async function lastOwnCommit(tip: StateCommit): Promise<StateCommit | undefined> {
    const login = await options.writer!();
    let at: StateCommit | undefined = tip;
    for (let walked = 0; at && walked < FOREIGN_COMMITS_WALKED; walked++) {
      if (!notTheAppsCommit(at, login)) return at;
      const parent: string | undefined = at.parents[0]?.sha;
      at = parent ? await readCommit(parent) : undefined;
    }
    return undefined;
  }

  /**
   * Move the branch back to the app's own commit `own`, dropping the foreign commits above it (the
   * app is the ruleset's bypass actor, so it may): every file they changed is as the app last wrote
   * it. One forced ref update, where a restoring commit would cost a tree, a commit and a ref.
   */
  async function resetBranch(own: StateCommit): Promise<void> {
    try {
      await octokit.rest.git.updateRef({ owner, repo, ref: REF, sha: own.sha, force: true });
    } catch (error) {
      throw new StateStoreError(
        `Could not move ${STATE_BRANCH} of ${repository} back to ${own.sha.slice(0, 7)}: ${githubMessage(error)}`,
      );
    }
  }

  /**
   * Seal `next` as the version after every sequence number known for the file (the one read, the one
   * this process last wrote, a damaged file's), chained to `previousSeal`: what orders the versions, so
   * an older file, however well sealed, is refused (an update and a re-seal both seal this way).
   */
  function sealNextVersion(
    next: TrackState,
    known: (number | undefined)[],
    previousSeal: string | null,
    at: string,
  ): TrackStateFile {
    next.sequence = Math.max(0, ...known.map((sequence) => sequence ?? 0)) + 1;
    next.previousSeal = previousSeal;
    next.updatedAt = at;
    return sealState(next, key);
  }

  function checkNext(trackId: string, next: TrackState): TrackState {
    const parsed = TrackState.safeParse(next);
    if (!parsed.success) {
      throw new StateStoreError(
        formatZodError(parsed.error, `Refusing to write an invalid state for track ${trackId}`, { inline: true }),
        "this is a bug in the caller; nothing was written",
      );
    }
    if (parsed.data.trackId !== trackId)
      throw new StateStoreError(
        `Refusing to write state for track "${parsed.data.trackId}" into tracks/${trackId}.json`,
      );
    if (parsed.data.repository.toLowerCase() !== repository.toLowerCase()) {
      throw new StateStoreError(`Refusing to write state of ${parsed.data.repository} into ${repository}`);
    }
    return parsed.data;
  }

  function sameContent(a: TrackState, b: TrackState): boolean {
    const strip = (s: TrackState) => ({ ...s, updatedAt: "", processedDeliveries: [] });
    return canonicalJson(strip(a)) === canonicalJson(strip(b));
  }

  /** Keep what this client found of a track's file, for the update that may follow (see lastReads). */
  function remember(trackId: string, read: CurrentRead): void {
    const reads = lastReads.get(octokit) ?? new Map<string, CurrentRead>();
    lastReads.set(octokit, reads);
    reads.set(trackId, read);
  }

  return {
    branch: STATE_BRANCH,

    async read(trackId, readOptions = {}) {
      TrackId.parse(trackId);
      const read = await readCurrent(trackId);
      lastReads.get(octokit)?.delete(trackId);
      const file = await openRead(trackId, read, false);
      if (file === undefined) return undefined;
      remember(trackId, read);
      const stored = unsealed(file);
      const history = readOptions.history === true || needsHistory(stored);
      return (await expandState(trackId, stored, read.tip?.sha ?? STATE_BRANCH, history)).state;
    },

    async update(trackId, deliveryId, change) {
      const path = trackPath(trackId);
      if (!deliveryId)
        throw new StateStoreError("update needs the webhook delivery id (X-GitHub-Delivery) to stay idempotent");
      const reads = lastReads.get(octokit);
      let remembered = reads?.get(trackId);
      reads?.delete(trackId);
      for (let attempt = 1; attempt <= maxAttempts; attempt++) {
        const guessed = remembered !== undefined;
        const read = remembered ?? (await readCurrent(trackId));
        remembered = undefined;
        const currentFile = await openRead(trackId, read);
        const stored = currentFile && unsealed(currentFile);
        const expanded =
          stored && (await expandState(trackId, stored, read.tip?.sha ?? STATE_BRANCH, needsHistory(stored)));
        const current = expanded?.state;
        const duplicate = current?.processedDeliveries.includes(deliveryId) === true;
        const proposed = duplicate ? undefined : change(current === undefined ? undefined : structuredClone(current));
        const checked = proposed === undefined ? undefined : checkNext(trackId, proposed);
        // The version read is named by its blob: the records it holds inline are found there from now on.
        const basis = { ...(expanded?.basis ?? { stored: undefined, loaded: undefined }), blob: read.file?.blob };
        const compacted = checked && compact(checked, basis, headOf(checked) ?? STATE_BRANCH);
        for (const [blob, text] of compacted?.texts ?? []) keepText(blob, text);
        const next = compacted?.state;
        // Only a write proves a remembered read current (GitHub checks its blob): anything else reads again.
        if (guessed && (next === undefined || (stored && sameContent(stored, next)))) {
          attempt--;
          continue;
        }
        if (duplicate && current) return { outcome: "duplicate-delivery", state: current, attempts: attempt };
        if (next === undefined || (stored && sameContent(stored, next))) {
          // A handler that asked for no change yet may ask again in this delivery, once it has read more.
          if (read.file) remember(trackId, read);
          return { outcome: "unchanged", state: current, attempts: attempt };
        }
        const seen = (current?.processedDeliveries ?? []).filter((id) => id !== deliveryId);
        next.processedDeliveries = [...seen, deliveryId].slice(-MAX_PROCESSED_DELIVERIES);
        const file = sealNextVersion(
          next,
          [currentFile?.sequence],
          currentFile?.signature ?? null,
          clock().toISOString(),
        );
        const message = `consort: ${current ? "update" : "start"} ${path} (delivery ${deliveryId})`;
        const records = compacted?.records ?? [];
        // Records too many to hold inline (a file written in full before records): one commit with the state.
        const commit =
          records.length > 0
            ? await writeCommit(trackId, read, [...records, { path, text: serialiseStateFile(file) }], message)
            : await writeFile(trackId, read, path, serialiseStateFile(file), message);
        if (commit) {
          noteSequence(trackId, file.sequence);
          const written = unsealed(file);
          return { outcome: "written", state: proposedAsWritten(written, checked!), commit, attempts: attempt };
        }
        await pause(attempt);
      }
      throw new StateConflictError(trackId, maxAttempts);
    },

    async reseal(trackId, actor, reason = "re-sealed by a maintainer") {
      const path = trackPath(trackId);
      /** The foreign tip this re-seal moved the branch back from, once it has. */
      let dropped: { tip: StateCommit; text: string | undefined } | undefined;
      for (let attempt = 1; attempt <= maxAttempts; attempt++) {
        let read = await readCurrent(trackId);
        if (!read.branch)
          throw new StateStoreError(`${repository} has no ${STATE_BRANCH} branch, so there is nothing to re-seal`);
        if (read.foreignTip && read.tip) {
          // Under a tip the app did not write, the branch goes back to the app's own last commit first.
          const own = await lastOwnCommit(read.tip);
          if (!own)
            throw new StateStoreError(
              `Cannot re-seal ${path}: none of the ${FOREIGN_COMMITS_WALKED} commits below the tip of ${STATE_BRANCH} was written by this app (${read.foreignTip})`,
              `delete the ${STATE_BRANCH} branch to start every track's state over`,
            );
          dropped = { tip: read.tip, text: read.file?.text };
          await resetBranch(own);
          const { file } = await readFile(own.sha, trackId);
          read = { ...(file ? { file } : {}), branch: true, tip: own };
        }
        const text = read.file?.text;
        if (text === undefined)
          throw new StateStoreError(
            `There is no ${path} on ${STATE_BRANCH} of ${repository}`,
            "check the track id with `consort state list`",
          );
        const { problems, file, raw } = checkStateFile(text, key, { trackId, repository }, previousKeys);
        const newest = sequences?.get(sequenceKey(trackId));
        const rolledBack = file !== undefined && newest !== undefined && (file.sequence ?? 0) < newest;
        const sound = problems.length === 0 && file !== undefined && !rolledBack;
        if (sound && !dropped) return { outcome: "unchanged", state: unsealed(file), attempts: attempt };
        // Only a version the app itself sealed can be vouched for: the newest one that still verifies.
        const restored = sound
          ? { commit: read.tip?.sha ?? STATE_BRANCH, text, file }
          : await lastValidVersion(trackId, text, STATE_BRANCH);
        if (!restored)
          throw new StateStoreError(
            `Cannot re-seal ${path}: no earlier version on ${STATE_BRANCH} verifies with this app's key (${problems.join("; ") || "rolled back"})`,
            `delete ${path} on ${STATE_BRANCH} to restart the track, or set CONSORT_STATE_KEY back to the key that sealed it`,
          );
        const next = checkNext(trackId, unsealed(restored.file));
        const now = clock().toISOString();
        const rawSequence = typeof raw?.sequence === "number" ? raw.sequence : undefined;
        next.reseals = [...next.reseals, { actor, at: now, reason: reason.slice(0, 500) }];
        const sealed = sealNextVersion(
          next,
          [restored.file.sequence, rawSequence, newest],
          restored.file.signature,
          now,
        );
        const commit = await writeFile(
          trackId,
          read,
          path,
          serialiseStateFile(sealed),
          `consort: re-seal ${path} from ${restored.commit.slice(0, 7)}${dropped ? `, dropping the commits down to ${dropped.tip.sha.slice(0, 7)} that this app did not write` : ""} (by ${actor})`,
        );
        if (commit) {
          noteSequence(trackId, sealed.sequence);
          return {
            outcome: "written",
            state: unsealed(sealed),
            commit,
            attempts: attempt,
            restoredFrom: restored.commit,
            difference: lineDifference(dropped ? (dropped.text ?? "") : text, restored.text),
          };
        }
        await pause(attempt);
      }
      throw new StateConflictError(trackId, maxAttempts);
    },

    async inspect(trackId) {
      const path = trackPath(trackId);
      const read = await readCurrent(trackId);
      if (read.file === undefined) return undefined;
      const { problems } = checkStateFile(read.file.text, key, { trackId, repository }, previousKeys);
      return { path, text: read.file.text, problems: read.foreignTip ? [read.foreignTip, ...problems] : problems };
    },

    async list() {
      const head = await readHead();
      if (!head) return [];
      const root = await octokit.rest.git.getTree({ owner, repo, tree_sha: head.tree });
      const tracks = root.data.tree.find((entry) => entry.path === "tracks" && entry.type === "tree");
      if (!tracks?.sha) return [];
      const listing = await octokit.rest.git.getTree({ owner, repo, tree_sha: tracks.sha });
      if (listing.data.truncated)
        throw new StateStoreError(`The tracks folder on ${STATE_BRANCH} is too large to list in one request`);
      return listing.data.tree
        .filter((entry) => entry.type === "blob" && entry.path?.endsWith(".json"))
        .map((entry) => entry.path!.slice(0, -".json".length))
        .filter((id) => TrackId.safeParse(id).success)
        .sort();
    },
  };
}

/**
 * Where a reader outside the store (no key needed to read) finds what a compact state refers to
 * in a repository: texts by blob id through the Git Data API, records at `ref` through the Contents API.
 */
export function githubStoredSource(
  octokit: GitHubClient,
  owner: string,
  repo: string,
  ref = STATE_BRANCH,
): StoredSource {
  return {
    texts: (blobs) => textsFrom(blobs, (blob) => blobText(octokit, owner, repo, blob).catch(() => undefined)),
    records: (paths) =>
      inBatches(paths, async (path) => {
        const { data } = await octokit.rest.repos
          .getContent({ owner, repo, path, ref })
          .catch(() => ({ data: undefined }));
        const file = data as { encoding?: string; content?: string } | undefined;
        return file?.encoding === "base64" && typeof file.content === "string"
          ? Buffer.from(file.content, "base64").toString("utf8")
          : undefined;
      }),
    commit: undefined,
  };
}

/** Each of `paths` read by `read`, a few at a time (one request each). */
async function inBatches(
  paths: readonly string[],
  read: (path: string) => Promise<string | undefined>,
): Promise<Map<string, string | undefined>> {
  const out = new Map<string, string | undefined>();
  for (let i = 0; i < paths.length; i += TEXT_READS_AT_ONCE)
    await Promise.all(paths.slice(i, i + TEXT_READS_AT_ONCE).map(async (path) => out.set(path, await read(path))));
  return out;
}

/**
 * Approving the test list again resumes the build from every unit's evidence and frozen texts
 * (resumeBuild), so a state waiting at that gate is read with its finished units' records.
 */
function needsHistory(state: TrackState): boolean {
  return (state.snapshot as { stage?: unknown } | null)?.stage === "test-list-gate";
}

/** The track's last accepted commit, where the texts a write refers to are found. */
function headOf(state: TrackState): string | undefined {
  const head = (state.snapshot as { context?: { head?: unknown } } | null)?.context?.head;
  return typeof head === "string" ? head : undefined;
}

/** What the change asked for, as written: the version, seal and deliveries of the sealed file (the file itself is compact). */
function proposedAsWritten(written: TrackState, proposed: TrackState): TrackState {
  const { sequence, previousSeal, updatedAt, processedDeliveries, keyId } = written;
  return {
    ...proposed,
    processedDeliveries,
    updatedAt,
    ...(sequence === undefined ? {} : { sequence }),
    ...(previousSeal === undefined ? {} : { previousSeal }),
    ...(keyId === undefined ? {} : { keyId }),
  };
}

/** The lines of `refused` not in `restored` (`- `) and those of `restored` not in `refused` (`+ `), in order. */
function lineDifference(refused: string, restored: string): string[] {
  const a = refused.split("\n");
  const b = restored.split("\n");
  const inA = new Set(a);
  const inB = new Set(b);
  return [
    ...a.filter((line) => !inB.has(line)).map((line) => `- ${line}`),
    ...b.filter((line) => !inA.has(line)).map((line) => `+ ${line}`),
  ];
}
