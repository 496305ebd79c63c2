import { createHash } from "node:crypto";
import { SubstrateError } from "./provider.js";
import { consortCommand } from "../contracts/command.js";

/**
 * Pairing git branches with database branches (docs/ARCHITECTURE.md, Database branches). One sanitiser for every provider, so a
 * git branch has the same database branch id on Lakebase, on a team server and on the embedded one.
 */

/** Lakebase branch ids (and our database names): 1–63 chars, lowercase letters, digits, hyphens, leading letter. */
export const BRANCH_ID_PATTERN = /^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const MAX_BRANCH_ID_LENGTH = 63;
const HASH_LENGTH = 8;

/** A short, stable hash of the git name: the same git name always gets the same suffix. */
function shortHash(gitName: string): string {
  return createHash("sha256").update(gitName).digest("hex").slice(0, HASH_LENGTH);
}

/** Why `gitName` is not a branch name git would accept, or undefined when it is fine. */
function invalidGitBranchName(gitName: string): string | undefined {
  if (gitName.trim() === "") return "it is empty";
  if (gitName.length > 255) return "it is longer than 255 characters";
  const controlOrSpace = [...gitName].some((c) => c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f);
  if (controlOrSpace || /[~^:?*[\\]/.test(gitName))
    return "it holds a space, a control character or one of ~ ^ : ? * [ \\";
  if (gitName.includes("..")) return 'it holds ".."';
  if (gitName.includes("@{")) return 'it holds "@{"';
  if (gitName.includes("//")) return 'it holds "//"';
  if (gitName.startsWith("/") || gitName.endsWith("/")) return 'it starts or ends with "/"';
  if (gitName.startsWith("-")) return 'it starts with "-"';
  if (gitName.endsWith(".") || gitName.endsWith(".lock")) return 'it ends with "." or ".lock"';
  if (gitName === "@") return 'it is "@"';
  return undefined;
}

/**
 * Whether a name ends the way a hash suffix does (`-` and eight hex digits). A git name spelled
 * like that is hashed as well, wherever names are made unique (database branch ids here, track ids
 * in src/state), so a branch literally named `feat-stock-1a2b3c4d` never takes the id of `Feat/Stock`.
 */
export function endsLikeHashSuffix(name: string): boolean {
  return new RegExp(`-[0-9a-f]{${HASH_LENGTH}}$`).test(name);
}

function cutWithHash(id: string, gitName: string): string {
  const room = MAX_BRANCH_ID_LENGTH - HASH_LENGTH - 1;
  const head = id.slice(0, room).replace(/-+$/, "");
  return `${head}-${shortHash(gitName)}`;
}

/**
 * A git name as a branch id, for names that need no uniqueness (a root database's name inside a
 * snapshot's id): lowercase, every run of other characters one `-`, hyphens trimmed, a leading
 * letter, at most 63 characters (a hash suffix when cut).
 */
export function plainBranchId(gitName: string): string {
  const invalid = invalidGitBranchName(gitName);
  if (invalid) {
    throw new SubstrateError(
      `"${gitName.slice(0, 80)}" is not a valid git branch name: ${invalid}`,
      "use the branch name exactly as git shows it (git branch --show-current)",
      "INVALID_BRANCH_NAME",
    );
  }
  let id = gitName
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (id === "") return cutWithHash("branch", gitName);
  if (!/^[a-z]/.test(id)) id = `b-${id}`;
  return id.length > MAX_BRANCH_ID_LENGTH ? cutWithHash(id, gitName) : id;
}

/**
 * The database branch id for a git branch (one rule for every provider). A git name that is a
 * branch id already keeps it; any other gets the sanitised form (lowercase, every run of other
 * characters one `-`, hyphens trimmed, a leading letter, at most 63 characters) plus a short hash
 * of the git name. So `Feature/Cart`, `feature/cart` and `feature-cart` get three different ids,
 * whatever order they are forked in, and a git name always gets the same id.
 *
 * `taken` lists ids already in use: as a Map (id → the git name holding it) a git name that
 * already holds its own id keeps it; as a plain collection a listed id that is exactly the git
 * name counts as another's (it then gets a hash suffix as well).
 */
export function sanitiseBranchName(gitName: string, taken?: ReadonlyMap<string, string> | Iterable<string>): string {
  let id = plainBranchId(gitName);
  // A git name paired before ids were made unique keeps the id it holds.
  if (taken instanceof Map && taken.get(id) === gitName) return id;
  if ((id !== gitName || endsLikeHashSuffix(id)) && !id.endsWith(`-${shortHash(gitName)}`))
    id = cutWithHash(id, gitName);

  const holderOf = (candidate: string): string | undefined | null => {
    if (!taken) return null;
    if (taken instanceof Map) return taken.has(candidate) ? (taken.get(candidate) as string) : null;
    for (const t of taken as Iterable<string>) if (t === candidate) return undefined;
    return null;
  };
  const holder = holderOf(id);
  if (holder === null || holder === gitName) return id;
  // A hashed id in a plain list is this git name's own (the hash is of the git name).
  if (id !== gitName && holder === undefined) return id;
  if (id !== gitName) {
    throw new SubstrateError(
      `git branch "${gitName}" maps to database branch "${id}", which git branch "${holder}" already holds`,
      `rename the git branch, or delete the stale database branch with \`${consortCommand("db delete")}\``,
      "BRANCH_NAME_COLLISION",
    );
  }
  // An id-shaped git name whose id another git name took first (before ids were made unique).
  const withHash = cutWithHash(id, gitName);
  const second = holderOf(withHash);
  // As above, a hashed id in a plain list is this git name's own (left from an earlier pairing of it).
  if (second === null || second === undefined || second === gitName) return withHash;
  throw new SubstrateError(
    `git branch "${gitName}" maps to database branch "${withHash}", which another git branch already holds`,
    `rename the git branch, or delete the stale database branch with \`${consortCommand("db delete")}\``,
    "BRANCH_NAME_COLLISION",
  );
}

export interface ParentResolutionInput {
  /** The git branch being paired. */
  branch: string;
  /** The repository's default branch (trunk). */
  defaultBranch: string;
  /** The pull request's base branch, when the branch has an open PR. */
  prBase?: string | undefined;
  /** The provider's root branch id (trunk pairs with it). */
  rootBranch: string;
  /** Ids already in use (see `sanitiseBranchName`). */
  taken?: ReadonlyMap<string, string> | Iterable<string>;
}

export interface ParentResolution {
  /** The database branch id paired with `branch`. */
  branch: string;
  /** The database branch id to fork it from; undefined for trunk (it is the root). */
  parent: string | undefined;
  /** The git branch the parent is paired with; undefined for trunk. */
  parentGitBranch: string | undefined;
  isTrunk: boolean;
}

/** The database branch a git branch pairs with and the one it forks from: the PR base, else the default branch. */
export function resolveParentBranch(input: ParentResolutionInput): ParentResolution {
  const { branch, defaultBranch, rootBranch } = input;
  for (const [field, value] of [
    ["branch", branch],
    ["defaultBranch", defaultBranch],
  ] as const) {
    const invalid = invalidGitBranchName(value);
    if (invalid)
      throw new SubstrateError(
        `${field} "${value}" is not a valid git branch name: ${invalid}`,
        "pass the git branch name as git shows it",
        "INVALID_BRANCH_NAME",
      );
  }
  const pairOf = (gitName: string) =>
    gitName === defaultBranch ? rootBranch : sanitiseBranchName(gitName, input.taken);
  if (branch === defaultBranch)
    return { branch: rootBranch, parent: undefined, parentGitBranch: undefined, isTrunk: true };
  const parentGit = input.prBase && input.prBase.trim() !== "" ? input.prBase : defaultBranch;
  if (parentGit === branch) {
    throw new SubstrateError(
      `git branch "${branch}" cannot be its own parent`,
      "open the pull request against another branch (usually the default branch)",
      "INVALID_PARENT",
    );
  }
  const id = pairOf(branch);
  const parent = pairOf(parentGit);
  if (id === parent) {
    throw new SubstrateError(
      `git branches "${branch}" and "${parentGit}" map to the same database branch "${id}"`,
      "rename one of them; database branch ids ignore case and punctuation",
      "BRANCH_NAME_COLLISION",
    );
  }
  return { branch: id, parent, parentGitBranch: parentGit, isTrunk: false };
}
