import type { GitHubClient } from "./client.js";

/**
 * The text of a file too large for the contents API to inline. GitHub's contents read gives the
 * text of a file up to 1 MB; a larger one comes with `encoding: "none"` and no content, and its
 * text is read by the blob sha that answer carries (`GET /git/blobs/{sha}`, up to 100 MB).
 * Undefined when GitHub answers the blob in another encoding; a failed request throws.
 */
export async function blobText(
  octokit: GitHubClient,
  owner: string,
  repo: string,
  sha: string,
): Promise<string | undefined> {
  const { data } = await octokit.rest.git.getBlob({ owner, repo, file_sha: sha });
  if (data.encoding !== "base64" || typeof data.content !== "string") return undefined;
  return Buffer.from(data.content, "base64").toString("utf8");
}

/** Whether a contents answer left the text out for its size, so `blobText` reads it. */
export function textLeftOut(file: { encoding?: string; sha?: unknown }): file is { encoding: "none"; sha: string } {
  return file.encoding === "none" && typeof file.sha === "string";
}
