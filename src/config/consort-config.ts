import { z } from "zod";
import { ProviderKind } from "../contracts/placement.js";
import { FLAVOURS } from "../contracts/runners.js";
import { RoleName } from "../contracts/roles.js";
import { Granularity } from "../contracts/track.js";

/** The runners a repository may name in `runner`: every flavour the cycle reads, "unknown" aside. */
const RunnerName = z.enum(FLAVOURS.filter((f): f is Exclude<(typeof FLAVOURS)[number], "unknown"> => f !== "unknown"));

/**
 * `.github/consort.yml`, always read from the default branch so a track cannot loosen its own
 * rules (docs/ARCHITECTURE.md, Configuration). One zod schema gives the defaults, the validation and the JSON Schema.
 * This is a contract: users' repositories hold files written against it.
 */

const command = z.string().trim().min(1);
const globs = z.array(z.string().min(1)).min(1);
const githubLogin = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]|\[bot\])*$/, "a GitHub login such as octocat or my-agent[bot]");

/** The role names are declared with the roles (src/roles); `roles:` binds each to GitHub logins. */
export { ROLE_NAMES, RoleName } from "../contracts/roles.js";

const envName = z
  .string()
  .regex(/^[A-Z_][A-Z0-9_]*$/, "an environment variable name in capitals, e.g. CONSORT_LOCAL_URL");

const LocalProviderSettings = z
  .object({
    /** Where the embedded server keeps its data; default the postgres folder of CONSORT_HOME (`~/.consort`, or `/var/lib/consort` as root). */
    dataDir: z.string().min(1).optional(),
    /**
     * Name of the environment variable (a repository secret) that holds the app's embedded server
     * URL, for jobs on a self-hosted runner beside the app: they use that server instead of starting
     * their own, so the app, the cycles and the promotion share one set of branches. Default
     * `CONSORT_LOCAL_URL`.
     */
    urlEnv: envName.optional(),
  })
  .strict();

const PostgresProviderSettings = z
  .object({
    /** Name of the environment variable holding the server URL (never the URL itself: it has a password). */
    urlEnv: envName.default("CONSORT_POSTGRES_URL"),
    /** The database that holds the root branch. */
    rootDatabase: z.string().min(1).default("consort_root"),
  })
  .strict();

export const LakebaseProviderSettings = z
  .object({
    /** Workspace host, e.g. `dbc-1234.cloud.databricks.com`, or a URL with scheme and port (a proxy, a private endpoint). */
    host: z.string().min(1),
    /** The Lakebase project id. */
    project: z.string().regex(/^[a-z][a-z0-9-]{0,62}$/),
    /** Environment variable with a token; or client id/secret variables for OAuth M2M. */
    tokenEnv: z.string().default("DATABRICKS_TOKEN"),
    clientIdEnv: z.string().default("DATABRICKS_CLIENT_ID"),
    clientSecretEnv: z.string().default("DATABRICKS_CLIENT_SECRET"),
    /** The Postgres user to log in as (an e-mail or a service principal's application id). */
    userEnv: z.string().default("DATABRICKS_POSTGRES_USER"),
    /** How long to wait for a long-running operation before giving up, in seconds. */
    operationTimeoutSeconds: z.number().int().min(10).max(1800).default(120),
  })
  .strict();

export const DatabaseConfig = z
  .object({
    provider: ProviderKind.default("local"),
    local: LocalProviderSettings.default({}),
    postgres: PostgresProviderSettings.default({ urlEnv: "CONSORT_POSTGRES_URL", rootDatabase: "consort_root" }),
    lakebase: LakebaseProviderSettings.optional(),
    /** Fills the root branch once on `local` and `postgres` (e.g. restore a masked dump). */
    seed: command.optional(),
  })
  .strict()
  .superRefine((db, ctx) => {
    if (db.provider === "lakebase" && !db.lakebase) {
      ctx.addIssue({
        code: "custom",
        path: ["lakebase"],
        message: "provider is lakebase: set database.lakebase.host and database.lakebase.project",
      });
    }
  });

/** The variable that hands the app's embedded server to jobs on a self-hosted runner beside it. */
export function localUrlEnv(database: z.output<typeof DatabaseConfig>): string {
  return database.local.urlEnv ?? "CONSORT_LOCAL_URL";
}

/**
 * Every environment variable the database providers read, whichever provider is chosen: the one
 * list the workflows `consort init` writes pass to the Consort step, and (the secret ones) the
 * cycle keeps from the project's commands and redacts from their output. Names not configured
 * are the schema's defaults.
 */
export function providerEnv(database: z.output<typeof DatabaseConfig>): Array<{ name: string; secret: boolean }> {
  const lakebase = LakebaseProviderSettings.shape;
  const named = (configured: string | undefined, field: z.ZodDefault<z.ZodString>) =>
    configured ?? field.parse(undefined);
  return [
    { name: localUrlEnv(database), secret: true },
    { name: database.postgres.urlEnv, secret: true },
    { name: named(database.lakebase?.tokenEnv, lakebase.tokenEnv), secret: true },
    { name: named(database.lakebase?.clientIdEnv, lakebase.clientIdEnv), secret: false },
    { name: named(database.lakebase?.clientSecretEnv, lakebase.clientSecretEnv), secret: true },
    { name: named(database.lakebase?.userEnv, lakebase.userEnv), secret: false },
  ];
}

const CommandsConfig = z
  .object({
    /**
     * Installs the project's dependencies in the checkout, confined like every other command (its
     * install scripts are the track's code). Unset: `npm ci --no-audit --no-fund` where there is a
     * package-lock.json, else nothing.
     */
    install: command.optional(),
    /** Applies migrations to the database in DATABASE_URL. */
    migrate: command.default("npm run migrate"),
    /** Runs the tests against DATABASE_URL and writes a JUnit report to `junit`. */
    test: command.default("npx vitest run --reporter=junit --outputFile=junit.xml"),
    /** Deploys a preview of the track (optional; without it the release verification replays migrations). */
    deploy: command.optional(),
    /** Verifies a deployed preview, e.g. a smoke test against PREVIEW_URL. */
    verify: command.optional(),
    /**
     * The job's environment variables the commands may see, besides PATH, HOME, CI and the
     * DATABASE_URL Consort sets: nothing else reaches them (no runtime token, no inputs, no
     * provider secrets). Names only; the values come from the workflow's `env`.
     */
    env: z
      .array(
        z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name")
          .refine((name) => !/^(ACTIONS_|INPUT_|CONSORT_)|^GITHUB_TOKEN$/.test(name), {
            message: "the runner's tokens, the job's inputs and Consort's own variables never reach the commands",
          }),
      )
      .default([]),
  })
  .strict();

const PathsConfig = z
  .object({
    /** Test files: the navigator's at RED, frozen once their RED is verified. */
    tests: globs.default(["test/**", "tests/**", "**/*.test.*", "**/*.spec.*", "**/*_test.*", "**/test_*.py"]),
    /** Application code: the driver's at GREEN, repair and refactor. */
    code: globs.default(["src/**", "lib/**", "app/**", "package.json", "package-lock.json"]),
    /** Migrations: the driver's at GREEN (the DBA designs them in db-design.json). */
    migrations: globs.default(["migrations/**", "db/migrations/**"]),
  })
  .strict();

export const ApproversConfig = z
  .object({
    users: z.array(githubLogin).default([]),
    /** Team slugs in the repository's organisation. */
    teams: z.array(z.string().min(1)).default([]),
    /** Also accept CODEOWNERS of `.consort/`. */
    codeowners: z.boolean().default(true),
  })
  .strict();

const AgentsConfig = z
  .object({
    enabled: z.boolean().default(false),
    /** The agent command run by consort-agent.yml; it receives the role prompt and NextAction. */
    command: command.optional(),
  })
  .strict()
  .superRefine((agents, ctx) => {
    if (agents.enabled && !agents.command) {
      ctx.addIssue({ code: "custom", path: ["command"], message: "agents are enabled: set agents.command" });
    }
  });

/** A `runs-on` label: a GitHub-hosted image (`ubuntu-latest`) or a self-hosted runner's label. */
const runnerLabel = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "a runner label such as ubuntu-latest or self-hosted");

const JobsConfig = z
  .object({
    /**
     * The `runs-on` labels of the workflows `consort init` writes. `[ubuntu-latest]`: a GitHub-hosted
     * runner, which keeps nothing between jobs. A list with `self-hosted` (e.g. `[self-hosted, consort]`):
     * a runner you run; with the `local` provider it must sit beside the app and reach its embedded
     * server (`database.local.urlEnv`), so the jobs use the app's branches.
     */
    runsOn: z.array(runnerLabel).min(1).default(["ubuntu-latest"]),
  })
  .strict();

/**
 * Experiment branches: a place to try a migration or an approach on real data with its own
 * database branch, without a design lane; an experiment never merges (issue #37).
 */
const ExperimentsConfig = z
  .object({
    /** Branches whose name starts with this are experiments. */
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9._-]+\/$/, "a branch-name prefix ending in /, such as experiment/")
      .default("experiment/"),
    /** An experiment idle this long has its database branch dropped. */
    ttlDays: z.number().int().min(1).max(365).default(7),
    /** At most this many experiments per repository; the next is refused with the reason. */
    max: z.number().int().min(1).max(100).default(10),
  })
  .strict();

/**
 * Maintenance branches (dependency bumps, CI changes): no design lane, the default branch's whole
 * frozen suite verified on a throwaway database, a person approves the promotion (issue #37).
 */
const MaintenanceConfig = z
  .object({
    /** Branch-name globs that are maintenance branches. */
    branches: globs.default(["dependabot/**", "renovate/**"]),
    /** Files a maintenance change may touch besides dependency manifests and lockfiles; a PR touching only these is maintenance too. */
    paths: z.array(z.string().min(1)).default([".github/dependabot.yml", ".github/renovate.json", "renovate.json"]),
  })
  .strict();

export const ConsortConfig = z
  .object({
    version: z.literal(1).default(1),
    database: DatabaseConfig.default(() => DatabaseConfig.parse({})),
    commands: CommandsConfig.default(() => CommandsConfig.parse({})),
    /**
     * Where the test command writes its JUnit XML: a file, a folder of reports (ending in "/", or
     * an existing folder) or a glob, relative to the repository root.
     */
    junit: z.string().min(1).default("junit.xml"),
    /** The runner that writes the report, when its report alone cannot tell (a jest-junit or mocha report whose title was renamed). */
    runner: RunnerName.optional(),
    paths: PathsConfig.default(() => PathsConfig.parse({})),
    /** Bind roles to GitHub identities: a commit claiming a bound role must be authored by one of them. */
    roles: z.partialRecord(RoleName, z.array(githubLogin).min(1)).default({}),
    approvers: ApproversConfig.default(() => ApproversConfig.parse({})),
    /** One build cycle per test, or per acceptance criterion. */
    granularity: Granularity.default("test"),
    /** Failed GREEN verifications allowed before the track is blocked for a person to decide. */
    repairBound: z.number().int().min(1).max(10).default(3),
    agents: AgentsConfig.default(() => AgentsConfig.parse({})),
    jobs: JobsConfig.default({ runsOn: ["ubuntu-latest"] }),
    cycle: z
      .object({
        /** A dispatched cycle that has not reported after this long fails its check. */
        timeoutMinutes: z.number().int().min(1).max(360).default(30),
      })
      .strict()
      .default({ timeoutMinutes: 30 }),
    experiments: ExperimentsConfig.default(() => ExperimentsConfig.parse({})),
    maintenance: MaintenanceConfig.default(() => MaintenanceConfig.parse({})),
  })
  .strict();

export type ConsortConfig = z.output<typeof ConsortConfig>;
export type ConsortConfigInput = z.input<typeof ConsortConfig>;

/** The configuration a repository gets with no `.github/consort.yml`. */
export function defaultConfig(): ConsortConfig {
  return ConsortConfig.parse({});
}
