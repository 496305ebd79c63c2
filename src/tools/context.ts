import { resolve } from "node:path";
import type { ConsortConfig } from "../config/consort-config.js";
import { ConfigError, readCheckoutConfig } from "../config/load.js";
import type { BranchProvider } from "../substrate/index.js";
import { assertCheckout, ToolError } from "./errors.js";
import { localLane, replayTrack } from "./replay.js";
import { loadState, resolveTrackId, type LoadedState, type StateSource } from "./track-state.js";

export type { StateSource } from "./track-state.js";

/**
 * What every tool works from: a local checkout, where the track's state comes from, and the
 * repository's database provider (made on first use, closed with the server).
 */

export interface ToolContextOptions {
  /** The local checkout the tools work in. */
  repoPath: string;
  state: StateSource;
  /** The HMAC key of state files (CONSORT_STATE_KEY), to verify signed state. */
  stateKey?: string;
  /** Read signed state without a key to verify it (answers then say `verified: false`). */
  allowUnverifiedState?: boolean;
  /** Builds the branch provider for the repository's `database` settings (tests pass a server of their own). */
  createProvider: (database: ConsortConfig["database"]) => Promise<BranchProvider>;
  /** Progress for slow steps (forks, cycles): the stdio server sends it to stderr. */
  onProgress?: (message: string) => void;
}

export class ToolContext {
  readonly repoPath: string;
  readonly state: StateSource;
  readonly onProgress: (message: string) => void;
  private readonly stateKey: string | undefined;
  private readonly allowUnverifiedState: boolean;
  private readonly createProvider: ToolContextOptions["createProvider"];
  /** What every call shares: one provider, one queue of cycles. */
  private readonly shared: { provider?: Promise<BranchProvider>; queue: Promise<unknown> };

  constructor(options: ToolContextOptions, shared?: ToolContext["shared"]) {
    this.repoPath = resolve(options.repoPath);
    this.state = options.state;
    this.createProvider = options.createProvider;
    this.stateKey = options.stateKey || undefined;
    this.allowUnverifiedState = options.allowUnverifiedState ?? false;
    this.onProgress = options.onProgress ?? (() => {});
    this.shared = shared ?? { queue: Promise.resolve() };
  }

  /** The same context for one call whose progress also goes to `sink` (an MCP client's progress token). */
  withProgress(sink: (message: string) => void): ToolContext {
    const own = this.onProgress;
    const options: ToolContextOptions = {
      repoPath: this.repoPath,
      state: this.state,
      ...(this.stateKey ? { stateKey: this.stateKey } : {}),
      allowUnverifiedState: this.allowUnverifiedState,
      createProvider: this.createProvider,
      onProgress: (message) => {
        own(message);
        sink(message);
      },
    };
    return new ToolContext(options, this.shared);
  }

  /** The checkout's `.github/consort.yml`, validated; the defaults when there is none. */
  async config(): Promise<ConsortConfig> {
    try {
      return readCheckoutConfig(this.repoPath).config;
    } catch (error) {
      if (error instanceof ConfigError) throw new ToolError(error.summary, error.fix, "INVALID_CONFIG");
      throw error;
    }
  }

  /**
   * The state of the track a call names, or of the checkout's branch; read-only. With no state
   * source, the checkout's own track derived from its commits (no file, no token, no network).
   */
  async trackState(track: string | undefined): Promise<LoadedState> {
    await this.assertCheckout();
    const trackId = await resolveTrackId(this.repoPath, track);
    if (this.state.kind === "none") return this.replayedState(trackId);
    return loadState(this.state, { key: this.stateKey, allowUnverified: this.allowUnverifiedState }, trackId);
  }

  private async replayedState(trackId: string): Promise<LoadedState> {
    const replayed = await replayTrack(
      this.repoPath,
      await this.config(),
      new Date().toISOString(),
      this.stateKey ? { stateKey: this.stateKey } : {},
    );
    if (replayed.trackId !== trackId)
      throw new ToolError(
        `Track "${trackId}" is not the checkout's branch (${replayed.branch}), and its state can only be derived from the checkout's own commits.`,
        `Check out its branch, call again without a track, or start the server with --state or a GitHub token.`,
        "NO_STATE",
      );
    return {
      trackId,
      snapshot: replayed.snapshot,
      source: {
        kind: "commits",
        location: replayed.fromState
          ? `the app's verified state at ${replayed.fromState.head.slice(0, 12)} and ${replayed.commits} commit(s) of ${replayed.branch} since`
          : `${replayed.lane ? `${localLane(replayed)}: ` : ""}${replayed.commits} commit(s) of ${replayed.branch} since ${replayed.lane?.resumed ? "the lane's last visit" : `${replayed.base.slice(0, 12)} (merge base with ${replayed.defaultBranch})`}${replayed.stateNote ? `; ${replayed.stateNote}` : ""}`,
        verified: replayed.fromState !== undefined,
      },
    };
  }

  /** The branch provider for the configured database, created once and shared by every call. */
  provider(): Promise<BranchProvider> {
    const shared = this.shared;
    if (!shared.provider) {
      const made = this.config().then((config) => this.createProvider(config.database));
      shared.provider = made;
      // A failed start (no server, bad settings) must not stick: the next call tries again.
      made.catch(() => {
        if (shared.provider === made) shared.provider = undefined;
      });
    }
    return shared.provider;
  }

  /** Run `work` after every earlier exclusive work has finished (cycles share the working tree). */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.shared.queue.then(work, work);
    this.shared.queue = run.catch(() => undefined);
    return run;
  }

  /** Release the provider (an embedded server it started, its pools). */
  async close(): Promise<void> {
    const pending = this.shared.provider;
    this.shared.provider = undefined;
    if (pending) await (await pending.catch(() => undefined))?.close();
  }

  /** Fails with a clear message when the checkout is missing, before any tool touches it. */
  assertCheckout(): Promise<void> {
    return assertCheckout(this.repoPath);
  }
}
