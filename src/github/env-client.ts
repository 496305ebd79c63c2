import { execFileSync } from "node:child_process";
import { Octokit } from "@octokit/rest";
import type { GitHubClient, RepoRef } from "./client.js";
import { parseRepository } from "./client.js";

/** For CLI commands that talk to GitHub as the person at the terminal. */

export class GitHubSetupError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = "GitHubSetupError";
  }
}

/** An Octokit authenticated with GITHUB_TOKEN (or GH_TOKEN); GITHUB_API_URL selects GitHub Enterprise Server. */
export function clientFromEnv(env: NodeJS.ProcessEnv = process.env): GitHubClient {
  const token = env.GITHUB_TOKEN?.trim() || env.GH_TOKEN?.trim();
  if (!token) {
    throw new GitHubSetupError(
      "GITHUB_TOKEN is not set",
      "export GITHUB_TOKEN=… (e.g. `export GITHUB_TOKEN=$(gh auth token)`)",
    );
  }
  return new Octokit({ auth: token, baseUrl: env.GITHUB_API_URL?.trim() || undefined, userAgent: "consort-cli" });
}

/** The repository from `--repo`, else GITHUB_REPOSITORY, else the `origin` remote of the checkout in `cwd`. */
export function resolveRepository(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): RepoRef {
  const given = flag ?? env.GITHUB_REPOSITORY;
  if (given) return parseRepository(given);
  let remote = "";
  try {
    remote = execFileSync("git", ["remote", "get-url", "origin"], {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    // Not a checkout, or no origin: fall through to the error below.
  }
  const match = /[:/]([^/:]+)\/([^/]+?)(?:\.git)?$/.exec(remote);
  if (!match)
    throw new GitHubSetupError(
      "Which repository? None was given and the origin remote names none",
      "pass --repo owner/name",
    );
  return parseRepository(`${match[1]}/${match[2]}`);
}
