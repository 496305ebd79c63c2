import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/consort-config.js";
import {
  CONFIG_PATH,
  ConfigError,
  configIssues,
  parseConfigText,
  readCheckoutConfig,
  readConfigFile,
  readGitHubConfig,
  type ConfigReads,
} from "../../src/config/load.js";
import { GitHubMock } from "../helpers/github.js";

const FIX_SCHEMA =
  "Correct those fields (node_modules/consort-for-github/schemas/consort-config.schema.json lists every field and its allowed values), then run `consort validate` to check the file.";
const FIX_YAML = "Fix the YAML syntax, then run `consort validate` to check the file.";
const BROKEN_SCHEMA = "repairBound: 50\ndatabase:\n  provider: oracle\n";
const BROKEN_YAML = "repairBound: [1,\n";
const YAML_PROBLEM =
  "not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 1";

/** What a call throws, so a test can assert all of it. */
function thrownBy(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

describe("the text of a configuration", () => {
  it("an empty file is the defaults", () => {
    expect(parseConfigText("", CONFIG_PATH)).toEqual(defaultConfig());
  });

  it("a schema error names the file, every field with zod's message, and the fix", () => {
    const error = thrownBy(() => parseConfigText(BROKEN_SCHEMA, CONFIG_PATH));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(
      [
        ".github/consort.yml is invalid:",
        '  - database.provider: Invalid option: expected one of "local"|"postgres"|"lakebase"',
        "  - repairBound: Too big: expected number to be <=10",
        FIX_SCHEMA,
      ].join("\n"),
    );
  });

  it("text that is not YAML names the file, the parser's line and column, and the fix", () => {
    const error = thrownBy(() => parseConfigText(BROKEN_YAML, CONFIG_PATH));
    expect((error as ConfigError).message).toBe(`.github/consort.yml: ${YAML_PROBLEM}\n${FIX_YAML}`);
  });

  it("consort validate lists a schema error field by field, as JSON paths", () => {
    const error = thrownBy(() => parseConfigText(BROKEN_SCHEMA, CONFIG_PATH)) as ConfigError;
    expect(configIssues(error)).toEqual([
      {
        file: ".github/consort.yml",
        path: "$.database.provider",
        message: 'Invalid option: expected one of "local"|"postgres"|"lakebase"',
        fix: FIX_SCHEMA,
      },
      {
        file: ".github/consort.yml",
        path: "$.repairBound",
        message: "Too big: expected number to be <=10",
        fix: FIX_SCHEMA,
      },
    ]);
  });
});

describe("a configuration file on disk", () => {
  const work = mkdtempSync(join(tmpdir(), "consort-config-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const checkout = (name: string, files: Record<string, string>) => {
    const root = join(work, name);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    mkdirSync(root, { recursive: true });
    return root;
  };

  it("reads the checkout's .github/consort.yml", () => {
    const root = checkout("configured", { [CONFIG_PATH]: "repairBound: 5\ngranularity: ac\n" });
    expect(readCheckoutConfig(root)).toEqual({
      source: "file",
      config: { ...defaultConfig(), repairBound: 5, granularity: "ac" },
    });
  });

  it("a checkout without .github/consort.yml gets the defaults", () => {
    expect(readCheckoutConfig(checkout("bare", {}))).toEqual({ source: "defaults", config: defaultConfig() });
  });

  it("an invalid file in a checkout is named as the person knows it, relative to the checkout", () => {
    const root = checkout("broken", { [CONFIG_PATH]: BROKEN_YAML });
    expect((thrownBy(() => readCheckoutConfig(root)) as ConfigError).message).toBe(
      `.github/consort.yml: ${YAML_PROBLEM}\n${FIX_YAML}`,
    );
  });

  it("a file a person names in the checkout must exist", () => {
    const error = thrownBy(() => readCheckoutConfig(checkout("named", {}), "ci/consort.yml"));
    expect((error as ConfigError).message).toBe(
      "ci/consort.yml: the file does not exist\nPass the path of your consort.yml, or none to use .github/consort.yml (the defaults when there is none).",
    );
  });

  it("a file named by its path is read from there", () => {
    const root = checkout("elsewhere", { "settings/consort.yml": "granularity: ac\n" });
    expect(readConfigFile(join(root, "settings/consort.yml"))).toEqual({
      source: "file",
      config: { ...defaultConfig(), granularity: "ac" },
    });
  });

  it("a path that does not exist is the defaults, as the actions read their `config` input", () => {
    const path = join(checkout("absent", {}), "consort.yml");
    expect(readConfigFile(path)).toEqual({ source: "defaults", config: defaultConfig() });
  });

  it("a path that must exist and does not is named as given", () => {
    const path = join(checkout("required", {}), "consort.yml");
    expect((thrownBy(() => readConfigFile(path, { mustExist: true })) as ConfigError).summary).toBe(
      `${path}: the file does not exist`,
    );
  });
});

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
