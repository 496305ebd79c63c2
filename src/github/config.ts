import { defaultConfig } from "../config/consort-config.js";
import { CONFIG_PATH, ConfigError, parseConfigText, type LoadedConfig } from "../config/load.js";
import { httpStatus, type GitHubClient, type RepoRef } from "./client.js";
import { readConditionally, type ConditionalReads } from "./conditional.js";

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
