import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Writable } from "node:stream";
import { pino } from "pino";
import { Probot, ProbotOctokit } from "probot";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { createConsortApp } from "../../../src/index.js";
import type { AppServices } from "../../../src/app/services.js";
import { ConsortConfig, type RoleName } from "../../../src/config/consort-config.js";
import { ROLE_NAMES } from "../../../src/contracts/roles.js";
import { CycleRequest, CYCLE_SUMMARY_FILE, exitCodeFor, runCycle, type CycleResult } from "../../../src/cycle/index.js";
import {
  DEPLOY_EVIDENCE_FILE,
  DeployRequest,
  PROMOTE_RESULT_FILE,
  PromoteRequest,
  runDeploy,
  runPromote,
  type DeployEvidence,
  type PromoteResult,
} from "../../../src/deploy/index.js";
import { nextAction, restoreSnapshot } from "../../../src/orchestrator/index.js";
import type { NextAction, TrackSnapshot } from "../../../src/orchestrator/types.js";
import {
  expand,
  keptTexts,
  openStateFile,
  storedFormOf,
  unitRecordPath,
  UnitRecord,
  withRecords,
  trackIdForBranch,
  trackPath,
  unsealed,
  type TrackState,
  type TrackStateFile,
} from "../../../src/state/index.js";

/**
 * A state file as a reader with its history sees it: its texts put back from those the app (in this
 * process) compacted, and every finished unit's record merged in, found where the app put it: inline
 * in this version, in the earlier version of the file it names by blob id, or in a record file on
 * consort/state.
 */
function expandKept(
  file: TrackStateFile,
  recordAt: (path: string) => string | undefined,
  blobAt: (sha: string) => string | undefined,
): TrackState {
  const stored = unsealed(file);
  const state = expand(stored, keptTexts).state;
  const form = storedFormOf(stored);
  if (!form) return state;
  const records = Object.entries(form.records).map(([unit, { n, heldIn }]) => {
    const inline = form.pending?.[unit];
    if (inline) return inline;
    const path = heldIn ? `${trackPath(file.trackId)} as blob ${heldIn}` : unitRecordPath(file.trackId, n);
    const text = heldIn ? blobAt(heldIn) : recordAt(path);
    if (text === undefined) throw new Error(`${path} is missing on consort/state`);
    const json: unknown = JSON.parse(text);
    const held = heldIn
      ? (json as { snapshot?: { stored?: { pending?: Record<string, unknown> } } }).snapshot?.stored?.pending?.[unit]
      : json;
    if (held === undefined) throw new Error(`${path} holds no record of unit ${unit}`);
    return UnitRecord.parse(held);
  });
  return withRecords(state, records, keptTexts);
}
import { createProvider } from "../../../src/substrate/index.js";
import { ensureLocalServer, stopLocalServer } from "../../../src/substrate/local-server.js";
import { placementOf } from "../../../src/contracts/placement.js";
import { PostgresBranchProvider } from "../../../src/substrate/postgres-provider.js";
import type { BranchProvider } from "../../../src/substrate/provider.js";
import { TEST_WEBHOOK_SECRET, testPrivateKey } from "../../helpers/github.js";
import { postgresUrl } from "../../helpers/postgres.js";
import { webhookPayload } from "../../helpers/webhooks.js";
import { BEFORE, EXAMPLE, STORIES } from "./feature.js";
import { GitRepo, type GitIdentity } from "./git-repo.js";
import {
  GITHUB_COMMIT_FILES_CAP,
  GITHUB_PUSH_COMMITS_CAP,
  GitHubWorld,
  idOf,
  type CheckRun,
  type Pull,
  type Review,
  type WorkflowRun,
  type WorldSnapshot,
} from "./github-world.js";

/**
 * One repository on the GitHub double with the Consort app installed, driven through
 * `probot.receive` exactly as GitHub would deliver webhooks. Agents push commits (real git
 * commits in the world's repository), people review, and every dispatched cycle is RUN FOR REAL
 * by the cycle runner on the run's embedded Postgres, its result uploaded as a zipped artifact
 * and fed back through `workflow_run.completed`.
 */

const here = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = resolve(here, "../../..");
const STATE_KEY = "e2e-state-key-0123456789abcdef0123456789abcdef";
const NOW = new Date("2026-03-01T12:00:00.000Z");

/** Who plays each part. Agents are bots; people have logins with their permission. */
export const AGENTS: Record<RoleName, GitIdentity> = Object.fromEntries(
  ROLE_NAMES.map((role) => [
    role,
    { name: `${role} agent`, email: `${role}-agent@users.noreply.github.com`, login: `${role}-agent` },
  ]),
) as Record<RoleName, GitIdentity>;
export const LEAD = "lead-dev";
export const OUTSIDER = "drive-by";
/** Someone without the app's name who got past the consort/state ruleset and pushes there. */
export const OUTSIDER_PUSHER: GitIdentity = {
  name: "Someone",
  email: `${OUTSIDER}@users.noreply.github.com`,
  login: OUTSIDER,
};

export interface ScenarioOptions {
  /** Extra settings merged into the example's `.github/consort.yml` on main. */
  config?: Record<string, unknown>;
  /** The track's git branch; unique per scenario so database branches never collide. */
  branch?: string;
  /** Stand-in for `services.openProvider` (e.g. a provider that fails). */
  openProvider?: AppServices["openProvider"];
  clock?: () => Date;
  /**
   * Where the dispatched jobs run. `beside-the-app` (the default): a self-hosted runner on the
   * app's host (`jobs.runsOn: [self-hosted, consort]`), on the app's own server. `another-machine`:
   * GitHub-hosted runners (the default `jobs.runsOn`), whose jobs use a different embedded server
   * (its own data folder and port) and never see the app's branches.
   */
  jobs?: "beside-the-app" | "another-machine";
  /**
   * Another track on `beside`'s repository: the same GitHub double, app, clock and database root,
   * its own branch and PR (features in flight side by side). `beside` disposes what they share.
   */
  beside?: Scenario;
}

/** The other machine's embedded server, started once per test file and stopped by `stopOtherMachine`. */
let otherMachine: Promise<{ dataDir: string; url: string }> | undefined;

function otherMachineServer(): Promise<{ dataDir: string; url: string }> {
  otherMachine ??= (async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "consort-e2e-runner-"));
    // As root the server runs as the `postgres` user, who must be able to enter the folder.
    chmodSync(dataDir, 0o755);
    const server = await ensureLocalServer({ dataDir, throwaway: true });
    return { dataDir, url: server.url("postgres") };
  })();
  return otherMachine;
}

/** Stop the other machine's server, if a scenario started it, and delete its folder. */
export async function stopOtherMachine(): Promise<void> {
  if (!otherMachine) return;
  const { dataDir } = await otherMachine;
  otherMachine = undefined;
  try {
    await stopLocalServer(dataDir);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export interface Checkpoint {
  world: WorldSnapshot;
  ran: number[];
  pull: Pull | undefined;
  now: Date;
  logs: number;
}

export class Scenario {
  readonly world: GitHubWorld;
  readonly repo: GitRepo;
  readonly probot: Probot;
  readonly services: AppServices;
  readonly branch: string;
  readonly trackId: string;
  /** The database all of this scenario's branches live under (one root per scenario). */
  readonly rootDatabase: string;
  readonly config: ConsortConfig;
  readonly jobs: "beside-the-app" | "another-machine";
  private checkoutDir: string | undefined;
  private readonly ran = new Set<number>();
  private readonly providers: BranchProvider[] = [];
  now: Date = NOW;
  pull: Pull | undefined;
  /** Log lines the app wrote (warnings and errors), to assert what it said. */
  readonly logs: string[] = [];
  /** Every webhook delivered, by delivery id, to deliver one again. */
  private readonly delivered = new Map<string, { name: string; payload: Record<string, unknown> }>();

  /** The scenario whose repository, app and database root this one shares, if any. */
  private readonly beside: Scenario | undefined;

  constructor(options: ScenarioOptions = {}) {
    this.beside = options.beside;
    if (options.beside) {
      const o = options.beside;
      ({ rootDatabase: this.rootDatabase, jobs: this.jobs, config: this.config, repo: this.repo } = o);
      ({ world: this.world, services: this.services, probot: this.probot, now: this.now } = o);
      ({ ran: this.ran, logs: this.logs, delivered: this.delivered } = o);
      this.branch = options.branch ?? `stock-alongside-${randomBytes(3).toString("hex")}`;
      this.trackId = trackIdForBranch(this.branch);
      return;
    }
    // A valid branch id as well as a database name: promotion names its snapshot after the root
    // (with the default `consort_root` that fails; see the report to the lead).
    this.rootDatabase = `e2eroot${randomBytes(4).toString("hex")}`;
    this.branch = options.branch ?? `stock-by-location-${randomBytes(3).toString("hex")}`;
    this.trackId = trackIdForBranch(this.branch);
    const example = parseYaml(readFileSync(join(EXAMPLE, ".github/consort.yml"), "utf8")) as Record<string, unknown>;
    this.jobs = options.jobs ?? "beside-the-app";
    const runners = this.jobs === "beside-the-app" ? { jobs: { runsOn: ["self-hosted", "consort"] } } : {};
    const onMain = { ...example, approvers: { users: [LEAD] }, ...runners, ...(options.config ?? {}) };
    this.config = ConsortConfig.parse(onMain);
    // main: StockFlow with S1 built, no design artifacts, nothing that lists a location, and no
    // tests (a refactor cycle refuses test files the track did not freeze, even the trunk's own).
    this.repo = GitRepo.fromDirectory(EXAMPLE, { leaveOut: [".consort", "test"] });
    this.repo.commitOn(
      "main",
      { name: "Lead", email: `${LEAD}@users.noreply.github.com`, login: LEAD },
      "Install Consort",
      {
        ...BEFORE,
        ".github/consort.yml": stringifyYaml(onMain),
        // The workflows `consort init` installs: the app dispatches them at main.
        ...Object.fromEntries(
          readdirSync(join(REPO_ROOT, "templates"))
            .filter((f) => /^consort-.*\.yml$/.test(f))
            .map((f) => [`.github/workflows/${f}`, readFileSync(join(REPO_ROOT, "templates", f), "utf8")]),
        ),
      },
    );
    this.world = new GitHubWorld(this.repo);
    this.world.permissions.set(LEAD, "write");
    for (const agent of Object.values(AGENTS)) this.world.permissions.set(agent.login, "write");
    this.services = {
      appId: this.world.appId,
      stateKey: STATE_KEY,
      clock: options.clock ?? (() => this.now),
      openProvider: options.openProvider ?? (() => this.openProvider()),
      // One app process: it remembers the newest state version it read or wrote, as the real one does.
      stateSequences: new Map(),
      stateBlobs: new Map(),
      appLogin: async () => this.world.appLogin,
    };
    // What the app logs (info and up) is kept, to assert what it said about ignored events.
    const sink = new Writable({
      write: (chunk: Buffer, _encoding, done) => {
        for (const line of chunk.toString("utf8").split("\n").filter(Boolean))
          this.logs.push(String((JSON.parse(line) as { msg?: unknown }).msg ?? line));
        done();
      },
    });
    this.probot = new Probot({
      appId: this.world.appId,
      privateKey: testPrivateKey(),
      secret: TEST_WEBHOOK_SECRET,
      log: pino({ level: "info" }, sink),
      Octokit: ProbotOctokit.defaults((o: Record<string, unknown>) => ({
        ...o,
        retry: { enabled: false },
        throttle: { enabled: false },
      })),
    });
    void this.probot.load(createConsortApp(this.services));
  }

  /** Where the scenario stands now, to fork several scenarios from (the databases are not copied). */
  checkpoint(): Checkpoint {
    return {
      world: this.world.save(),
      ran: [...this.ran],
      pull: this.pull ? { ...this.pull } : undefined,
      now: this.now,
      logs: this.logs.length,
    };
  }

  restore(checkpoint: Checkpoint): void {
    // Going back in time is a fresh app process: it has seen no newer state version yet.
    this.services.stateSequences?.clear();
    this.world.restore(checkpoint.world);
    this.ran.clear();
    for (const id of checkpoint.ran) this.ran.add(id);
    this.pull = checkpoint.pull ? this.world.pulls.find((p) => p.number === checkpoint.pull!.number) : undefined;
    this.now = checkpoint.now;
    this.logs.length = checkpoint.logs;
  }

  /** The postgres provider over the run's shared embedded server, under this scenario's root. */
  async openProvider(): Promise<BranchProvider> {
    const provider = await createProvider(
      {
        ...this.config.database,
        provider: "postgres",
        postgres: { urlEnv: "CONSORT_E2E_PG_URL", rootDatabase: this.rootDatabase },
      },
      { env: { CONSORT_E2E_PG_URL: postgresUrl() } },
    );
    this.providers.push(provider);
    return provider;
  }

  /**
   * The database the dispatched jobs open: the app's server beside the app, or the other
   * machine's, where this scenario's root starts empty and only the jobs' rebuilds fill it.
   */
  async openJobProvider(): Promise<BranchProvider> {
    if (this.jobs === "beside-the-app") return this.openProvider();
    const server = await otherMachineServer();
    const provider = new PostgresBranchProvider({
      kind: "local",
      adminUrl: server.url,
      rootDatabase: this.rootDatabase,
    });
    this.providers.push(provider);
    return provider;
  }

  get payloadBase(): Record<string, unknown> {
    return {
      repository: this.world.repositoryPayload(),
      installation: { id: this.world.installationId, node_id: "I" },
      sender: { login: LEAD, id: idOf(LEAD), type: "User" },
    };
  }

  /** Deliver one webhook as GitHub would (the delivery id is returned, to deliver it again). */
  async deliver(name: string, payload: Record<string, unknown>, deliveryId: string = randomUUID()): Promise<string> {
    this.delivered.set(deliveryId, { name, payload });
    this.world.deliveryStarted();
    try {
      await this.probot.receive({ id: deliveryId, name, payload } as Parameters<Probot["receive"]>[0]);
    } finally {
      this.world.deliveryEnded();
    }
    return deliveryId;
  }

  /**
   * Deliver an earlier webhook again: GitHub redelivers with the same id; anyone who captured the
   * signed body may send it with a new one (the delivery id is not signed).
   */
  async redeliver(deliveryId: string, asNew = false): Promise<string> {
    const earlier = this.delivered.get(deliveryId);
    if (!earlier) throw new Error(`no delivery ${deliveryId} to deliver again`);
    return this.deliver(earlier.name, earlier.payload, asNew ? randomUUID() : deliveryId);
  }

  /** A person creates the track's branch from main. */
  async createBranch(): Promise<string> {
    this.repo.setBranch(this.branch, this.repo.branchHead("main")!);
    return this.createBranchEvent();
  }

  /** GitHub's `create` for the track's branch, wherever the branch now stands. */
  async createBranchEvent(): Promise<string> {
    return this.deliver("create", {
      ...webhookPayload("create"),
      ...this.payloadBase,
      ref: this.branch,
      ref_type: "branch",
      master_branch: "main",
      pusher_type: "user",
    });
  }

  /**
   * An agent pushes one commit: `files` maps paths to their new text (null deletes). The message
   * carries `Consort-Role: <role>` unless `trailer` is false. Returns the commit's sha.
   */
  commit(
    role: RoleName,
    files: Record<string, string | null>,
    options: { author?: GitIdentity; trailer?: boolean | string; subject?: string } = {},
  ): string {
    const author = options.author ?? AGENTS[role];
    const trailer =
      options.trailer === false
        ? ""
        : `\n\nConsort-Role: ${typeof options.trailer === "string" ? options.trailer : role}`;
    return this.repo.commitOn(
      this.branch,
      author,
      `${options.subject ?? `${role}: ${Object.keys(files).join(", ")}`}${trailer}\n`,
      files,
    ).sha;
  }

  /**
   * Push the commits made since `before` (one push event, oldest commit first). GitHub names who
   * pushed as the event's `sender`: by default the newest commit's author (an agent pushes its own
   * step), or `pusher`.
   */
  async push(
    before: string,
    options: { deliveryId?: string; forced?: boolean; pusher?: string } = {},
  ): Promise<string> {
    const payload = this.pushPayload(before, options);
    const pusher = payload.sender.login;
    const delivery = await this.deliver("push", payload, options.deliveryId);
    // Where protection asks for it, GitHub dismisses the approvals the push made stale.
    for (const review of this.world.dismissStaleReviews(this.branch, payload.after, pusher))
      await this.deliverReview(review, "dismissed", pusher);
    return delivery;
  }

  /**
   * The `push` payload GitHub sends for the branch moving from `before` to its head, with GitHub's
   * habits: at most 2048 commits listed (the newest), at most 3000 paths a commit (added, then
   * removed, then modified), a merge commit's lists empty, and `distinct` false for a commit some
   * other branch already holds (the default branch's, brought in by "Update branch").
   */
  pushPayload(
    before: string,
    options: { forced?: boolean; pusher?: string } = {},
  ): Record<string, unknown> & {
    commits: unknown[];
    after: string;
    sender: { login: string; id: number; type: string };
  } {
    const after = this.repo.branchHead(this.branch)!;
    const shas = this.repo.revList(after, before).slice(-GITHUB_PUSH_COMMITS_CAP);
    const elsewhere = this.repo
      .saveRefs()
      .filter(([branch]) => branch !== this.branch)
      .map(([, head]) => head);
    const commits = shas.map((sha) => {
      const info = this.repo.commitInfo(sha)!;
      const login = info.author.email.split("@")[0]!;
      const changes = this.repo.changesOf(sha);
      let room = GITHUB_COMMIT_FILES_CAP;
      const capped = (paths: string[]) => {
        const kept = info.parents.length > 1 ? [] : paths.slice(0, Math.max(room, 0));
        room -= kept.length;
        return kept;
      };
      return {
        id: sha,
        tree_id: info.tree,
        distinct: !elsewhere.some((head) => this.repo.isAncestor(sha, head)),
        message: info.message,
        timestamp: info.author.date,
        url: "",
        author: { name: info.author.name, email: info.author.email, username: login },
        committer: { name: info.author.name, email: info.author.email, username: login },
        added: capped(changes.added),
        removed: capped(changes.removed),
        modified: capped(changes.modified),
      };
    });
    const pusher = options.pusher ?? commits.at(-1)?.author.username ?? LEAD;
    return {
      ...webhookPayload("push"),
      ...this.payloadBase,
      ref: `refs/heads/${this.branch}`,
      before,
      after,
      created: false,
      deleted: false,
      forced: options.forced ?? false,
      commits,
      head_commit: commits.at(-1) ?? null,
      sender: { login: pusher, id: idOf(pusher), type: pusher.endsWith("[bot]") ? "Bot" : "User" },
      pusher: { name: pusher },
    };
  }

  /**
   * A person clicks "Update branch" on the PR: GitHub merges the default branch's head into the
   * track's branch (a merge commit made by the person) and sends the push. Returns the merge's sha.
   * GitHub refuses when both sides changed a file it cannot merge; `resolved` gives those files'
   * texts, as the person writes them in GitHub's conflict editor (the same merge commit).
   */
  async updateBranch(login = LEAD, resolved: Record<string, string | null> = {}): Promise<string> {
    const before = this.head();
    const sha = this.repo.mergeOn(
      this.branch,
      this.repo.branchHead(this.world.defaultBranch)!,
      `Merge branch '${this.world.defaultBranch}' into ${this.branch}\n`,
      { name: login, email: `${login}@users.noreply.github.com`, login },
      resolved,
    );
    await this.push(before, { pusher: login });
    return sha;
  }

  /** One agent step: commit, then push it. */
  async step(
    role: RoleName,
    files: Record<string, string | null>,
    options: Parameters<Scenario["commit"]>[2] = {},
  ): Promise<string> {
    const before = this.head();
    const sha = this.commit(role, files, options);
    await this.push(before);
    return sha;
  }

  /** Move the branch back to `sha` (as `git push --force-with-lease` does) and tell the app. */
  async resetTo(sha: string): Promise<void> {
    const before = this.head();
    this.repo.setBranch(this.branch, sha, before);
    await this.deliver("push", {
      ...webhookPayload("push"),
      ...this.payloadBase,
      ref: `refs/heads/${this.branch}`,
      before,
      after: sha,
      created: false,
      deleted: false,
      forced: true,
      commits: [],
      head_commit: null,
      pusher: { name: LEAD },
    });
  }

  head(): string {
    return this.repo.branchHead(this.branch)!;
  }

  /** Where most tracks' tests start: the branch, its pull request, and the Product Owner's stories pushed. */
  async openTrack(): Promise<void> {
    await this.createBranch();
    await this.openPull();
    await this.step("product-owner", { ".consort/spec.json": STORIES });
  }

  async openPull(): Promise<Pull> {
    this.pull = this.world.openPull(this.branch, LEAD);
    await this.deliver("pull_request", {
      ...webhookPayload("pull_request", "opened"),
      ...this.payloadBase,
      action: "opened",
      number: this.pull.number,
      pull_request: this.world.pullPayload(this.pull),
    });
    return this.pull;
  }

  /** A person submits a review on the PR (on the head unless `commit` says otherwise); returns the review id. */
  async review(
    login: string,
    state: "APPROVED" | "CHANGES_REQUESTED" | "COMMENTED",
    commit = this.head(),
    pull?: Pull,
  ): Promise<number> {
    const on = pull ?? this.pull ?? (await this.openPull());
    const review = this.world.addReview(on, login, state, commit);
    this.lastReviewDelivery = await this.deliverReview(review, "submitted", login, state.toLowerCase());
    return review.id;
  }

  /** `login` presses the button `identifier` (e.g. `reseal`) on a check run: GitHub's `requested_action` delivery. */
  async pressCheckAction(check: CheckRun, identifier: string, login: string): Promise<string> {
    return this.deliver("check_run", {
      ...this.payloadBase,
      sender: { login, id: idOf(login), type: "User" },
      action: "requested_action",
      check_run: {
        id: check.id,
        name: check.name,
        head_sha: check.head_sha,
        external_id: null,
        app: { id: this.world.appId },
        check_suite: { head_branch: this.branch },
      },
      requested_action: { identifier },
    });
  }

  /** The delivery id of the last `review()`, to deliver it again. */
  lastReviewDelivery: string | undefined;

  /** A person with the right dismisses a review (GitHub requires a message). */
  async dismissReview(reviewId: number, by = LEAD): Promise<void> {
    const review = this.world.reviews.find((r) => r.id === reviewId)!;
    this.world.dismissReview(review, by);
    await this.deliverReview(review, "dismissed", by);
  }

  /** The `pull_request_review` webhook GitHub sends for `review` (its state as the payload spells it). */
  async deliverReview(
    review: Review,
    action: "submitted" | "dismissed",
    sender: string,
    state = action === "dismissed" ? "dismissed" : review.state.toLowerCase(),
  ): Promise<string> {
    const pull = this.world.pulls.find((p) => p.number === review.pull_number)!;
    return this.deliver("pull_request_review", {
      ...webhookPayload("pull_request_review", action),
      ...this.payloadBase,
      sender: { login: sender, id: idOf(sender), type: sender.endsWith("[bot]") ? "Bot" : "User" },
      action,
      review: {
        id: review.id,
        node_id: "PRR",
        user: { login: review.login, id: idOf(review.login), type: "User" },
        body: null,
        state,
        commit_id: review.commit_id,
        submitted_at: review.submitted_at,
        html_url: "",
        pull_request_url: "",
        author_association: "MEMBER",
        _links: {},
      },
      pull_request: this.world.pullPayload(pull),
    });
  }

  /** The track's state as the app last committed it on consort/state (verified with the app's keys). */
  state(): TrackState {
    const text = this.world.stateFileText(this.trackId);
    if (!text) throw new Error(`no state file for ${this.trackId} on consort/state`);
    return expandKept(
      openStateFile(
        text,
        this.services.stateKey,
        {
          trackId: this.trackId,
          path: trackPath(this.trackId),
          repository: this.world.fullName,
          commit: this.world.stateHead()!,
        },
        this.services.previousStateKeys,
      ),
      (path) => this.world.stateBranchFile(path),
      (sha) => this.world.blobText(sha),
    );
  }

  snapshot(): TrackSnapshot {
    return restoreSnapshot(this.state().snapshot);
  }

  next(): NextAction {
    return nextAction(this.snapshot(), this.config);
  }

  /** The dispatches not yet run, oldest first. */
  pendingRuns(): Array<{ runId: number; workflow: string; request: unknown }> {
    return this.world.dispatches.filter((d) => !this.ran.has(d.runId));
  }

  /** This track's oldest dispatch of `workflow` not yet run (a track beside it has its own). */
  private nextRun(workflow: string): { runId: number; workflow: string; request: unknown } | undefined {
    return this.pendingRuns().find(
      (d) => d.workflow === workflow && (d.request as { track?: unknown }).track === this.branch,
    );
  }

  /** A working copy for the cycle runner, made once and moved from commit to commit. */
  private checkout(commit: string): string {
    if (!this.checkoutDir) {
      this.checkoutDir = join(mkdtempSync(join(tmpdir(), "consort-e2e-co-")), "repo");
      this.repo.addWorktree(this.checkoutDir, commit);
      symlinkSync(join(REPO_ROOT, "node_modules"), join(this.checkoutDir, "node_modules"), "dir");
    } else {
      execGit(this.checkoutDir, "checkout", "-q", "--detach", "--force", commit);
      execGit(this.checkoutDir, "clean", "-q", "-fdx", "-e", "node_modules");
    }
    this.repo.publishRemoteRefs();
    return this.checkoutDir;
  }

  /**
   * The job of the oldest dispatched cycle runs for real: check out the requested commit, run the
   * cycle on the embedded Postgres, upload the result, and GitHub sends `workflow_run.completed`.
   */
  async runDispatchedCycle(
    options: {
      /** What a process left behind by the commands does to the result file before it is uploaded. */
      tamper?: (result: CycleResult) => CycleResult;
      /** How GitHub concludes the run; by default as the action's exit code says (refused exits 1). */
      conclusion?: string;
    } = {},
  ): Promise<CycleResult> {
    const dispatch = this.nextRun("consort-cycle.yml");
    if (!dispatch)
      throw new Error(`no cycle was dispatched; the track is at ${this.snapshot().stage}: ${this.next().task}`);
    this.ran.add(dispatch.runId);
    const request = CycleRequest.parse(dispatch.request);
    const cwd = this.checkout(request.commit);
    const provider = await this.openJobProvider();
    let result: CycleResult;
    try {
      const config = this.cycleConfig();
      // As the action decides: jobs apart from the app's branches rebuild the track's database.
      const rebuildMissingTrack = !placementOf(config).shared;
      result = await runCycle(request, { provider, config, cwd, now: () => this.now, rebuildMissingTrack });
    } finally {
      await provider.close();
    }
    const uploaded = options.tamper ? options.tamper(result) : result;
    await this.reportRun(
      dispatch.runId,
      { "cycle-result.json": uploaded, [CYCLE_SUMMARY_FILE]: "summary" },
      { conclusion: options.conclusion ?? (exitCodeFor(result.verdict) === 0 ? "success" : "failure") },
    );
    return result;
  }

  /** The release job: a verified preview deploy of the track (here a replay of its migrations and whole suite). */
  async runDispatchedDeploy(): Promise<DeployEvidence> {
    const dispatch = this.nextRun("consort-deploy.yml");
    if (!dispatch)
      throw new Error(`no release was dispatched; the track is at ${this.snapshot().stage}: ${this.next().task}`);
    this.ran.add(dispatch.runId);
    const request = DeployRequest.parse(dispatch.request);
    const cwd = this.checkout(request.commit);
    const provider = await this.openJobProvider();
    let evidence: DeployEvidence;
    try {
      evidence = await runDeploy(request, { provider, config: this.cycleConfig(), cwd, now: () => this.now });
    } finally {
      await provider.close();
    }
    await this.reportRun(dispatch.runId, { [DEPLOY_EVIDENCE_FILE]: evidence });
    return evidence;
  }

  /** The promote job after the merge: migrate the parent's database branch for real. */
  async runDispatchedPromotion(): Promise<PromoteResult> {
    const dispatch = this.nextRun("consort-promote.yml");
    if (!dispatch) throw new Error(`no promotion was dispatched; the track is at ${this.snapshot().stage}`);
    this.ran.add(dispatch.runId);
    const request = PromoteRequest.parse(dispatch.request);
    const cwd = this.checkout(request.commit);
    const provider = await this.openJobProvider();
    let result: PromoteResult;
    try {
      result = await runPromote(request, { provider, config: this.cycleConfig(), cwd, now: () => this.now });
    } finally {
      await provider.close();
    }
    await this.reportRun(dispatch.runId, { [PROMOTE_RESULT_FILE]: result });
    return result;
  }

  /** The run finished: its artifact is uploaded and GitHub sends `workflow_run.completed`. */
  async reportRun(
    runId: number,
    files: Record<string, unknown> | Uint8Array,
    options: { deliveryId?: string; conclusion?: string } = {},
  ): Promise<WorkflowRun> {
    const run = this.world.completeRun(runId, files, options.conclusion);
    await this.deliverRun(run, options.deliveryId);
    return run;
  }

  async deliverRun(run: WorkflowRun, deliveryId?: string): Promise<string> {
    return this.deliver(
      "workflow_run",
      {
        ...webhookPayload("workflow_run", "completed"),
        ...this.payloadBase,
        action: "completed",
        workflow: { path: run.path },
        workflow_run: this.world.workflowRunPayload(run),
      },
      deliveryId,
    );
  }

  /**
   * The configuration the jobs use: main's, with the database on this scenario's root. On another
   * machine it stays main's `local` on hosted runners: the jobs decide from it that they are apart.
   */
  cycleConfig(): ConsortConfig {
    if (this.jobs === "another-machine") return this.config;
    return {
      ...this.config,
      database: {
        ...this.config.database,
        provider: "postgres",
        postgres: { urlEnv: "CONSORT_E2E_PG_URL", rootDatabase: this.rootDatabase },
      },
    };
  }

  async dispose(): Promise<void> {
    if (!this.beside) this.world.dispose();
    for (const provider of this.providers) await provider.close().catch(() => {});
    const cleanup = await this.openProvider().catch(() => undefined);
    if (cleanup) {
      try {
        // The server is shared by the whole run: delete only this scenario's branches.
        const mine = this.branch.split("-").at(-1)!;
        for (const branch of await cleanup.listBranches())
          if (branch.name.includes(mine)) await cleanup.deleteBranch(branch.name).catch(() => {});
      } finally {
        await cleanup.close();
      }
    }
    if (this.checkoutDir && existsSync(this.checkoutDir))
      rmSync(dirname(this.checkoutDir), { recursive: true, force: true });
    if (!this.beside) this.repo.remove();
  }
}

function execGit(cwd: string, ...args: string[]): void {
  execFileSync("git", args, { cwd, stdio: "pipe" });
}
