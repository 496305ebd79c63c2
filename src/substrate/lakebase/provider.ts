import { pgLogin } from "../login.js";
import { z } from "zod";
import type { LakebaseProviderSettings } from "../../config/consort-config.js";
import { BRANCH_ID_PATTERN } from "../names.js";
import {
  SubstrateError,
  checkFork,
  type BranchProvider,
  type CreateBranchOptions,
  type DatabaseBranch,
} from "../provider.js";
import { LakebaseClient, LakebaseError, pollDelay, type LakebaseAuth } from "./client.js";
import { consortCommand } from "../../contracts/command.js";

/**
 * The `lakebase` provider: database branches on Databricks Lakebase (docs/ARCHITECTURE.md, Database branches, reference
 * shared/reference/lakebase-api.md). Tracks are `no_expiry` (a branch with an expiry cannot have
 * children); throwaway branches get a `ttl` and the caller deletes them explicitly as well.
 */

const ENDPOINT_ID = "primary";
const ENDPOINT_SPEC = {
  endpoint_type: "ENDPOINT_TYPE_READ_WRITE",
  autoscaling_limit_min_cu: 0.5,
  autoscaling_limit_max_cu: 2,
  suspend_timeout_duration: "300s",
};
const LOGIN_RETRY_MS = 60_000;

/**
 * A branch as the API answers it. The API leaves out every field it has not set, so each of the
 * branch's `spec` (what was asked) and `status` (what is) is partial; fields the provider does not
 * read pass through.
 */
export const Branch = z
  .object({
    name: z.string(),
    uid: z.string().optional(),
    /** The project (`projects/p`), not the parent branch: that is spec.source_branch. */
    parent: z.string().optional(),
    create_time: z.string().optional(),
    spec: z
      .object({
        source_branch: z.string(),
        ttl: z.string(),
        expire_time: z.string(),
        no_expiry: z.boolean(),
        is_protected: z.boolean(),
      })
      .partial()
      .passthrough()
      .optional(),
    status: z
      .object({
        current_state: z.string(),
        default: z.boolean(),
        source_branch: z.string(),
        expire_time: z.string(),
        logical_size_bytes: z.union([z.string(), z.number()]),
      })
      .partial()
      .passthrough()
      .optional(),
  })
  .passthrough();
export type Branch = z.infer<typeof Branch>;

const Endpoint = z
  .object({
    name: z.string().optional(),
    status: z
      .object({
        current_state: z.string().optional(),
        hosts: z.object({ host: z.string().optional() }).passthrough().optional(),
      })
      .passthrough()
      .optional(),
  })
  .passthrough();

const Project = z
  .object({
    name: z.string().optional(),
    status: z.object({ default_branch: z.string().optional() }).passthrough().optional(),
  })
  .passthrough();
const Credential = z.object({ token: z.string().min(1), expire_time: z.string().optional() });
const BranchList = z.object({ branches: z.array(Branch).optional(), next_page_token: z.string().optional() });

/** `projects/p/branches/b` → `b`; a bare id is returned as it is. */
function branchIdOf(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const match = /\/branches\/([^/]+)$/.exec(name);
  return match ? match[1] : name;
}

export interface LakebaseProviderOptions {
  env?: NodeJS.ProcessEnv;
  onProgress?: (message: string) => void;
  /** Injectable for tests: waiting, the clock and HTTP. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  fetch?: typeof fetch;
  /** Try one login with a URL; rejects with the server's message. Default: connect with pg and SELECT 1. */
  tryLogin?: (url: string) => Promise<void>;
}

export function createLakebaseProvider(
  settings: z.infer<typeof LakebaseProviderSettings>,
  options: LakebaseProviderOptions = {},
): LakebaseProvider {
  const env = options.env ?? process.env;
  const token = env[settings.tokenEnv]?.trim();
  const clientId = env[settings.clientIdEnv]?.trim();
  const clientSecret = env[settings.clientSecretEnv]?.trim();
  let auth: LakebaseAuth;
  if (token) auth = { token };
  else if (clientId && clientSecret) auth = { clientId, clientSecret };
  else {
    throw new SubstrateError(
      `no Databricks credentials: neither ${settings.tokenEnv} nor ${settings.clientIdEnv} and ${settings.clientSecretEnv} are set`,
      `export ${settings.tokenEnv}=<a personal access token>, or the OAuth client id and secret of a service principal`,
      "CONFIG_MISSING",
    );
  }
  const user = env[settings.userEnv]?.trim();
  const client = new LakebaseClient({
    host: settings.host,
    auth,
    authEnv: "token" in auth ? settings.tokenEnv : `${settings.clientIdEnv} and ${settings.clientSecretEnv}`,
    operationTimeoutMs: settings.operationTimeoutSeconds * 1000,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.sleep ? { sleep: options.sleep } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  return new LakebaseProvider(client, settings.project, {
    user,
    userEnv: settings.userEnv,
    tryLogin: options.tryLogin ?? ((url) => pgLogin(url, 15_000)),
    onProgress: options.onProgress,
  });
}

export class LakebaseProvider implements BranchProvider {
  readonly kind = "lakebase" as const;
  private root: string | undefined;

  constructor(
    private readonly client: LakebaseClient,
    private readonly project: string,
    private readonly login: {
      user: string | undefined;
      userEnv: string;
      tryLogin: (url: string) => Promise<void>;
      onProgress?: ((m: string) => void) | undefined;
    },
  ) {}

  private branchPath(id: string): string {
    return `projects/${this.project}/branches/${id}`;
  }

  async rootBranch(): Promise<string> {
    if (this.root) return this.root;
    const project = Project.parse(
      await this.client.request("GET", `projects/${this.project}`, { action: `reading project ${this.project}` }),
    );
    const root = branchIdOf(project.status?.default_branch);
    if (!root)
      throw new LakebaseError(
        `project ${this.project} names no default branch`,
        "set a default branch on the Lakebase project",
        "NO_ROOT",
      );
    this.root = root;
    return root;
  }

  async getBranch(name: string): Promise<DatabaseBranch | undefined> {
    const branch = await this.readBranch(name);
    return branch ? this.toBranch(branch, await this.rootBranch()) : undefined;
  }

  async listBranches(): Promise<DatabaseBranch[]> {
    const root = await this.rootBranch();
    const all: Branch[] = [];
    let pageToken: string | undefined;
    do {
      const page = BranchList.parse(
        await this.client.request("GET", `projects/${this.project}/branches`, {
          query: { page_size: "100", page_token: pageToken },
          action: "listing branches",
        }),
      );
      all.push(...(page.branches ?? []));
      pageToken = page.next_page_token || undefined;
    } while (pageToken);
    return all
      .filter((b) => b.status?.current_state !== "DELETED")
      .map((b) => this.toBranch(b, root))
      .sort((a, b) => (a.isRoot === b.isRoot ? a.name.localeCompare(b.name) : a.isRoot ? -1 : 1));
  }

  async createBranch(name: string, options: CreateBranchOptions = {}): Promise<DatabaseBranch> {
    const progress = options.onProgress ?? this.login.onProgress ?? (() => {});
    const root = await this.rootBranch();
    const parent = options.from ?? root;
    if (name === root) {
      if (options.from !== undefined)
        throw new SubstrateError(
          `"${name}" is the root branch and has no parent`,
          "create other branches from it instead",
          "INVALID_PARENT",
        );
      return (await this.getBranch(name))!;
    }
    if (!BRANCH_ID_PATTERN.test(name)) {
      throw new SubstrateError(
        `"${name}" is not a Lakebase branch id (1–63 lowercase letters, digits and hyphens, starting with a letter)`,
        "pass the git name through sanitiseBranchName",
        "INVALID_BRANCH_NAME",
      );
    }
    const ttl = options.ttlSeconds;
    checkFork(name, parent, ttl);

    // Both reads at once: the branch (reused when it exists) and the parent it would fork from.
    const [existing, parentBranch] = await Promise.all([this.readBranch(name), this.readBranch(parent)]);
    if (existing) return this.reuse(existing, parent, root, progress);

    if (!parentBranch)
      throw new SubstrateError(
        `parent branch "${parent}" does not exist in project ${this.project}`,
        `create the parent first (${consortCommand("db create")}), or fork from the root branch`,
        "PARENT_MISSING",
      );
    if (parentBranch.status?.expire_time || parentBranch.spec?.ttl || parentBranch.spec?.expire_time) {
      throw new SubstrateError(
        `parent branch "${parent}" has an expiry and cannot have children`,
        "fork from a track's branch (no expiry) instead",
        "PARENT_IS_THROWAWAY",
      );
    }

    progress(`creating Lakebase branch "${name}" from "${parent}"`);
    const body = {
      spec: {
        source_branch: this.branchPath(parent),
        ...(ttl !== undefined ? { ttl: `${ttl}s` } : { no_expiry: true }),
      },
    };
    let operation: unknown;
    for (let attempt = 0; ; attempt++) {
      try {
        operation = await this.client.request("POST", `projects/${this.project}/branches`, {
          query: { branch_id: name },
          body,
          action: `creating branch ${name}`,
        });
        break;
      } catch (error) {
        if (!(error instanceof LakebaseError)) throw error;
        // Another process created it between our read and our create: reuse it if the parent matches.
        if (error.code === "ALREADY_EXISTS" || error.code === "RESOURCE_ALREADY_EXISTS") {
          const raced = await this.readBranch(name);
          if (raced) return this.reuse(raced, parent, root, progress);
        }
        if (error.code === "RESOURCE_EXHAUSTED") throw await this.atBranchLimit(error, name);
        // The request may have reached the service: whether the branch now exists decides.
        if (error.answerLost) {
          const made = await this.readBranch(name);
          if (made) {
            progress(`the answer to creating "${name}" was lost, but the branch exists: using it`);
            return this.finishCreate(name, made, parent, root, ttl !== undefined, progress);
          }
          if (attempt === 0) continue;
        }
        throw error;
      }
    }
    let created: Branch | undefined;
    try {
      const response = Branch.safeParse(await this.client.waitForOperation(operation, `creating branch ${name}`));
      if (response.success && branchIdOf(response.data.name) === name) created = response.data;
    } catch (error) {
      await this.cleanUpFailedCreate(name, ttl !== undefined, error, progress);
      throw error;
    }
    return this.finishCreate(name, created, parent, root, ttl !== undefined, progress);
  }

  /** After the create operation: READY, then the endpoint with a host; on failure nothing is left. */
  private async finishCreate(
    name: string,
    created: Branch | undefined,
    parent: string,
    root: string,
    throwaway: boolean,
    progress: (m: string) => void,
  ): Promise<DatabaseBranch> {
    try {
      // The operation's answer is the branch: when it is READY already, no read is needed.
      const ready = created?.status?.current_state === "READY" ? created : await this.waitUntilReady(name, progress);
      const actual = branchIdOf(ready.spec?.source_branch ?? ready.status?.source_branch);
      if (actual !== undefined && actual !== parent) return await this.reuse(ready, parent, root, progress);
      await this.ensureEndpoint(name, progress, true);
      return this.toBranch(ready, root);
    } catch (error) {
      if (error instanceof SubstrateError && error.code === "PARENT_MISMATCH") throw error;
      await this.cleanUpFailedCreate(name, throwaway, error, progress);
      throw error;
    }
  }

  /**
   * Nothing half-made: delete the branch whose creation failed. While its create operation still
   * runs the delete is refused with ABORTED, so it is retried until the create settles (within the
   * operation timeout). When it cannot be deleted, the error names the branch.
   */
  private async cleanUpFailedCreate(
    name: string,
    throwaway: boolean,
    cause: unknown,
    progress: (m: string) => void,
  ): Promise<void> {
    progress(`creating "${name}" failed; deleting what was made`);
    const { sleep, now } = this.client.clock;
    const started = now();
    const deadline = started + this.client.operationTimeoutMs;
    for (;;) {
      try {
        await this.deleteOne(name, throwaway);
        return;
      } catch (error) {
        const busy = error instanceof LakebaseError && (error.code === "ABORTED" || error.code === "INVALID_STATE");
        if (!busy || now() >= deadline) {
          const why = (cause as Error)?.message?.split("\n")[0] ?? String(cause);
          throw new SubstrateError(
            `${why}; and branch "${name}", made before the failure, could not be deleted (${(error as Error).message.split("\n")[0]})`,
            `delete it yourself: consort db delete ${name}`,
            "PARTIAL_FORK",
            { cause },
          );
        }
        progress(`branch "${name}" is still being created; deleting it once that settles`);
        await sleep(pollDelay(now() - started));
      }
    }
  }

  /** The branch limit: retrying cannot help; say which of Consort's branches exist and how to delete them. */
  private async atBranchLimit(error: LakebaseError, name: string): Promise<SubstrateError> {
    const branches = await this.listBranches().catch(() => undefined);
    const others = (branches ?? []).filter((b) => !b.isRoot);
    const listed = others
      .map((b) => `${b.name}${b.expiresAt ? ` (throwaway, expires ${b.expiresAt})` : " (track)"}`)
      .join(", ");
    return new SubstrateError(
      `cannot create branch "${name}": project ${this.project} is at its branch limit (${error.message.split("\n")[0]})` +
        (branches ? `; its branches besides the root: ${listed || "none"}` : ""),
      `a branch must be deleted first: \`${consortCommand("db delete <branch>")}\` (throwaway cycle branches are safe to delete${
        others[0]
          ? `, e.g. \`${consortCommand(`db delete ${(others.find((b) => b.expiresAt) ?? others[0]).name}`)}\``
          : ""
      }); retrying does not help until then`,
      "RESOURCE_EXHAUSTED",
      { cause: error },
    );
  }

  async deleteBranch(name: string, options: { onProgress?: (message: string) => void } = {}): Promise<void> {
    const progress = options.onProgress ?? this.login.onProgress ?? (() => {});
    const root = await this.rootBranch();
    if (name === root)
      throw new SubstrateError(
        `"${name}" is the root branch (production) and is never deleted by Consort`,
        "delete track branches instead",
        "ROOT_PROTECTED",
      );
    const branch = await this.readBranch(name);
    if (!branch) return;
    // A branch with children cannot be deleted: children first, found in one listing.
    const all = await this.listBranches();
    const children = new Map<string, DatabaseBranch[]>();
    for (const b of all) if (b.parent) children.set(b.parent, [...(children.get(b.parent) ?? []), b]);
    const remove = async (id: string, throwaway: boolean): Promise<void> => {
      for (const child of children.get(id) ?? []) {
        progress(`deleting child "${child.name}" of "${id}" first`);
        await remove(child.name, child.expiresAt !== undefined);
      }
      progress(`deleting Lakebase branch "${id}"`);
      await this.deleteOne(id, throwaway);
    };
    // Throwaway branches are purged, not soft-deleted, so they stop counting against the project's limits.
    await remove(name, Boolean(branch.status?.expire_time || branch.spec?.ttl || branch.spec?.expire_time));
  }

  async connectionUrl(name: string): Promise<string> {
    const user = this.login.user;
    if (!user) {
      throw new SubstrateError(
        `no Postgres user for Lakebase logins: ${this.login.userEnv} is not set`,
        `export ${this.login.userEnv}=<your e-mail, or the service principal's application id>`,
        "CONFIG_MISSING",
      );
    }
    const branch = await this.readBranch(name);
    if (!branch)
      throw new SubstrateError(
        `branch "${name}" does not exist in project ${this.project}`,
        `list branches with \`${consortCommand("db list")}\`, or create it with \`${consortCommand("db create")}\``,
        "BRANCH_MISSING",
      );
    const progress = this.login.onProgress ?? (() => {});
    const { host, endpoint } = await this.ensureEndpoint(name, progress);
    // Just after creation a login can fail: retry with a fresh token, 2 s to 8 s apart, for about 60 s.
    const { sleep, now } = this.client.clock;
    const deadline = now() + LOGIN_RETRY_MS;
    let delay = 2000;
    for (;;) {
      const credential = Credential.parse(
        await this.client.request("POST", "credentials", {
          body: { endpoint, ttl: "3600s" },
          action: `issuing a credential for ${name}`,
        }),
      );
      const url = `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(credential.token)}@${host}:5432/databricks_postgres?sslmode=require`;
      try {
        await this.login.tryLogin(url);
        return url;
      } catch (error) {
        const message = (error as Error).message ?? String(error);
        const transient = /External authorization failed|password authentication failed/i.test(message);
        if (!transient || now() + delay > deadline) {
          throw new SubstrateError(
            `logging in to branch "${name}" at ${host} failed: ${message}`,
            transient
              ? `the new branch still refuses logins after 60 s: check that ${this.login.userEnv} (${user}) is a Postgres role of the project`
              : "check the network to the endpoint and the user's Postgres role",
            "LOGIN_REFUSED",
          );
        }
        progress(
          `Lakebase refused the first login to "${name}" (${message}); retrying with a fresh token in ${delay / 1000} s`,
        );
        await sleep(delay);
        delay = Math.min(delay * 2, 8000);
      }
    }
  }

  async close(): Promise<void> {}

  private async reuse(
    existing: Branch,
    parent: string,
    root: string,
    progress: (m: string) => void,
  ): Promise<DatabaseBranch> {
    const actual = branchIdOf(existing.spec?.source_branch ?? existing.status?.source_branch);
    if (actual !== parent) {
      throw new SubstrateError(
        `branch "${branchIdOf(existing.name)}" already exists with parent "${actual ?? "none"}", not "${parent}"`,
        `delete it first (${consortCommand(`db delete ${branchIdOf(existing.name)}`)}) or fork it from "${actual}"`,
        "PARENT_MISMATCH",
      );
    }
    const id = branchIdOf(existing.name)!;
    const ready = existing.status?.current_state === "READY" ? existing : await this.waitUntilReady(id, progress);
    await this.ensureEndpoint(id, progress);
    return this.toBranch(ready, root);
  }

  private async readBranch(id: string): Promise<Branch | undefined> {
    try {
      const branch = Branch.parse(
        await this.client.request("GET", this.branchPath(id), { action: `reading branch ${id}` }),
      );
      return branch.status?.current_state === "DELETED" ? undefined : branch;
    } catch (error) {
      if (error instanceof LakebaseError && (error.code === "NOT_FOUND" || error.code === "RESOURCE_DOES_NOT_EXIST"))
        return undefined;
      throw error;
    }
  }

  private async deleteOne(id: string, purge = false): Promise<void> {
    try {
      const operation = await this.client.request("DELETE", this.branchPath(id), {
        ...(purge ? { query: { purge: "true" } } : {}),
        action: `deleting branch ${id}`,
      });
      await this.client.waitForOperation(operation, `deleting branch ${id}`);
    } catch (error) {
      if (error instanceof LakebaseError && (error.code === "NOT_FOUND" || error.code === "RESOURCE_DOES_NOT_EXIST"))
        return;
      throw error;
    }
  }

  private async waitUntilReady(id: string, progress: (m: string) => void): Promise<Branch> {
    const { sleep, now } = this.client.clock;
    const started = now();
    const deadline = started + this.client.operationTimeoutMs;
    for (;;) {
      const branch = await this.readBranch(id);
      if (!branch)
        throw new SubstrateError(
          `branch "${id}" vanished while it was being created`,
          "run the command again",
          "BRANCH_MISSING",
        );
      const state = branch.status?.current_state;
      if (state === "READY" || state === undefined) return branch;
      if (state === "ARCHIVED")
        throw new LakebaseError(
          `branch "${id}" is archived`,
          "restore it in the Lakebase console or delete it",
          "INVALID_STATE",
        );
      if (now() >= deadline)
        throw new LakebaseError(
          `branch "${id}" is still ${state} after ${Math.round(this.client.operationTimeoutMs / 1000)} s`,
          "run the command again later",
          "OPERATION_TIMEOUT",
        );
      progress(`waiting for branch "${id}" to be READY (now ${state})`);
      await sleep(pollDelay(now() - started));
    }
  }

  /**
   * Get-or-create the branch's `primary` endpoint and wait until it has a host. For a branch just
   * made (`fresh`) the create is sent at once (an existing endpoint answers ALREADY_EXISTS), and a
   * create operation whose answer carries the host needs no further read.
   */
  private async ensureEndpoint(
    id: string,
    progress: (m: string) => void,
    fresh = false,
  ): Promise<{ endpoint: string; host: string }> {
    const path = `${this.branchPath(id)}/endpoints/${ENDPOINT_ID}`;
    const read = async () => {
      try {
        return Endpoint.parse(await this.client.request("GET", path, { action: `reading the endpoint of ${id}` }));
      } catch (error) {
        if (error instanceof LakebaseError && (error.code === "NOT_FOUND" || error.code === "RESOURCE_DOES_NOT_EXIST"))
          return undefined;
        throw error;
      }
    };
    let endpoint = fresh ? undefined : await read();
    if (!endpoint) {
      progress(`creating the compute endpoint of "${id}"`);
      try {
        const operation = await this.client.request("POST", `${this.branchPath(id)}/endpoints`, {
          query: { endpoint_id: ENDPOINT_ID },
          body: { spec: ENDPOINT_SPEC },
          action: `creating the endpoint of ${id}`,
        });
        const made = Endpoint.safeParse(
          await this.client.waitForOperation(operation, `creating the endpoint of ${id}`),
        );
        if (made.success && made.data.status?.hosts?.host) endpoint = made.data;
      } catch (error) {
        if (!(
          error instanceof LakebaseError &&
          (error.code === "ALREADY_EXISTS" || error.code === "RESOURCE_ALREADY_EXISTS")
        ))
          throw error;
      }
      endpoint ??= await read();
    }
    const { sleep, now } = this.client.clock;
    const started = now();
    const deadline = started + this.client.operationTimeoutMs;
    while (!endpoint?.status?.hosts?.host) {
      if (now() >= deadline) {
        throw new LakebaseError(
          `the endpoint of "${id}" has no host after ${Math.round(this.client.operationTimeoutMs / 1000)} s`,
          "run the command again; the compute may still be starting",
          "OPERATION_TIMEOUT",
        );
      }
      progress(`waiting for the endpoint of "${id}" to get a host`);
      await sleep(pollDelay(now() - started));
      endpoint = await read();
    }
    return { endpoint: path, host: endpoint.status.hosts.host };
  }

  private toBranch(branch: Branch, root: string): DatabaseBranch {
    const id = branchIdOf(branch.name)!;
    const isRoot = branch.status?.default === true || id === root;
    const expiresAt = branch.status?.expire_time ?? branch.spec?.expire_time;
    return {
      name: id,
      parent: isRoot ? undefined : branchIdOf(branch.spec?.source_branch ?? branch.status?.source_branch),
      ...(branch.create_time ? { createdAt: branch.create_time } : {}),
      ...(expiresAt ? { expiresAt } : {}),
      isRoot,
    };
  }
}
