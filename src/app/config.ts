import { parse as parseYaml, YAMLParseError } from "yaml";
import type { z } from "zod";
import { ConsortConfig } from "../config/consort-config.js";
import { httpStatus, type GitHub, type RepoRef } from "./github.js";

/** Where a repository keeps its Consort configuration (design §8). */
export const CONFIG_PATH = ".github/consort.yml";

export type ConfigResult =
  | { ok: true; config: ConsortConfig; source: "file" | "defaults"; ref: string }
  | { ok: false; ref: string; problems: string[]; message: string };

/**
 * Read `.github/consort.yml` as it is on the DEFAULT branch, never on the track, so a track
 * cannot loosen its own rules. A missing file means the defaults; a file that is not valid YAML
 * or breaks the schema is an invalid configuration that the caller must turn into failed checks.
 * Any other API failure throws: the handler fails, and GitHub shows the delivery as failed.
 */
export async function loadRepoConfig({
  octokit,
  owner,
  repo,
  defaultBranch,
}: RepoRef & { octokit: GitHub; defaultBranch: string }): Promise<ConfigResult> {
  let text: string;
  try {
    const response = await octokit.request("GET /repos/{owner}/{repo}/contents/{path}", {
      owner,
      repo,
      path: CONFIG_PATH,
      ref: defaultBranch,
    });
    const file = response.data;
    if (Array.isArray(file) || file.type !== "file" || !("content" in file)) {
      return invalid(defaultBranch, [`${CONFIG_PATH} is not a file`]);
    }
    text = Buffer.from(file.content, (file.encoding as BufferEncoding | undefined) ?? "base64").toString("utf8");
  } catch (error) {
    if (httpStatus(error) === 404)
      return { ok: true, config: ConsortConfig.parse({}), source: "defaults", ref: defaultBranch };
    throw error;
  }
  return parseRepoConfig(text, defaultBranch);
}

/** Parse the text of `.github/consort.yml`; every problem names its field and the rule broken. */
export function parseRepoConfig(text: string, ref: string): ConfigResult {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (error) {
    const detail = error instanceof YAMLParseError ? error.message.split("\n")[0]! : String(error);
    return invalid(ref, [`not valid YAML: ${detail}`]);
  }
  const parsed = ConsortConfig.safeParse(raw);
  if (!parsed.success) return invalid(ref, parsed.error.issues.map(describeIssue));
  return { ok: true, config: parsed.data, source: "file", ref };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "(top level)";
  return `${field}: ${issue.message}`;
}

function invalid(ref: string, problems: string[]): ConfigResult {
  const message =
    `${CONFIG_PATH} on ${ref} is invalid, so Consort cannot decide anything for this repository:\n` +
    problems.map((p) => `- ${p}`).join("\n") +
    `\nFix the file on ${ref} (run \`consort validate\` locally to check it); every Consort check fails until then.`;
  return { ok: false, ref, problems, message };
}
