import { Octokit } from "@octokit/rest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/consort-config.js";
import { CONFIG_PATH } from "../../src/config/load.js";
import { readGitHubConfig, type ConfigReads } from "../../src/github/config.js";
import { BROKEN_SCHEMA, BROKEN_YAML, FIX_SCHEMA, FIX_YAML, YAML_PROBLEM } from "../config/broken-configs.js";
import { GitHubMock } from "../helpers/github.js";

describe("a configuration on GitHub, at the default branch", () => {
  const owner = "acme";
  const repo = "shop";
  const contents = "/repos/acme/shop/contents/.github%2Fconsort.yml";
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const octokit = new Octokit({ auth: "ghs_test", log: quiet });
  const CONSEQUENCE =
    "Consort decides nothing for this repository until the file on main is fixed: every Consort check fails.";
  let github: GitHubMock;
  beforeEach(() => {
    github = new GitHubMock();
  });
  afterEach(() => {
    github.dispose();
  });

  const entry = (type: string, path: string, size: number) => ({
    type,
    size,
    name: path.split("/").pop(),
    path,
    sha: "3d21ec53a331a6f037a91c368710b99387d012c1",
    url: `https://api.github.com/repos/acme/shop/contents/${path}?ref=main`,
    git_url: "https://api.github.com/repos/acme/shop/git/blobs/3d21ec53a331a6f037a91c368710b99387d012c1",
    html_url: `https://github.com/acme/shop/blob/main/${path}`,
    download_url: `https://raw.githubusercontent.com/acme/shop/main/${path}`,
    _links: {
      self: `https://api.github.com/repos/acme/shop/contents/${path}?ref=main`,
      git: "https://api.github.com/repos/acme/shop/git/blobs/3d21ec53a331a6f037a91c368710b99387d012c1",
      html: `https://github.com/acme/shop/blob/main/${path}`,
    },
  });
  const file = (text: string): [number, unknown] => [
    200,
    { ...entry("file", CONFIG_PATH, text.length), encoding: "base64", content: Buffer.from(text).toString("base64") },
  ];
  const read = (defaultBranch = "main") => readGitHubConfig({ octokit, owner, repo, defaultBranch });

  it("reads .github/consort.yml at the default branch, never at the track", async () => {
    github.on("GET", contents, file("repairBound: 5\ngranularity: ac\n"));
    expect(await read()).toEqual({
      ok: true,
      source: "file",
      ref: "main",
      config: { ...defaultConfig(), repairBound: 5, granularity: "ac" },
    });
    expect(github.requests[0]!.query).toEqual({ ref: "main" });
    github.verify();
  });

  it("read again with the ETag GitHub gave: an unchanged file is GitHub's 304 (no rate limit), a changed one is read anew", async () => {
    const kept: ConfigReads = new Map();
    const keptRead = () => readGitHubConfig({ octokit, owner, repo, defaultBranch: "main", kept });
    const [status, body] = file("repairBound: 5\n");
    github
      .on("GET", contents, [status, body, { etag: '"v1"' }])
      .on("GET", contents, (request) =>
        request.headers["if-none-match"] === '"v1"' ? [304] : [500, { message: "asked without the ETag" }],
      )
      .on("GET", contents, (request) =>
        request.headers["if-none-match"] === '"v1"'
          ? [200, file("repairBound: 7\n")[1], { etag: '"v2"' }]
          : [500, { message: "asked without the ETag" }],
      );
    const bounds = [];
    for (let i = 0; i < 3; i++) {
      const result = await keptRead();
      bounds.push(result.ok ? result.config.repairBound : result.message);
    }
    github.verify();
    expect(bounds).toEqual([5, 5, 7]);
    expect(github.requests.map((r) => r.headers["if-none-match"] ?? null)).toEqual([null, '"v1"', '"v1"']);
    expect([...kept.values()].map((k) => k.etag)).toEqual(['"v2"']);
  });

  it("a kept answer is never used unasked: a file deleted since is GitHub's 404 and the defaults", async () => {
    const kept: ConfigReads = new Map();
    const [status, body] = file("repairBound: 5\n");
    github.on("GET", contents, [status, body, { etag: '"v1"' }]).on("GET", contents, [404, { message: "Not Found" }]);
    await readGitHubConfig({ octokit, owner, repo, defaultBranch: "main", kept });
    expect(await readGitHubConfig({ octokit, owner, repo, defaultBranch: "main", kept })).toEqual({
      ok: true,
      source: "defaults",
      ref: "main",
      config: defaultConfig(),
    });
    github.verify();
    expect(kept.size).toBe(0);
  });

  it("uses the defaults when the repository has no configuration", async () => {
    github.on("GET", contents, [404, { message: "Not Found" }]);
    expect(await read("trunk")).toEqual({ ok: true, source: "defaults", ref: "trunk", config: defaultConfig() });
    github.verify();
  });

  it("an invalid configuration is a failure naming the file, the branch, each field and rule, and what happens until it is fixed", async () => {
    github.on("GET", contents, file(BROKEN_SCHEMA));
    const result = await read();
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toBe(
      [
        ".github/consort.yml on main is invalid:",
        '  - database.provider: Invalid option: expected one of "local"|"postgres"|"lakebase"',
        "  - repairBound: Too big: expected number to be <=10",
        FIX_SCHEMA,
        CONSEQUENCE,
      ].join("\n"),
    );
    github.verify();
  });

  it("a file that is not YAML is invalid, not the defaults", async () => {
    github.on("GET", contents, file(BROKEN_YAML));
    const result = await read();
    expect(!result.ok && result.message).toBe(
      `.github/consort.yml on main: ${YAML_PROBLEM}\n${FIX_YAML}\n${CONSEQUENCE}`,
    );
    github.verify();
  });

  it("a folder at .github/consort.yml is invalid, not the defaults", async () => {
    github.on("GET", contents, [200, [entry("file", `${CONFIG_PATH}/base.yml`, 20)]]);
    const result = await read();
    expect(!result.ok && result.message).toBe(
      `.github/consort.yml on main: it is a folder, not a file\nKeep the configuration as the file .github/consort.yml on main.\n${CONSEQUENCE}`,
    );
    github.verify();
  });

  it("a file over 1 MB, which GitHub answers without its text, is invalid, not the defaults", async () => {
    github.on("GET", contents, [200, { ...entry("file", CONFIG_PATH, 2_000_000), encoding: "none", content: "" }]);
    const result = await read();
    expect(!result.ok && result.message).toBe(
      [
        ".github/consort.yml on main: it is 2000000 bytes: GitHub's contents API gives the text of files up to 1 MB only",
        "Shorten it: a consort.yml is a few lines of settings.",
        CONSEQUENCE,
      ].join("\n"),
    );
    github.verify();
  });

  it("an API failure other than 404 is thrown, never read as the defaults", async () => {
    github.on("GET", contents, [500, { message: "boom" }]);
    await expect(read()).rejects.toMatchObject({ status: 500 });
    github.verify();
  });
});
