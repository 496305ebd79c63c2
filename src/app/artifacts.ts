import { unzipSync } from "fflate";
import type { GitHub, RepoRef } from "./github.js";

/** The artifact every Consort workflow uploads (design §1). */
export const RESULT_ARTIFACT = "consort-cycle-result";

/** Largest artifact the app unpacks: a cycle result is a few JSON and Markdown files. */
const MAX_ARTIFACT_BYTES = 20 * 1024 * 1024;

export class ArtifactError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArtifactError";
  }
}

/**
 * Download a run's result artifact and unzip it in memory. A run without the artifact, an expired
 * one, or a zip that does not open is an ArtifactError the caller reports as a failed cycle.
 */
export async function downloadRunArtifact({
  octokit,
  owner,
  repo,
  runId,
  name = RESULT_ARTIFACT,
}: RepoRef & { octokit: GitHub; runId: number; name?: string }): Promise<Record<string, Uint8Array>> {
  const { data } = await octokit.request("GET /repos/{owner}/{repo}/actions/runs/{run_id}/artifacts", {
    owner,
    repo,
    run_id: runId,
    name,
    per_page: 10,
  });
  const artifact = data.artifacts.find((a) => a.name === name);
  if (!artifact)
    throw new ArtifactError(`run ${runId} uploaded no "${name}" artifact: the job ended before it wrote its result`);
  if (artifact.expired) throw new ArtifactError(`run ${runId}'s "${name}" artifact has expired`);
  if (artifact.size_in_bytes > MAX_ARTIFACT_BYTES)
    throw new ArtifactError(
      `run ${runId}'s "${name}" artifact is ${artifact.size_in_bytes} bytes, more than a result can be`,
    );
  const zip = await octokit.request("GET /repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}", {
    owner,
    repo,
    artifact_id: artifact.id,
    archive_format: "zip",
  });
  const bytes = toBytes(zip.data);
  try {
    return unzipSync(bytes);
  } catch (error) {
    throw new ArtifactError(`run ${runId}'s "${name}" artifact is not a readable zip: ${(error as Error).message}`);
  }
}

/** Read one JSON file out of an unzipped artifact. */
export function artifactJson(files: Record<string, Uint8Array>, file: string, runId: number): unknown {
  const entry = files[file] ?? Object.entries(files).find(([path]) => path.endsWith(`/${file}`))?.[1];
  if (!entry)
    throw new ArtifactError(
      `run ${runId}'s result artifact has no ${file} (it holds: ${Object.keys(files).join(", ") || "nothing"})`,
    );
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
