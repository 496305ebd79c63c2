import { Octokit } from "@octokit/rest";
import { contentsBody, type GitHubMock } from "../helpers/github.js";
import { emptyTrackState, keyIdOf, sealState, serialiseStateFile, type TrackState } from "../../src/state/index.js";

/** Shared fixtures for the state-store scenarios: one repository, one key, fixed shas. */
export const OWNER = "acme";
export const REPO = "shop";
export const KEY = "k".repeat(40);
export const TRACK = "feature-orders";
export const FILE_PATH = `tracks/${TRACK}.json`;
export const NOW = new Date("2026-11-30T06:00:00.000Z");

export const REF_URL = `/repos/${OWNER}/${REPO}/git/ref/heads%2Fconsort%2Fstate`;
export const CREATE_REF_URL = `/repos/${OWNER}/${REPO}/git/refs`;
export const UPDATE_REF_URL = `/repos/${OWNER}/${REPO}/git/refs/heads%2Fconsort%2Fstate`;
export const TREES_URL = `/repos/${OWNER}/${REPO}/git/trees`;
export const COMMITS_URL = `/repos/${OWNER}/${REPO}/git/commits`;
export const contentsUrl = (trackId = TRACK) => `/repos/${OWNER}/${REPO}/contents/tracks%2F${trackId}.json`;

export const sha = (c: string) => c.repeat(40);

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
export const octokit = () => new Octokit({ auth: "ghs_test", request: { retries: 0 }, log: quiet });

/** A realistic state: a track past its design gate, whose snapshot holds one approval. */
export function trackState(overrides: Partial<TrackState> = {}): TrackState {
  const base = emptyTrackState({
    trackId: TRACK,
    repository: `${OWNER}/${REPO}`,
    branch: "feature/orders",
    snapshot: {
      value: "designGate",
      context: {
        testIndex: 0,
        gates: {
          design: {
            approvals: [
              {
                approver: "octo-lead",
                reviewId: 80,
                commit: sha("a"),
                manifestHash: "d".repeat(64),
                at: "2026-11-30T05:20:00.000Z",
              },
            ],
          },
        },
      },
    },
    now: new Date("2026-11-30T05:00:00.000Z"),
  });
  return {
    ...base,
    frozen: {
      gates: {
        design: {
          manifestHash: "d".repeat(64),
          files: { ".consort/spec.json": "1".repeat(64), ".consort/architecture.json": "2".repeat(64) },
          commit: sha("a"),
          at: "2026-11-30T05:10:00.000Z",
        },
      },
      testFiles: {},
    },
    cycles: [],
    processedDeliveries: ["delivery-1"],
    // As the app seals it: the key's id is part of every file.
    keyId: keyIdOf(KEY),
    ...overrides,
  };
}

export function fileText(state: TrackState, key = KEY): string {
  return serialiseStateFile(sealState(state, key));
}

export function contentsReply(text: string, path = FILE_PATH, blob = sha("f")) {
  return [
    200,
    {
      type: "file",
      ...contentsBody(Buffer.from(text)),
      size: Buffer.byteLength(text),
      name: path.split("/").pop(),
      path,
      sha: blob,
      url: "",
      git_url: null,
      html_url: null,
      download_url: null,
      _links: { self: "", git: null, html: null },
    },
  ] as [number, unknown];
}

/** The Git Data API's answer for a blob: its content, base64 (files up to 100 MB). */
export function blobReply(text: string, blob = sha("f")) {
  return [
    200,
    {
      sha: blob,
      node_id: "B",
      size: Buffer.byteLength(text),
      url: "",
      content: Buffer.from(text).toString("base64"),
      encoding: "base64",
    },
  ] as [number, unknown];
}

/** Tree and commit creation answering with the given shas. */
export function mockWrite(github: GitHubMock, newTree: string, newCommit: string): void {
  github.on("POST", TREES_URL, [201, { sha: newTree, url: "", tree: [], truncated: false }]);
  github.on("POST", COMMITS_URL, [201, { sha: newCommit, tree: { sha: newTree }, parents: [] }]);
}

export const refReply = (commit: string) =>
  [
    200,
    { ref: "refs/heads/consort/state", node_id: "x", url: "", object: { sha: commit, type: "commit", url: "" } },
  ] as [number, unknown];

/** The track's file as the store reads it before a write: its text and blob sha, or no file (404). */
export function mockRead(github: GitHubMock, text: string | undefined, blob = sha("f")): void {
  github.on(
    "GET",
    contentsUrl(),
    text === undefined ? [404, { message: "Not Found" }] : contentsReply(text, FILE_PATH, blob),
  );
}

/** GitHub's answer to a contents read when consort/state does not exist: a 404 naming the ref. */
export function mockNoBranch(github: GitHubMock): void {
  github.on("GET", contentsUrl(), [404, { message: "No commit found for the ref consort/state" }]);
}

/** A Contents API write that GitHub accepted, making `commit` (on `parent`, the branch's tip it found). */
export const putReply = (commit: string, blob = sha("e"), parent?: string) =>
  [
    200,
    {
      content: { name: `${TRACK}.json`, path: FILE_PATH, sha: blob, type: "file" },
      commit: { sha: commit, message: "", tree: { sha: sha("9") }, parents: parent ? [{ sha: parent }] : [] },
    },
  ] as [number, unknown];
