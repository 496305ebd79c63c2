import { z } from "zod";

/**
 * Where each provider's database branches live, seen from the app and from the jobs it dispatches
 * (cycles, the release, the promotion). The one place that says whether they share branches: the
 * app, the jobs, the reports and the README's "Where the databases live" all read it here.
 */

/** Where database branches live: `database.provider` in .github/consort.yml, a `BranchProvider`'s kind. */
export const ProviderKind = z.enum(["local", "postgres", "lakebase"]);
type ProviderKind = z.infer<typeof ProviderKind>;

/** GitHub-hosted runners keep nothing between jobs; a self-hosted runner is a machine you run. */
export type RunnerKind = "hosted" | "self-hosted";

/** The runner kind of a workflow's `runs-on` labels: every self-hosted runner carries `self-hosted`. */
export function runnerKind(runsOn: readonly string[]): RunnerKind {
  return runsOn.includes("self-hosted") ? "self-hosted" : "hosted";
}

export interface Placement {
  provider: ProviderKind;
  runner: RunnerKind;
  /** Whether the app and the jobs work on the same database branches. */
  shared: boolean;
  /** Where the track's database branch lives. */
  trackBranch: string;
  /** Who applies the track's migrations, and to what. */
  migratedBy: string;
  /** What `consort/schema` proves. */
  schema: string;
  /** What the promotion after the merge proves. */
  promote: string;
}

const SHARED = {
  shared: true,
  migratedBy:
    "the release job, on the track's branch (with a deploy command) or on a fork of the parent (replay); each cycle on its own throwaway fork",
  schema: "the track's branch against its parent's, read by the app from the catalogs it shares with the jobs",
  promote: "the parent's branch was migrated by the promote job, with a snapshot kept until it succeeded",
} as const;

const shared = (provider: ProviderKind, runner: RunnerKind, trackBranch: string): Placement => ({
  provider,
  runner,
  ...SHARED,
  trackBranch,
});

const LAKEBASE = "a Lakebase branch of production, reached by the app and the jobs alike";
const SERVER = "a database on your server (`database.postgres.urlEnv`), reached by the app and the jobs alike";

const PLACEMENTS: Record<ProviderKind, Record<RunnerKind, Placement>> = {
  lakebase: {
    hosted: shared("lakebase", "hosted", LAKEBASE),
    "self-hosted": shared("lakebase", "self-hosted", LAKEBASE),
  },
  postgres: { hosted: shared("postgres", "hosted", SERVER), "self-hosted": shared("postgres", "self-hosted", SERVER) },
  local: {
    hosted: {
      provider: "local",
      runner: "hosted",
      shared: false,
      trackBranch:
        "the app's embedded server holds a branch nobody migrates; each job starts its own embedded server and rebuilds the databases it needs from the seed and the migrations",
      migratedBy: "nobody persistently: each job migrates only the databases it rebuilt, which vanish with its runner",
      schema:
        "the diff the release job computed between the databases it rebuilt (the parent from the seed and the default branch's migrations, the track from that parent and the track's migrations); before the release nothing is proven",
      promote: "nothing is migrated: there is no persistent parent, so the merge is the promotion",
    },
    "self-hosted": shared(
      "local",
      "self-hosted",
      "a database on the app's embedded server, which the jobs on the runner beside it reach through `database.local.urlEnv`",
    ),
  },
};

/** The placement of a configuration's branches: its provider and the runner its workflows name. */
export function placementOf(config: {
  database: { provider: ProviderKind };
  jobs: { runsOn: readonly string[] };
}): Placement {
  return PLACEMENTS[config.database.provider][runnerKind(config.jobs.runsOn)];
}

/** Every placement, provider by provider (the README's table). */
export function allPlacements(): Placement[] {
  return Object.values(PLACEMENTS).flatMap((byRunner) => Object.values(byRunner));
}

/** Where the facts of a track's checks come from, in a sentence a person reads on the PR. */
export function factSources(placement: Placement): string {
  if (placement.shared)
    return `Database facts: the app, the cycles, the release and the promotion all use the same \`${placement.provider}\` branches (${placement.runner} runner).`;
  return (
    "Database facts: the cycles and the release ran on their runner's own embedded Postgres, rebuilt from the seed and the migrations, " +
    "not on the app's branches; `consort/schema` shows the release job's diff of the databases it built, and the promotion has no persistent parent to migrate. " +
    "For one set of branches, run the jobs on a self-hosted runner beside the app (`jobs.runsOn` in .github/consort.yml)."
  );
}
