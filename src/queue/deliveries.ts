import { randomBytes } from "node:crypto";
import { Logger, makeWorkerUtils, run, type Runner, type WorkerUtils } from "graphile-worker";
import pg from "pg";
import { z } from "zod";
import { GitHubError } from "../github/errors.js";

/**
 * The app's delivery queue (docs/ARCHITECTURE.md, Deliveries): the webhook handler stores each
 * verified delivery here and answers; workers in any number of app processes take them from the
 * app's own Postgres. Built on graphile-worker's named queues, one per repository: its queue lock
 * lives in the database, so across every process a repository's deliveries run one at a time, in
 * order of arrival (`run_at`, then id), while other repositories' run in parallel; that is one
 * writer per consort/state. (pg-boss serialises by key only with its `key_strict_fifo` policy,
 * which needs Node 22; its Node 20 versions' `singleton` policy fails the whole fetch when the
 * oldest job's key is busy, stalling every repository behind one.)
 *
 * A delivery id is stored once (the idempotency key): GitHub's retries and redeliveries of a
 * delivery already queued add nothing. A process that dies mid-job leaves graphile-worker's lock
 * on it for hours; here each process holds a Postgres advisory lock while it lives, and every
 * process frees the jobs of workers whose process no longer holds its lock, so the job runs again
 * within a sweep. Its effects stay applied once: the state records delivery ids, dispatches carry
 * their id in the run name, check runs are found by head and name.
 */

/** One webhook delivery as the queue keeps it: what Probot needs to handle it again. */
export const QueuedDelivery = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  payload: z.record(z.string(), z.unknown()),
});
export type QueuedDelivery = z.infer<typeof QueuedDelivery>;

/** A delivery that will not be tried again: what `consort reconcile` and the board show. */
export interface DeadDelivery {
  id: string;
  repository: string;
  event: string;
  attempts: number;
  reason: string;
  failedAt: Date;
}

/** Attempts at one delivery before it is a dead letter: GitHub's waits and 5xx get this many. */
const DELIVERY_ATTEMPTS = 5;
/** Times a delivery is taken up again after its process stopped mid-job before it is a dead letter. */
const DELIVERY_RESTARTS = 5;
/** The wait before the attempt after `attempt` (ms): 1 s, 2 s, 4 s, 8 s; rate limits are waited out inside the call. */
const retryDelay = (attempt: number) => 1000 * 2 ** (attempt - 1);
const TASK = "consort_delivery";
/** The queue of deliveries that name no repository (installation events): serial too. */
const NO_REPOSITORY = "(app)";
/** The advisory-lock class that marks a queue process as alive ("cq" in ASCII). */
const LIVENESS_CLASS = 0x6371;

/** The queue's own tables in the app's database, made when missing. */
const QUEUE_TABLES = [
  // Every delivery id ever stored: GitHub's redelivery of one already stored adds nothing.
  `CREATE TABLE IF NOT EXISTS public.consort_deliveries (
     id text PRIMARY KEY,
     repository text NOT NULL,
     event text NOT NULL,
     received_at timestamptz NOT NULL DEFAULT now())`,
  `CREATE TABLE IF NOT EXISTS public.consort_dead_deliveries (
     id text PRIMARY KEY REFERENCES public.consort_deliveries (id),
     repository text NOT NULL,
     event text NOT NULL,
     attempts integer NOT NULL,
     reason text NOT NULL,
     failed_at timestamptz NOT NULL DEFAULT now())`,
];

/** The repository a payload is about, as `owner/name` in lower case, else the app's own queue. */
function repositoryOf(payload: Record<string, unknown>): string {
  const repository = payload.repository as { full_name?: unknown } | undefined;
  return typeof repository?.full_name === "string" ? repository.full_name.toLowerCase() : NO_REPOSITORY;
}

/**
 * Whether trying a failed delivery again can help: a lost race, a rate limit, a GitHub failure or
 * a network error can; a refusal, a lost repository or a missing permission cannot (the track's
 * checks already say why), so those are dead letters at once.
 */
function worthRetrying(error: unknown): boolean {
  const seen = new Set<unknown>();
  const causes: unknown[] = [error];
  while (causes.length > 0) {
    const next = causes.pop();
    if (next === undefined || next === null || seen.has(next)) continue;
    seen.add(next);
    const status = (next as { status?: unknown }).status;
    if (typeof status === "number" || next instanceof GitHubError) {
      const kind = GitHubError.from(next).kind;
      if (kind === "refused" || kind === "not-found" || kind === "forbidden") return false;
    }
    causes.push((next as { cause?: unknown }).cause, ...((next as { errors?: unknown[] }).errors ?? []));
  }
  return true;
}

export interface DeliveryQueueOptions {
  /** The app's database (`DATABASE_URL`, else the embedded server's `consort_app`). */
  url: string;
  /** Deliveries this process works on at once (each repository still one at a time). */
  concurrency?: number;
  /** How often this process looks for jobs held by processes that died (ms). */
  sweepMs?: number;
  /** How often a worker looks for jobs when no notification came (ms). */
  pollMs?: number;
  /** The wait before trying a failed delivery again, by the attempt that failed (ms); tests shorten it. */
  retryDelayMs?: (attempt: number) => number;
  log?: { warn(message: string): void; error(message: string): void };
}

export interface DeliveryQueue {
  /** Store a verified delivery; false when its id was stored before (nothing is added). */
  enqueue(delivery: QueuedDelivery): Promise<boolean>;
  /** Start working: `handle` runs each delivery; a throw is retried or ends as a dead letter. */
  work(handle: (delivery: QueuedDelivery) => Promise<void>): Promise<void>;
  /** Which of these delivery ids the queue has stored. */
  stored(ids: readonly string[]): Promise<Set<string>>;
  /** The deliveries that will not be tried again, newest first (of one repository when given). */
  deadLetters(repository?: string): Promise<DeadDelivery[]>;
  /** Free the jobs of workers whose process died (each process also does this every `sweepMs`). */
  sweep(): Promise<string[]>;
  /** Stop working (running deliveries finish) and close the queue's connections. */
  stop(): Promise<void>;
}

const quietLogger = new Logger(() => () => {});

/** The dead letters in the app's database, newest first (of one repository when given). */
async function readDeadLetters(pool: pg.Pool, repository?: string): Promise<DeadDelivery[]> {
  const rows = await pool.query<{
    id: string;
    repository: string;
    event: string;
    attempts: number;
    reason: string;
    failed_at: Date;
  }>(
    `SELECT id, repository, event, attempts, reason, failed_at FROM public.consort_dead_deliveries
     WHERE $1::text IS NULL OR repository = lower($1) ORDER BY failed_at DESC, id`,
    [repository ?? null],
  );
  return rows.rows.map((row) => ({
    id: row.id,
    repository: row.repository,
    event: row.event,
    attempts: row.attempts,
    reason: row.reason,
    failedAt: row.failed_at,
  }));
}

/**
 * The dead letters of `repository` in the app's database at `url`, for `consort reconcile`: read
 * only (an app that never queued anything has none).
 */
export async function deadDeliveries(url: string, repository: string): Promise<DeadDelivery[]> {
  const pool = new pg.Pool({ connectionString: url, options: "-c search_path=pg_catalog,pg_temp", max: 1 });
  pool.on("error", () => {});
  try {
    const made = await pool.query<{ made: boolean }>(
      "SELECT to_regclass('public.consort_dead_deliveries') IS NOT NULL AS made",
    );
    return made.rows[0]!.made ? await readDeadLetters(pool, repository) : [];
  } finally {
    await pool.end();
  }
}

/** Open the delivery queue on the app's database, making its tables (graphile-worker's included). */
export async function openDeliveryQueue(options: DeliveryQueueOptions): Promise<DeliveryQueue> {
  const concurrency = options.concurrency ?? 4;
  // Each worker keeps a connection for its notifications; the rest serve enqueues and sweeps.
  const pool = new pg.Pool({
    connectionString: options.url,
    options: "-c search_path=pg_catalog,pg_temp",
    max: 2 * concurrency + 4,
    application_name: "consort-queue",
  });
  pool.on("error", () => {});
  const log = options.log ?? { warn() {}, error() {} };
  const utils: WorkerUtils = await makeWorkerUtils({ pgPool: pool, logger: quietLogger });
  // Replicas that boot together would race graphile-worker's first migration and CREATE TABLE IF
  // NOT EXISTS into duplicate-key errors: they make the tables one at a time.
  const setup = await pool.connect();
  try {
    await setup.query("SELECT pg_catalog.pg_advisory_lock($1, 0)", [LIVENESS_CLASS]);
    await utils.migrate();
    for (const statement of QUEUE_TABLES) await setup.query(statement);
  } finally {
    await setup.query("SELECT pg_catalog.pg_advisory_unlock($1, 0)", [LIVENESS_CLASS]).catch(() => {});
    setup.release();
  }

  // This process's mark of life: a session advisory lock, released by Postgres when the process dies.
  const token = randomBytes(8).toString("hex");
  let liveness: pg.PoolClient | undefined;
  const runners: Runner[] = [];
  let sweeper: NodeJS.Timeout | undefined;

  async function sweep(): Promise<string[]> {
    const locked = await pool.query<{ locked_by: string }>(
      "SELECT DISTINCT locked_by FROM graphile_worker.jobs WHERE locked_by IS NOT NULL",
    );
    const dead: string[] = [];
    const client = await pool.connect();
    try {
      for (const { locked_by: worker } of locked.rows) {
        const owner = worker.split(":")[0]!;
        if (owner === token) continue;
        const free = await client.query<{ free: boolean }>(
          "SELECT pg_catalog.pg_try_advisory_lock($1, pg_catalog.hashtext($2)) AS free",
          [LIVENESS_CLASS, owner],
        );
        if (!free.rows[0]!.free) continue;
        await client.query("SELECT pg_catalog.pg_advisory_unlock($1, pg_catalog.hashtext($2))", [
          LIVENESS_CLASS,
          owner,
        ]);
        dead.push(worker);
      }
    } finally {
      client.release();
    }
    if (dead.length > 0) {
      await utils.forceUnlockWorkers(dead);
      log.warn(`freed the deliveries held by ${dead.length} worker(s) of stopped processes: they run again now`);
    }
    return dead;
  }

  async function deadLetter(delivery: QueuedDelivery, attempts: number, error: unknown): Promise<void> {
    const reason = error instanceof Error ? error.message : String(error);
    await pool.query(
      `INSERT INTO public.consort_dead_deliveries (id, repository, event, attempts, reason)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET attempts = $4, reason = $5, failed_at = now()`,
      [delivery.id, repositoryOf(delivery.payload), delivery.name, attempts, reason.slice(0, 4000)],
    );
    log.error(`delivery ${delivery.id} (${delivery.name}) failed ${attempts} time(s) and is a dead letter: ${reason}`);
  }

  return {
    async enqueue(delivery) {
      const parsed = QueuedDelivery.parse(delivery);
      // Stored once, in one statement: the job exists exactly when the delivery's row is new.
      const added = await pool.query(
        `WITH fresh AS (
           INSERT INTO public.consort_deliveries (id, repository, event) VALUES ($1, $2, $3)
           ON CONFLICT (id) DO NOTHING RETURNING id)
         SELECT graphile_worker.add_job($4, $5::json, queue_name => $2, max_attempts => $6, job_key => $1) FROM fresh`,
        [parsed.id, repositoryOf(parsed.payload), parsed.name, TASK, JSON.stringify(parsed), DELIVERY_RESTARTS + 1],
      );
      return (added.rowCount ?? 0) > 0;
    },

    async work(handle) {
      liveness = await pool.connect();
      await liveness.query("SELECT pg_catalog.pg_advisory_lock($1, pg_catalog.hashtext($2))", [LIVENESS_CLASS, token]);
      const delay = options.retryDelayMs ?? retryDelay;
      // A failed delivery is tried again inside its job, so its repository's queue stays locked
      // meanwhile: handing the retry back to graphile-worker would unlock the queue with the job
      // scheduled later, and the repository's next delivery would overtake it. The job fails
      // only when its process stops; `attempts` then counts the restarts.
      const task = async (payload: unknown, helpers: { job: { attempts: number } }) => {
        const delivery = QueuedDelivery.parse(payload);
        if (helpers.job.attempts > DELIVERY_RESTARTS) {
          const stopped = new Error(
            `the app stopped ${helpers.job.attempts - 1} times while handling this delivery (a crash, a kill or an out-of-memory); its repository's next deliveries run without it`,
          );
          await deadLetter(delivery, helpers.job.attempts - 1, stopped);
          return;
        }
        for (let attempt = 1; ; attempt++) {
          try {
            await handle(delivery);
            return;
          } catch (error) {
            if (attempt >= DELIVERY_ATTEMPTS || !worthRetrying(error)) {
              await deadLetter(delivery, attempt, error);
              return;
            }
            log.warn(`delivery ${delivery.id} (${delivery.name}) failed (attempt ${attempt}); trying again`);
            await new Promise((resolve) => setTimeout(resolve, delay(attempt)));
          }
        }
      };
      // One runner per slot, each with its own worker id, so a sweep can tell whose process died.
      for (let slot = 0; slot < concurrency; slot++) {
        runners.push(
          await run({
            pgPool: pool,
            concurrency: 1,
            workerId: `${token}:${slot}`,
            noHandleSignals: true,
            pollInterval: options.pollMs ?? 1000,
            logger: quietLogger,
            taskList: { [TASK]: task as never },
          } as Parameters<typeof run>[0]),
        );
      }
      await sweep().catch((error: Error) =>
        log.warn(`could not look for stopped processes' deliveries: ${error.message}`),
      );
      sweeper = setInterval(
        () =>
          void sweep().catch((error: Error) =>
            log.warn(`could not look for stopped processes' deliveries: ${error.message}`),
          ),
        options.sweepMs ?? 10_000,
      );
      sweeper.unref();
    },

    async stored(ids) {
      const rows = await pool.query<{ id: string }>(
        "SELECT id FROM public.consort_deliveries WHERE id = ANY($1::text[])",
        [[...ids]],
      );
      return new Set(rows.rows.map((row) => row.id));
    },

    deadLetters: (repository) => readDeadLetters(pool, repository),

    sweep,

    async stop() {
      if (sweeper) clearInterval(sweeper);
      await Promise.all(runners.map((runner) => runner.stop()));
      runners.length = 0;
      liveness?.release();
      liveness = undefined;
      await utils.release();
      await pool.end();
    },
  };
}
