import type { DatabaseConfig } from "../config/consort-config.js";
import type { ConfigReads } from "../github/config.js";
import type { SeenSequences } from "../state/index.js";
import type { BranchProvider } from "../substrate/index.js";
import type { z } from "zod";
import type { GitHub, Log } from "./github.js";
import type { RememberedComments } from "../report/index.js";

/**
 * What every handler needs besides its payload, made once at boot from the environment. Nothing
 * here holds per-track data: all of that lives on `consort/state`, so any replica serves any event.
 */
export interface AppServices {
  /** The GitHub App's id: check runs and rulesets are bound to it. */
  appId: number;
  /** CONSORT_STATE_KEY, the HMAC key of the state files. Never logged. */
  stateKey: string;
  /** CONSORT_STATE_KEYS_PREVIOUS: keys retired by a rotation, which still open the files they sealed. Never logged. */
  previousStateKeys?: readonly string[];
  /** The time now; tests freeze it. */
  clock: () => Date;
  /** Open the repository's database provider (configured by its `.github/consort.yml`). */
  openProvider: (database: z.infer<typeof DatabaseConfig>) => Promise<BranchProvider>;
  /** The newest state-file version this process read or wrote per track: an older one is refused as rolled back. */
  stateSequences?: Map<string, number>;
  /**
   * The same memory in the app's own database (src/app-store): given, it replaces `stateSequences`,
   * so a restarted process or another replica refuses a rollback too.
   */
  seenSequences?: SeenSequences;
  /** Given true, consort/state's ruleset must be in force before the app reads or writes the branch (src/protect/state-rules.ts). */
  protectedStateBranch?: boolean;
  /**
   * The app's bot login (`<slug>[bot]`), the author of every commit it writes on consort/state:
   * given, a tip of that branch the app did not write is refused (src/state/tip.ts). Asked of
   * GitHub once per process (`GET /app`, see appLoginOnce).
   */
  appLogin?: () => Promise<string>;
  /** Texts of state files by blob sha this process read or wrote, so a tip naming the blob costs no read. */
  stateBlobs?: Map<string, string>;
  /** The sticky comment this process found per PR and track, so a changed body costs one update (see upsertStickyComment). */
  stickyComments?: RememberedComments;
  /** The configuration file's answers this process keeps, so it is read conditionally (a 304 costs no rate limit). */
  configReads?: ConfigReads;
  /**
   * Texts of files at commits this process read or worked out (`owner/repo@sha:path`, null for no
   * file): a commit id names its content, so they never change, and the next push, which starts at
   * the last one's head, does not read its runner files again.
   */
  commitTexts?: Map<string, string | null>;
  /** Told after each state write (`owner/name`), so the board's open pages update at once. */
  onStateWritten?: (repository: string) => void;
  /**
   * Given, a verified delivery is stored in the app's durable queue (src/queue) and answered at
   * once; a queue worker hands it back through `handleQueued` (src/app/wire.ts) to be handled.
   */
  enqueue?: (delivery: { id: string; name: string; payload: Record<string, unknown> }) => Promise<unknown>;
}

/** What a handler takes: the parsed payload and the clients it acts through, never the framework's context. */
export interface HandlerInput<Payload> {
  octokit: GitHub;
  payload: Payload;
  log: Log;
  /** X-GitHub-Delivery: every state write is idempotent on it. */
  deliveryId: string;
  services: AppServices;
}

export type Handler<Payload> = (input: HandlerInput<Payload>) => Promise<void>;
