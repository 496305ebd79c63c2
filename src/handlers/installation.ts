import type { HandlerInput } from "../app/services.js";
import { ensureStateBranch } from "../state/index.js";
import type { InstallationPayload, InstallationRepositoriesPayload } from "./payloads.js";

/**
 * `installation.created` and `installation_repositories.added`: give every newly reachable
 * repository its `consort/state` branch. One repository failing does not stop the others, but
 * the delivery still fails so the problem is visible in the app's delivery log.
 */
export async function handleInstallation({
  octokit,
  payload,
  log,
}: HandlerInput<InstallationPayload | InstallationRepositoriesPayload>): Promise<void> {
  const repositories = "repositories_added" in payload ? payload.repositories_added : (payload.repositories ?? []);
  const failures: string[] = [];
  for (const repository of repositories) {
    const [owner, repo] = repository.full_name.split("/") as [string, string];
    try {
      const outcome = await ensureStateBranch({ octokit, owner, repo });
      log.info({ repository: repository.full_name, outcome }, `consort/state: ${outcome}`);
    } catch (error) {
      failures.push(`${repository.full_name}: ${(error as Error).message}`);
    }
  }
  if (failures.length > 0)
    throw new Error(`Could not create consort/state in ${failures.length} repositories:\n${failures.join("\n")}`);
}
