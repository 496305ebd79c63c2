import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { stringify } from "yaml";
import { postgresUrl } from "../helpers/postgres.js";

/**
 * An action step's environment as the Actions runner gives it, in the workspace `work`: the config
 * file `<name>.yml` written from `config`, the `request` input, the checkout `cwd`, the result folder
 * `<name>`, empty GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, and the user the commands run as.
 */
export async function runnerEnv(
  work: string,
  name: string,
  job: { request: unknown; cwd: string; config: object; confinedUser: string },
) {
  await writeFile(join(work, `${name}.yml`), stringify(job.config));
  const env = {
    ...process.env,
    CONSORT_TEST_PG_URL: postgresUrl(),
    GITHUB_WORKSPACE: work,
    INPUT_REQUEST: JSON.stringify(job.request),
    "INPUT_WORKING-DIRECTORY": job.cwd,
    INPUT_CONFIG: `${name}.yml`,
    "INPUT_RESULT-DIR": name,
    GITHUB_OUTPUT: join(work, `${name}.output`),
    GITHUB_STEP_SUMMARY: join(work, `${name}.summary`),
    CONSORT_CONFINED_USER: job.confinedUser,
  };
  await writeFile(env.GITHUB_OUTPUT, "");
  await writeFile(env.GITHUB_STEP_SUMMARY, "");
  return env;
}
