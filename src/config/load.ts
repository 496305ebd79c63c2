import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse as parseYaml, YAMLParseError } from "yaml";
import { jsonPath, type ArtifactIssue } from "../artifacts/issues.js";
import { schemaFile } from "../artifacts/paths.js";
import { ConsortConfig, defaultConfig } from "./consort-config.js";
import { CONFIG_PATH } from "./path.js";
import { formatZodError, type ProblemAt } from "../contracts/zod-error.js";
import { consortCommand } from "../contracts/command.js";

/**
 * The one loader of `.github/consort.yml`: its text parsed by the one schema, from a file on disk
 * (the CLI, the MCP tools, the actions) or, through src/github/config.ts, from GitHub at the default
 * branch (the app, so a track cannot loosen its own rules, docs/ARCHITECTURE.md, Configuration).
 * Every failure is a ConfigError in one format.
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

const FIX_SCHEMA = `Correct those fields (${schemaFile("consort-config")} lists every field and its allowed values), then run \`${consortCommand("validate")}\` to check the file.`;
const FIX_YAML = `Fix the YAML syntax, then run \`${consortCommand("validate")}\` to check the file.`;

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
