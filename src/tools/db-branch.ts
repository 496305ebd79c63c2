import { z } from "zod";
import { ProviderKind } from "../contracts/placement.js";
import { BRANCH_ID_PATTERN, sanitiseBranchName, type BranchProvider, type DatabaseBranch } from "../substrate/index.js";
import { defineTool, ToolError } from "./registry.js";
import { compareForTool, SchemaComparisonOutput } from "./schema-diff.js";
import type { ToolContext } from "./context.js";
import { loadTrack } from "./track-tools.js";

/** A database branch as the tools report it (the provider's `DatabaseBranch`). */
export const BranchInfo = z.object({
  name: z.string().describe("The provider's branch id."),
  parent: z.string().nullable().describe("The branch it was forked from; null for the root branch."),
  isRoot: z.boolean(),
  createdAt: z.string().optional(),
  expiresAt: z.string().optional().describe("When a throwaway branch may be reaped; absent for tracks."),
});

function branchInfo(branch: DatabaseBranch): z.infer<typeof BranchInfo> {
  return {
    name: branch.name,
    parent: branch.parent ?? null,
    isRoot: branch.isRoot,
    ...(branch.createdAt ? { createdAt: branch.createdAt } : {}),
    ...(branch.expiresAt ? { expiresAt: branch.expiresAt } : {}),
  };
}

const branchName = z.string().trim().min(1).max(200);

const DbBranchInput = z
  .object({
    action: z
      .enum(["create", "delete", "list", "url", "diff"])
      .describe(
        "create: fork a branch (idempotent); delete: drop it and its children; list: every branch; url: a connection URL for it; diff: its schema against its parent's (or `against`).",
      ),
    branch: branchName.optional().describe("The database branch to act on. Required for create, delete, url and diff."),
    from: branchName.optional().describe("create only: the parent to fork from. Default: the root branch."),
    ttlSeconds: z
      .number()
      .int()
      .min(60)
      .max(7 * 24 * 3600)
      .optional()
      .describe("create only: a time to live for a throwaway branch. Omit for a branch that should stay."),
    against: branchName.optional().describe("diff only: the branch to compare with. Default: the branch's parent."),
  })
  .strict()
  .superRefine((input, ctx) => {
    if (input.action !== "list" && !input.branch) {
      ctx.addIssue({ code: "custom", path: ["branch"], message: `action "${input.action}" needs a branch name` });
    }
    if (input.action !== "create" && (input.from !== undefined || input.ttlSeconds !== undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [input.from !== undefined ? "from" : "ttlSeconds"],
        message: `only action "create" takes from and ttlSeconds`,
      });
    }
    if (input.action !== "diff" && input.against !== undefined) {
      ctx.addIssue({ code: "custom", path: ["against"], message: `only action "diff" takes against` });
    }
  });

export const DbBranchOutput = z.object({
  action: z.enum(["create", "delete", "list", "url", "diff"]),
  provider: ProviderKind,
  branch: BranchInfo.optional().describe("create: the branch made (or found with the same parent)."),
  branches: z.array(BranchInfo).optional().describe("list: every branch the provider has."),
  deleted: z.string().optional().describe("delete: the branch that no longer exists."),
  existed: z.boolean().optional().describe("delete: whether it existed (deleting a missing branch is no error)."),
  children: z
    .array(z.string())
    .optional()
    .describe("delete: the branches under it, deleted first, in the order they were listed."),
  url: z.string().optional().describe("url: a connection URL; it holds a credential, keep it out of logs and commits."),
  diff: SchemaComparisonOutput.optional().describe("diff: the schema comparison, as schema_diff returns it."),
});

export const dbBranchTool = defineTool({
  name: "db_branch",
  title: "Database branches",
  description:
    "Manage copy-on-write database branches on the repository's configured provider (local embedded Postgres, a Postgres server, or Lakebase). " +
    "Actions: create (fork `branch` from `from`, default the root; idempotent), delete (drop `branch` and its children; never the root), list, url (a connection URL for `branch`), diff (its schema against its parent's, with the rows a change would break). " +
    "Use a throwaway branch (ttlSeconds) to try a migration or query without touching the track's own database.",
  input: DbBranchInput,
  output: DbBranchOutput,
  readOnly: false,
  idempotent: true,
  destructive: true,
  async run(input, context) {
    const provider = await context.provider();
    const base = { action: input.action, provider: provider.kind };
    switch (input.action) {
      case "list":
        return { ...base, branches: (await provider.listBranches()).map(branchInfo) };
      case "create": {
        const created = await createDbBranch(provider, input.branch!, { ...input, onProgress: context.onProgress });
        return { ...base, branch: branchInfo(created) };
      }
      case "delete":
        return { ...base, ...(await deleteDbBranch(context, provider, input.branch!)) };
      case "diff":
        return { ...base, diff: await compareForTool(context, input.branch!, input.against) };
      case "url": {
        const { url } = await dbBranchUrl(provider, input.branch!);
        return { ...base, url };
      }
    }
  },
});

/*
 * The database-branch commands, one home for the db_branch tool and `consort db` (which renders
 * them for a terminal): how a name becomes a branch id, what may be deleted, what a URL needs.
 */

/**
 * The branch id a name a person types stands for (`consort db`): the root's id and an existing
 * branch's id as they are, any other name (a git branch name such as feature/cart) sanitised as the
 * app pairs it. The tool takes ids as they are, so a name the provider refuses is refused.
 */
export async function dbBranchId(provider: BranchProvider, name: string): Promise<string> {
  const root = await provider.rootBranch();
  if (name === root || (BRANCH_ID_PATTERN.test(name) && (await provider.getBranch(name)))) return name;
  return sanitiseBranchName(name);
}

/** Fork `id` from `from` (default the root); the branch already there with that parent is returned. */
export async function createDbBranch(
  provider: BranchProvider,
  id: string,
  options: { from?: string; ttlSeconds?: number; onProgress?: (message: string) => void },
): Promise<DatabaseBranch> {
  return provider.createBranch(id, {
    ...(options.from ? { from: options.from } : {}),
    ...(options.ttlSeconds ? { ttlSeconds: options.ttlSeconds } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
}

/** Delete `id` and, first, its children, unless the rules refuse it (assertDeletable); a missing branch is no error. */
export async function deleteDbBranch(
  context: ToolContext,
  provider: BranchProvider,
  id: string,
): Promise<{ deleted: string; existed: boolean; children: string[] }> {
  await assertDeletable(context, provider, id);
  const existed = (await provider.getBranch(id)) !== undefined;
  const children = existed ? descendants(await provider.listBranches(), id) : [];
  await provider.deleteBranch(id, { onProgress: context.onProgress });
  return { deleted: id, existed, children };
}

/** A connection URL for an existing branch (it holds a credential); a missing branch is refused with what to do. */
export async function dbBranchUrl(provider: BranchProvider, id: string): Promise<{ branch: string; url: string }> {
  if (!(await provider.getBranch(id))) {
    throw new ToolError(
      `There is no database branch named ${id}.`,
      'List the branches with action "list", or create it with action "create".',
      "NO_SUCH_BRANCH",
    );
  }
  return { branch: id, url: await provider.connectionUrl(id) };
}

/** Every branch under `id` (children, their children…), in the order they were listed. */
function descendants(branches: Array<{ name: string; parent: string | undefined }>, id: string): string[] {
  const under = new Set([id]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const branch of branches)
      if (branch.parent && under.has(branch.parent) && !under.has(branch.name)) {
        under.add(branch.name);
        grew = true;
      }
  }
  return branches.map((branch) => branch.name).filter((name) => name !== id && under.has(name));
}

/**
 * What may be deleted: never the root branch, never a branch the checkout's track is paired with.
 * Throws the ToolError that says why.
 */
async function assertDeletable(context: ToolContext, provider: BranchProvider, name: string): Promise<void> {
  const root = await provider.rootBranch();
  const existing = await provider.getBranch(name);
  if (name === root || existing?.isRoot) {
    throw new ToolError(
      `${name} is the root database branch (the trunk's database); tools never delete it.`,
      'Delete a track\'s or a throwaway branch instead; list them with action "list".',
      "ROOT_BRANCH",
    );
  }
  const paired = await pairedBranches(context);
  if (paired.has(name)) {
    throw new ToolError(
      `${name} is paired with the track ${paired.get(name)}; deleting it would break the track's cycles.`,
      "The app deletes a track's database branch when the track ends. Delete only throwaway branches you made.",
      "TRACK_BRANCH",
    );
  }
}

/** The database branches the checkout's track is paired with (its own and its parent's), when its state is known. */
async function pairedBranches(context: ToolContext): Promise<Map<string, string>> {
  if (context.state.kind === "none") return new Map();
  try {
    const { snapshot } = await loadTrack(context, undefined);
    const { trackId, databaseBranch, parentDatabaseBranch } = snapshot.context;
    return new Map([
      [databaseBranch, trackId],
      [parentDatabaseBranch, `${trackId} (its parent)`],
    ]);
  } catch (error) {
    // No state for this branch: nothing is paired here. A tampered or unreadable state is not ignored.
    if (error instanceof ToolError && error.code === "NO_STATE") return new Map();
    throw error;
  }
}
