import { createHash } from "node:crypto";
import { gitBlobId } from "../../src/gates/hash.js";
import type { GitHubMock, RecordedRequest } from "../helpers/github.js";
import {
  expand,
  keptTexts,
  openStateFile,
  sealState,
  serialiseStateFile,
  storedFormOf,
  UnitRecord,
  unitRecordPath,
  unsealed,
  withRecords,
  type TrackState,
} from "../../src/state/index.js";

const OWNER = "acme";
const REPO = "shop";
export const FULL_NAME = `${OWNER}/${REPO}`;
export const DEFAULT_BRANCH = "main";
export const INSTALLATION_ID = 42;
export const REPOSITORY_ID = 4242;

/** The state key every handler test seals with (a test value, not a secret). */
export const TEST_STATE_KEY = "test-state-key-0123456789abcdef0123456789";

const sha = (text: string) => createHash("sha1").update(text).digest("hex");
type Reply = [number, unknown?, Record<string, string>?];
const base = `/repos/${OWNER}/${REPO}`;
const re = (pattern: string) => new RegExp(`^${base.replace(/\//g, "\\/")}${pattern}$`);

/**
 * GitHub's side of `consort/state` for handler tests: the Git Data and contents endpoints the
 * state store calls, answered from an in-memory branch, with a real compare-and-swap on the ref
 * (a PATCH whose parent is not the head answers 422 "Update is not a fast forward", as GitHub does).
 * Only GitHub is faked here; the store, seal and schema under test are the real ones.
 */
export class FakeStateBranch {
  head: string | undefined;
  private readonly commits = new Map<string, { tree: string; parents: string[] }>();
  private readonly trees = new Map<string, Map<string, string>>();
  private readonly blobs = new Map<string, string>();
  /** Writes of the same file by "someone else" just before our next write: simulates a racing replica. */
  racesBeforeUpdate = 0;
  /** Every write attempt (a ref update or a Contents API write), with its outcome. */
  readonly updates: Array<{ sha: string; accepted: boolean }> = [];
  /** Trees of the track's pushed commits (commit sha → GET git/trees answer): the same route answers both. */
  readonly pushedTrees = new Map<string, unknown>();

  constructor(private readonly github: GitHubMock) {
    const refPath = re("/git/ref(?:s)?/heads(?:%2F|/)consort(?:%2F|/)state");
    github.on(
      "GET",
      refPath,
      () => (this.head ? [200, refBody(this.head)] : [404, { message: "Not Found" }]),
      Infinity,
    );
    github.on("GET", re("/git/commits/([0-9a-f]{40})"), (r) => this.getCommit(r), Infinity);
    github.on("GET", re("/contents/tracks(?:%2F|/)([^/?]+)"), (r) => this.getContent(r), Infinity);
    github.on("GET", re("/git/trees/([0-9a-f]{40})"), (r) => this.getTree(r), Infinity);
    github.on("GET", re("/git/blobs/([0-9a-f]{40})"), (r) => this.getBlob(r), Infinity);
    github.on("GET", re("/commits"), (r) => this.listCommits(r), Infinity);
    github.on("POST", re("/git/trees"), (r) => this.createTree(r), Infinity);
    github.on("POST", re("/git/commits"), (r) => this.createCommit(r), Infinity);
    github.on("PATCH", refPath, (r) => this.updateRef(r), Infinity);
    github.on("POST", re("/git/refs"), (r) => this.createRef(r), Infinity);
    github.on("PUT", re("/contents/tracks(?:%2F|/)([^/?]+)"), (r) => this.putContent(r), Infinity);
    this.trees.set(EMPTY_TREE, new Map());
  }

  /** Seal and store a track's state, as an earlier event would have. */
  seed(state: TrackState): void {
    this.write(`tracks/${state.trackId}.json`, serialiseStateFile(sealState(state, TEST_STATE_KEY)));
  }

  /** Put raw text at a path (e.g. a hand-edited, tampered file). */
  write(path: string, text: string): void {
    const files = new Map(this.head ? this.trees.get(this.commits.get(this.head)!.tree)! : []);
    files.set(path, text);
    const tree = this.storeTree(files);
    const commit = sha(`${tree}${this.head ?? ""}${Math.random()}`);
    this.commits.set(commit, { tree, parents: this.head ? [this.head] : [] });
    this.head = commit;
  }

  /** Remove a file at the head, as a commit of someone's would. */
  remove(path: string): void {
    const files = new Map(this.head ? this.trees.get(this.commits.get(this.head)!.tree)! : []);
    files.delete(path);
    const tree = this.storeTree(files);
    const commit = sha(`${tree}${this.head ?? ""}${Math.random()}`);
    this.commits.set(commit, { tree, parents: this.head ? [this.head] : [] });
    this.head = commit;
  }

  /** The raw text of a file at the head. */
  text(path: string): string | undefined {
    if (!this.head) return undefined;
    return this.trees.get(this.commits.get(this.head)!.tree)!.get(path);
  }

  /**
   * A track's state at the head, verified with the test key (throws if it does not verify), as the
   * app works with it: its texts put back from those this process compacted, and with `history` its
   * finished units' records merged in (each checked against the hash the state names).
   */
  state(trackId: string, { history = false } = {}): TrackState | undefined {
    const text = this.text(`tracks/${trackId}.json`);
    if (text === undefined) return undefined;
    const stored = unsealed(openStateFile(text, TEST_STATE_KEY, { trackId, path: `tracks/${trackId}.json` }));
    const { state } = expand(stored, keptTexts);
    const form = storedFormOf(stored);
    if (!history || !form) return state;
    const records = Object.values(form.records).map(({ n, sha256 }) => {
      const record = this.text(unitRecordPath(trackId, n))!;
      if (createHash("sha256").update(record).digest("hex") !== sha256) throw new Error(`record ${n} does not match`);
      return UnitRecord.parse(JSON.parse(record));
    });
    return withRecords(state, records, keptTexts);
  }

  private storeTree(files: Map<string, string>): string {
    const id = sha(JSON.stringify([...files.entries()].sort()));
    this.trees.set(id, files);
    return id;
  }

  private getCommit(r: RecordedRequest): Reply {
    const id = r.path.split("/").pop()!;
    const commit = this.commits.get(id);
    return commit
      ? [200, { sha: id, tree: { sha: commit.tree }, parents: commit.parents.map((p) => ({ sha: p })) }]
      : [404, { message: "Not Found" }];
  }

  /** `GET /repos/{o}/{r}/commits?sha=&path=`: the first-parent history from `sha` of the commits that changed `path`, newest first. */
  private listCommits(r: RecordedRequest): Reply {
    const path = r.query.path;
    const fileAt = (commit: string | undefined) =>
      commit ? this.trees.get(this.commits.get(commit)?.tree ?? "")?.get(path ?? "") : undefined;
    const listed: Array<{ sha: string }> = [];
    for (let at = r.query.sha === "consort/state" ? this.head : r.query.sha; at;) {
      const parent = this.commits.get(at)?.parents[0];
      if (!path || fileAt(at) !== fileAt(parent)) listed.push({ sha: at });
      at = parent;
    }
    return [200, listed.slice(0, Number(r.query.per_page ?? 30))];
  }

  private getContent(r: RecordedRequest): Reply {
    const path = decodeURIComponent(r.path.slice(`${base}/contents/`.length));
    const ref = r.query.ref ?? this.head;
    const commit = ref === "consort/state" ? this.head : ref;
    const files = commit ? this.trees.get(this.commits.get(commit)?.tree ?? "") : undefined;
    // As GitHub: a ref that does not exist is named in the 404.
    if (!commit) return [404, { message: `No commit found for the ref ${ref ?? "consort/state"}` }];
    const text = files?.get(path);
    if (text === undefined) return [404, { message: "Not Found" }];
    return [
      200,
      {
        type: "file",
        encoding: "base64",
        content: Buffer.from(text).toString("base64"),
        path,
        name: path.split("/").pop(),
        sha: gitBlobId(text),
      },
    ];
  }

  /** A blob by its git id, as `GET /git/blobs/{sha}` answers: any version of any file the branch ever held. */
  private getBlob(r: RecordedRequest): Reply {
    const id = r.path.split("/").pop()!;
    for (const files of this.trees.values())
      for (const text of files.values())
        if (gitBlobId(text) === id)
          return [
            200,
            {
              sha: id,
              size: Buffer.byteLength(text),
              encoding: "base64",
              content: Buffer.from(text).toString("base64"),
            },
          ];
    return [404, { message: "Not Found" }];
  }

  private getTree(r: RecordedRequest): Reply {
    const id = r.path.split("/").pop()!;
    const pushed = this.pushedTrees.get(id);
    if (pushed) return [200, pushed];
    const files = this.trees.get(id);
    if (!files) {
      const dir = this.blobs.get(id);
      if (dir === undefined) return [404, { message: "Not Found" }];
      const entries = (JSON.parse(dir) as string[]).map((name) => ({
        path: name,
        type: "blob",
        sha: sha(name),
        mode: "100644",
      }));
      return [200, { sha: id, tree: entries, truncated: false }];
    }
    // A two-level listing, as the store reads it: the root holds `tracks/`, which holds the files.
    const names = [...files.keys()].filter((p) => p.startsWith("tracks/")).map((p) => p.slice("tracks/".length));
    const dirId = sha(`dir${JSON.stringify(names)}`);
    this.blobs.set(dirId, JSON.stringify(names));
    const root = [...files.keys()]
      .filter((p) => !p.includes("/"))
      .map((p) => ({ path: p, type: "blob", sha: sha(p), mode: "100644" }));
    return [
      200,
      {
        sha: id,
        tree: [...root, ...(names.length ? [{ path: "tracks", type: "tree", sha: dirId, mode: "040000" }] : [])],
        truncated: false,
      },
    ];
  }

  private createTree(r: RecordedRequest): Reply {
    const body = r.body as { base_tree?: string; tree: Array<{ path: string; content: string }> };
    const files = new Map(body.base_tree ? (this.trees.get(body.base_tree) ?? new Map()) : new Map<string, string>());
    for (const entry of body.tree) files.set(entry.path, entry.content);
    return [201, { sha: this.storeTree(files), tree: [], truncated: false }];
  }

  private createCommit(r: RecordedRequest): Reply {
    const body = r.body as { tree: string; parents: string[]; message: string };
    const id = sha(`${body.tree}${body.parents.join()}${body.message}${Math.random()}`);
    this.commits.set(id, { tree: body.tree, parents: body.parents });
    return [
      201,
      { sha: id, tree: { sha: body.tree }, parents: body.parents.map((p) => ({ sha: p })), message: body.message },
    ];
  }

  private updateRef(r: RecordedRequest): Reply {
    const body = r.body as { sha: string; force?: boolean };
    if (this.racesBeforeUpdate > 0) {
      this.racesBeforeUpdate -= 1;
      this.write("README.md", `another replica wrote here ${Math.random()}`);
    }
    const parent = this.commits.get(body.sha)?.parents[0];
    const accepted = body.force === false && parent === this.head;
    this.updates.push({ sha: body.sha, accepted });
    if (!accepted) return [422, { message: "Update is not a fast forward" }];
    this.head = body.sha;
    return [200, refBody(body.sha)];
  }

  /**
   * The Contents API write: the blob sha it names is the compare-and-swap (409 when the file
   * changed since it was read; 422 when a new file already exists), as GitHub answers it.
   */
  private putContent(r: RecordedRequest): Reply {
    const path = decodeURIComponent(r.path.slice(`${base}/contents/`.length));
    const body = r.body as { message: string; content: string; sha?: string; branch?: string };
    if (body.branch !== "consort/state") return [422, { message: `unexpected branch ${String(body.branch)}` }];
    if (!this.head) return [404, { message: "Branch consort/state not found" }];
    if (this.racesBeforeUpdate > 0) {
      this.racesBeforeUpdate -= 1;
      this.raceOn(path);
    }
    const text = this.text(path);
    const lost = text === undefined ? body.sha !== undefined : body.sha === undefined || body.sha !== gitBlobId(text);
    if (lost) {
      this.updates.push({ sha: body.sha ?? "", accepted: false });
      return text !== undefined && body.sha === undefined
        ? [422, { message: 'Invalid request.\n\n"sha" wasn\'t supplied.' }]
        : [409, { message: `${path} does not match ${String(body.sha)}` }];
    }
    this.write(path, Buffer.from(body.content, "base64").toString("utf8"));
    this.updates.push({ sha: this.head, accepted: true });
    return [
      text === undefined ? 201 : 200,
      { content: { path, sha: gitBlobId(this.text(path)!) }, commit: { sha: this.head } },
    ];
  }

  /** Another replica rewrites the same track's file (still validly sealed), so a write based on the old one loses. */
  private raceOn(path: string): void {
    const trackId = path.replace(/^tracks\//, "").replace(/\.json$/, "");
    const current = this.state(trackId);
    if (current) this.seed({ ...current, updatedAt: new Date(Date.parse(current.updatedAt) + 1000).toISOString() });
    else this.write("README.md", `another replica wrote here ${Math.random()}`);
  }

  private createRef(r: RecordedRequest): Reply {
    const body = r.body as { ref: string; sha: string };
    if (body.ref !== "refs/heads/consort/state") return [422, { message: `unexpected ref ${body.ref}` }];
    if (this.head) return [422, { message: "Reference already exists" }];
    this.head = body.sha;
    return [201, refBody(body.sha)];
  }
}

const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

function refBody(commit: string) {
  return { ref: "refs/heads/consort/state", node_id: "REF", url: "", object: { type: "commit", sha: commit, url: "" } };
}

/** A payload from @octokit/webhooks-examples moved into the test repository and installation. */
export function inRepo<T extends Record<string, unknown>>(payload: T): T {
  const repository = payload.repository as Record<string, unknown> | undefined;
  return {
    ...payload,
    installation: { id: INSTALLATION_ID, node_id: "INST" },
    ...(repository
      ? {
          repository: {
            ...repository,
            id: REPOSITORY_ID,
            name: REPO,
            full_name: FULL_NAME,
            owner: { ...(repository.owner as object), login: OWNER },
            default_branch: DEFAULT_BRANCH,
          },
        }
      : {}),
  };
}

/** A git-refs answer: branch `branch` at `commit`. */
export function refAt(branch: string, commit: string): Reply {
  return [
    200,
    { ref: `refs/heads/${branch}`, node_id: "R", url: "", object: { type: "commit", sha: commit, url: "" } },
  ];
}

/** A contents-API answer for a file's text. */
export function contentFile(path: string, text: string): Reply {
  return [
    200,
    {
      type: "file",
      encoding: "base64",
      content: Buffer.from(text).toString("base64"),
      path,
      name: path.split("/").pop(),
      sha: sha(text),
      size: text.length,
    },
  ];
}
