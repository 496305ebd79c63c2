import { ProbotOctokit } from "probot";
import type { GitHub } from "../app/github.js";
import type { AppServices } from "../app/services.js";
import { EnvSchema, privateKeyOf } from "../config/env.js";
import { appLoginOnce } from "../github/app-login.js";
import { createProvider } from "../substrate/index.js";
import { CliError } from "./output.js";

/**
 * A client acting AS THE APP on one repository (its installation token), with the services the
 * app's handlers take. Commands that write consort/state need it: the app refuses a state commit
 * it did not write, and only the app may update its own check runs.
 */
export async function appClient(
  owner: string,
  repo: string,
  command: string,
): Promise<{ octokit: GitHub; services: AppServices & Required<Pick<AppServices, "appLogin">> }> {
  const env = EnvSchema.parse(process.env);
  const privateKey = privateKeyOf(env);
  const appId = Number(env.APP_ID);
  if (!env.APP_ID || !Number.isInteger(appId) || !privateKey) {
    throw new CliError(
      `${command} runs as the GitHub App, but APP_ID or PRIVATE_KEY is not set`,
      "export APP_ID and PRIVATE_KEY (or PRIVATE_KEY_PATH) as the app has them",
    );
  }
  if (!env.CONSORT_STATE_KEY)
    throw new CliError("CONSORT_STATE_KEY is not set", "export the key the app seals consort/state with");
  const app = new ProbotOctokit({ auth: { appId, privateKey } });
  let installationId: number;
  try {
    installationId = (await app.request("GET /repos/{owner}/{repo}/installation", { owner, repo })).data.id;
  } catch (error) {
    throw new CliError(
      `The app is not installed on ${owner}/${repo} (${(error as Error).message})`,
      "install the Consort app on the repository first",
    );
  }
  const octokit = new ProbotOctokit({ auth: { appId, privateKey, installationId } }) as unknown as GitHub;
  return {
    octokit,
    services: {
      appId,
      stateKey: env.CONSORT_STATE_KEY,
      previousStateKeys: env.CONSORT_STATE_KEYS_PREVIOUS,
      clock: () => new Date(),
      openProvider: (database) => createProvider(database),
      appLogin: appLoginOnce(async () => (await app.request("GET /app")).data),
    },
  };
}
