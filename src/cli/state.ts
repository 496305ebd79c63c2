import type { Command } from "commander";
import { clientFromEnv, GitHubSetupError, resolveRepository } from "../github/env-client.js";
import type { GitHubClient } from "../github/client.js";
import {
  assertCanReseal,
  createStateStore,
  ResealDeniedError,
  StateStoreError,
  TamperedStateError,
  TrackId,
} from "../state/index.js";
import { EnvSchema } from "../config/env.js";
import { appClient } from "./app-client.js";
import { CliError, printResult, progress } from "./output.js";
import { consortCommand } from "./invocation.js";

/**
 * `consort state`: look at the signed track files on `consort/state`, and let a repository admin
 * re-seal one that failed its signature (the CLI twin of the "Re-seal state" button).
 */

interface Common {
  repo?: string;
  json?: boolean;
}

function stateKey(): string {
  const key = process.env.CONSORT_STATE_KEY?.trim();
  if (!key)
    throw new CliError(
      "CONSORT_STATE_KEY is not set",
      "export the same key the app uses; without it no signature can be checked",
    );
  return key;
}

function setup(options: Common): {
  octokit: GitHubClient;
  owner: string;
  repo: string;
  key: string;
  previousKeys: readonly string[];
} {
  const key = stateKey();
  // Validated where the app's environment is (src/config/env.ts): the keys retired by a rotation.
  const previousKeys = EnvSchema.shape.CONSORT_STATE_KEYS_PREVIOUS.parse(process.env.CONSORT_STATE_KEYS_PREVIOUS);
  try {
    const { owner, repo } = resolveRepository(options.repo);
    return { octokit: clientFromEnv(), owner, repo, key, previousKeys };
  } catch (error) {
    if (error instanceof GitHubSetupError) throw new CliError(error.message, error.hint);
    throw new CliError((error as Error).message, "pass --repo owner/name");
  }
}

function trackArgument(trackId: string): string {
  if (!TrackId.safeParse(trackId).success)
    throw new CliError(`"${trackId}" is not a track id`, `list them with \`${consortCommand("state list")}\``);
  return trackId;
}

/** Turn the store's errors into CLI errors with their hints. */
async function run<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof TamperedStateError)
      throw new CliError(
        error.message,
        `a repository admin can run \`${consortCommand(`state reseal ${error.trackId}`)}\``,
      );
    if (error instanceof StateStoreError) throw new CliError(error.message, error.hint);
    if (error instanceof ResealDeniedError) throw new CliError(error.message, "ask a repository admin to re-seal");
    throw error;
  }
}

export function registerStateCommands(program: Command): void {
  const state = program
    .command("state")
    .description("Inspect the signed track state on the consort/state branch, or re-seal a tampered file (admins)");
  const withRepo = (command: Command) =>
    command
      .option("--repo <owner/name>", "the repository (default: GITHUB_REPOSITORY, else the origin remote)")
      .option("--json", "print JSON");

  withRepo(state.command("list").description("List the tracks that have a state file")).action(
    async (options: Common) => {
      const { octokit, owner, repo, key, previousKeys } = setup(options);
      const tracks = await run(() => createStateStore({ octokit, owner, repo, key, previousKeys }).list());
      printResult(options, { repository: `${owner}/${repo}`, tracks }, () =>
        tracks.length ? tracks.join("\n") : `${owner}/${repo} has no tracks on consort/state`,
      );
    },
  );

  withRepo(
    state
      .command("show")
      .argument("<track>", "the track id")
      .option("--raw", "print the file as stored and what fails in it, even when tampered (to decide on a re-seal)")
      .description("Print a track's verified state; fails if it is tampered"),
  ).action(async (trackId: string, options: Common & { raw?: boolean }) => {
    const { octokit, owner, repo, key, previousKeys } = setup(options);
    const store = createStateStore({ octokit, owner, repo, key, previousKeys });
    if (options.raw) {
      const found = await run(() => store.inspect(trackArgument(trackId)));
      if (!found)
        throw new CliError(
          `Track ${trackId} has no state file in ${owner}/${repo}`,
          `list them with \`${consortCommand("state list")}\``,
        );
      printResult(options, found, () =>
        [
          found.text.trimEnd(),
          "",
          found.problems.length
            ? `Fails verification:\n${found.problems.map((p) => `  - ${p}`).join("\n")}`
            : "Verified: schema and signature are sound.",
        ].join("\n"),
      );
      if (found.problems.length) process.exitCode = 1;
      return;
    }
    const current = await run(() => store.read(trackArgument(trackId)));
    if (!current)
      throw new CliError(
        `Track ${trackId} has no state file in ${owner}/${repo}`,
        `list them with \`${consortCommand("state list")}\``,
      );
    printResult(options, current, () => JSON.stringify(current, null, 2));
  });

  withRepo(
    state
      .command("reseal")
      .argument("<track>", "the track id")
      .option(
        "--reason <text>",
        "why the content can be trusted (kept in the file)",
        "re-sealed by a maintainer with consort state reseal",
      )
      .description(
        "Restore the newest earlier version of a track's state file that still verifies (moving consort/state back to the app's own last commit when someone else wrote on it), showing the difference. Needs admin permission, checked with GitHub for the user of GITHUB_TOKEN, and writes as the GitHub App (APP_ID and PRIVATE_KEY), because the app refuses a consort/state commit it did not write. Without the app's key, use the Re-seal state button on the failing check",
      ),
  ).action(async (trackId: string, options: Common & { reason: string }) => {
    const { octokit, owner, repo, key, previousKeys } = setup(options);
    const say = progress({});
    const result = await run(async () => {
      const { data: me } = await octokit.rest.users.getAuthenticated();
      say(`checking that ${me.login} is an admin of ${owner}/${repo}`);
      await assertCanReseal(octokit, owner, repo, me.login);
      const app = await appClient(owner, repo, "consort state reseal");
      const store = createStateStore({
        octokit: app.octokit,
        owner,
        repo,
        key,
        previousKeys,
        writer: app.services.appLogin,
      });
      return store.reseal(trackArgument(trackId), me.login, options.reason);
    });
    const text =
      result.outcome === "written"
        ? [
            `Re-sealed tracks/${trackId}.json at ${result.commit.slice(0, 7)}, restoring the version of ${result.restoredFrom.slice(0, 7)}:`,
            ...result.difference.map((line) => `  ${line}`),
          ].join("\n")
        : `tracks/${trackId}.json is sound: nothing to re-seal.`;
    printResult(
      options,
      result.outcome === "written"
        ? {
            outcome: result.outcome,
            commit: result.commit,
            restoredFrom: result.restoredFrom,
            difference: result.difference,
          }
        : { outcome: result.outcome, commit: undefined },
      () => text,
    );
  });
}
