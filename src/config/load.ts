import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse as parseYaml, YAMLParseError } from "yaml";
import { jsonPath, type ArtifactIssue } from "../artifacts/issues.js";
import { schemaFile } from "../artifacts/paths.js";
import { httpStatus, type GitHubClient, type RepoRef } from "../github/client.js";
import { readConditionally, type ConditionalReads } from "../github/conditional.js";
import { ConsortConfig, defaultConfig } from "./consort-config.js";
import { CONFIG_PATH } from "./path.js";
import { formatZodError, type ProblemAt } from "../contracts/zod-error.js";

/**
 * The one loader of `.github/consort.yml`: its text parsed by the one schema, from a file on disk
 * (the CLI, the MCP tools, the actions) or from GitHub at the default branch (the app, so a track
 * cannot loosen its own rules, docs/ARCHITECTURE.md, Configuration). Every failure is a ConfigError in one format.
 */

export { CONFIG_PATH };

export interface LoadedConfig {
  config: ConsortConfig;
  /** `defaults` when there is no file. */
  source: "file" | "defaults";
}

/** A configuration Consort cannot use: which file, every problem (field and rule), what to do. */
export class ConfigError extends Error {
  /** What is wrong, without the fix: the file and every problem. */
  readonly summary: string;

  constructor(
    /** The file as the person knows it: `.github/consort.yml`, `.github/consort.yml on main`, a path. */
    readonly file: string,
    /** zod's issues when the YAML breaks the schema; else one problem about the whole file. */
    readonly problems: ReadonlyArray<ProblemAt>,
    readonly fix: string,
  ) {
    // A problem with the whole file reads as one line: `.github/consort.yml on main: it is a folder, not a file`.
    const whole = problems.length === 1 && problems[0]!.path.length === 0 ? problems[0]!.message : undefined;
    const summary = whole ? `${file}: ${whole}` : formatZodError(problems, `${file} is invalid`);
    super(`${summary}\n${fix}`);
    this.summary = summary;
    this.name = "ConfigError";
  }
}

const FIX_SCHEMA = `Correct those fields (${schemaFile("consort-config")} lists every field and its allowed values), then run \`consort validate\` to check the file.`;
const FIX_YAML = "Fix the YAML syntax, then run `consort validate` to check the file.";

/** The configuration in `text`; `file` names it in errors. Throws ConfigError. */
export function parseConfigText(text: string, file: string): ConsortConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (error) {
    // The parser's first line says what and where; the lines after it quote the file.
    const detail = error instanceof YAMLParseError ? error.message.split("\n")[0]!.replace(/:$/, "") : String(error);
    throw new ConfigError(file, [{ path: [], message: `not valid YAML: ${detail}` }], FIX_YAML);
  }
  const parsed = ConsortConfig.safeParse(raw);
  if (!parsed.success) throw new ConfigError(file, parsed.error.issues, FIX_SCHEMA);
  return parsed.data;
}

/**
 * The configuration file at `path` (`shown` names it in errors). An absent file is the defaults,
 * unless `mustExist`: a file a person names on the command line must be there.
 */
export function readConfigFile(
  path: string,
  { shown = path, mustExist = false }: { shown?: string; mustExist?: boolean } = {},
): LoadedConfig {
  if (!existsSync(path)) {
    if (!mustExist) return { config: defaultConfig(), source: "defaults" };
    throw new ConfigError(
      shown,
      [{ path: [], message: "the file does not exist" }],
      `Pass the path of your consort.yml, or none to use ${CONFIG_PATH} (the defaults when there is none).`,
    );
  }
  return { config: parseConfigText(readFileSync(path, "utf8"), shown), source: "file" };
}

/**
 * The configuration of the checkout at `root`: its `.github/consort.yml` (the defaults when there
 * is none), or `file` (relative to `root`) when a person names one, which must then exist.
 */
export function readCheckoutConfig(root: string, file?: string): LoadedConfig {
  return readConfigFile(resolve(root, file ?? CONFIG_PATH), { shown: file ?? CONFIG_PATH, mustExist: !!file });
}

export type ConfigResult =
  (LoadedConfig & { ok: true; ref: string }) | { ok: false; ref: string; error: ConfigError; message: string };

/**
 * `.github/consort.yml` as it is on the DEFAULT branch, never on the track, so a track cannot
 * loosen its own rules. No file means the defaults; a file Consort cannot use is a failed result
 * the caller turns into failed checks. Any other API failure throws: the handler fails, and
 * GitHub shows the delivery as failed.
 */
export async function readGitHubConfig({
  octokit,
  owner,
  repo,
  defaultBranch,
  kept,
}: RepoRef & {
  octokit: GitHubClient;
  defaultBranch: string;
  /** The answers this process keeps: the file is then read conditionally, and an unchanged one costs no rate limit. */
  kept?: ConfigReads;
}): Promise<ConfigResult> {
  const file = `${CONFIG_PATH} on ${defaultBranch}`;
  try {
    const text = await fetchText(octokit, { owner, repo, ref: defaultBranch }, file, kept);
    if (text === undefined) return { ok: true, config: defaultConfig(), source: "defaults", ref: defaultBranch };
    return { ok: true, config: parseConfigText(text, file), source: "file", ref: defaultBranch };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const message = `${error.message}\nConsort decides nothing for this repository until the file on ${defaultBranch} is fixed: every Consort check fails.`;
    return { ok: false, ref: defaultBranch, error, message };
  }
}

const requestGitHubConfig = (
  octokit: GitHubClient,
  { owner, repo, ref }: RepoRef & { ref: string },
  headers: Record<string, string>,
) => octokit.request("GET /repos/{owner}/{repo}/contents/{path}", { owner, repo, path: CONFIG_PATH, ref, headers });

/** The configuration file's answers a process keeps (see readConditionally). */
export type ConfigReads = ConditionalReads<Awaited<ReturnType<typeof requestGitHubConfig>>["data"]>;

/** The file's text at `ref`, undefined when there is none; ConfigError when GitHub holds something else there. */
async function fetchText(
  octokit: GitHubClient,
  { owner, repo, ref }: RepoRef & { ref: string },
  file: string,
  kept: ConfigReads | undefined,
): Promise<string | undefined> {
  let data;
  try {
    data = await readConditionally(kept, `${owner}/${repo}@${ref}`, (headers) =>
      requestGitHubConfig(octokit, { owner, repo, ref }, headers),
    );
  } catch (error) {
    if (httpStatus(error) === 404) return undefined;
    throw error;
  }
  const fix = `Keep the configuration as the file ${CONFIG_PATH} on ${ref}.`;
  if (Array.isArray(data)) throw new ConfigError(file, [{ path: [], message: "it is a folder, not a file" }], fix);
  if (data.type !== "file")
    throw new ConfigError(file, [{ path: [], message: `it is a ${data.type}, not a file` }], fix);
  // Past 1 MB GitHub answers a file without its text: `encoding: "none"` and empty `content`.
  if (data.encoding !== "base64")
    throw new ConfigError(
      file,
      [
        {
          path: [],
          message: `it is ${data.size} bytes: GitHub's contents API gives the text of files up to 1 MB only`,
        },
      ],
      "Shorten it: a consort.yml is a few lines of settings.",
    );
  return Buffer.from(data.content, "base64").toString("utf8");
}

/**
 * A ConfigError as `consort validate` and the validate_artifacts tool list problems: one issue per
 * field the schema refused (its JSON path), or one for the whole file.
 */
export function configIssues(error: ConfigError): ArtifactIssue[] {
  return error.problems.map((problem) => ({
    file: error.file,
    path: jsonPath(problem.path),
    message: problem.message,
    fix: error.fix,
  }));
}
