import { httpStatus, type GitHubClient, type RepoRef } from "./client.js";
import { readZipFiles, ZipError } from "./zip.js";

/** The artifact every Consort workflow uploads (docs/ARCHITECTURE.md, The moving parts). */
const RESULT_ARTIFACT = "consort-cycle-result";

/** Largest artifact the app downloads: a cycle result is a few JSON and Markdown files. */
const MAX_ARTIFACT_BYTES = 20 * 1024 * 1024;
/** Largest file the app unpacks from it: a result of hundreds of tests is well under this. */
const MAX_RESULT_FILE_BYTES = 1024 * 1024;

export class ArtifactError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArtifactError";
  }
}

/**
 * Download a run's result artifact and read only the `files` asked for out of it, each bounded
 * (the zip's own sizes are not trusted: inflating stops at the bound). A run without the artifact,
 * with two of that name, an expired one (listed so, or GitHub answering 410 on the download), or a
 * zip that does not open is an ArtifactError the caller reports as a failed cycle.
 */
export async function downloadRunArtifact({
  octokit,
  owner,
  repo,
  runId,
  files,
  name = RESULT_ARTIFACT,
}: RepoRef & { octokit: GitHubClient; runId: number; files: readonly string[]; name?: string }): Promise<
  Record<string, Uint8Array>
> {
  const { data } = await octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts", {
    owner,
    repo,
    run_id: runId,
    name,
    per_page: 10,
  });
  const named = data.artifacts.filter((a) => a.name === name);
  const artifact = named[0];
  if (!artifact)
    throw new ArtifactError(`run ${runId} uploaded no "${name}" artifact: the job ended before it wrote its result`);
  if (named.length > 1)
    throw new ArtifactError(`run ${runId} has ${named.length} artifacts named "${name}": which one is the result?`);
  if (artifact.expired) throw new ArtifactError(`run ${runId}'s "${name}" artifact has expired`);
  if (artifact.size_in_bytes > MAX_ARTIFACT_BYTES)
    throw new ArtifactError(
      `run ${runId}'s "${name}" artifact is ${artifact.size_in_bytes} bytes, more than a result can be`,
    );
  let zip;
  try {
    // GitHub answers 302 to a short-lived blob URL; fetch follows it without the Authorization header.
    zip = await octokit.request("GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}", {
      owner,
      repo,
      artifact_id: artifact.id,
      archive_format: "zip",
    });
  } catch (error) {
    if (httpStatus(error) === 410)
      throw new ArtifactError(`run ${runId}'s "${name}" artifact has expired (GitHub answered 410 Gone)`);
    throw error;
  }
  const bytes = toBytes(zip.data);
  if (bytes.length > MAX_ARTIFACT_BYTES)
    throw new ArtifactError(`run ${runId}'s "${name}" artifact is ${bytes.length} bytes, more than a result can be`);
  try {
    return readZipFiles(bytes, files, MAX_RESULT_FILE_BYTES);
  } catch (error) {
    if (!(error instanceof ZipError)) throw error;
    throw new ArtifactError(`run ${runId}'s "${name}" artifact is not a readable result: ${error.message}`);
  }
}

/** Read one JSON file out of an unzipped artifact. */
export function artifactJson(files: Record<string, Uint8Array>, file: string, runId: number): unknown {
  const entry = files[file];
  if (!entry) throw new ArtifactError(`run ${runId}'s result artifact has no ${file}`);
  try {
    return JSON.parse(new TextDecoder().decode(entry));
  } catch {
    throw new ArtifactError(`run ${runId}'s ${file} is not valid JSON`);
  }
}

function toBytes(data: unknown): Uint8Array {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (typeof data === "string") return Buffer.from(data, "binary");
  throw new ArtifactError("the artifact download answered with something that is not a zip");
}
