import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { simpleGit } from "simple-git";

/**
 * The default branch of a checkout, as every local reader takes it (the local lane's replay, a
 * local cycle's request and its test base): one order, so none of them takes a feature branch that
 * the clone's cached `origin/HEAD` happens to name.
 */

/** No default branch could be told; `hint` says what the person runs to name one. */
export class DefaultBranchError extends Error {
  readonly code = "NO_DEFAULT_BRANCH";
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = "DefaultBranchError";
  }
}

/** A default branch and where it was read, as the CLI says it. */
export interface DefaultBranch {
  name: string;
  ref: string;
  source: string;
}

/** How long the remote is asked for its default before the checkout's own refs answer. */
const REMOTE_TIMEOUT_MS = 5_000;

/**
 * The default branch as the repository configures it: `git config consort.defaultBranch` when a
 * person set it, else the remote's own HEAD (asked with `git ls-remote`, its configured default),
 * else main or master, else the clone's `origin/HEAD`. That last is only a cached pointer, which
 * `git remote set-head` or an old clone may have left on a feature branch, so it comes last.
 */
export async function defaultBranchOf(repoPath: string): Promise<DefaultBranch> {
  const git = simpleGit(repoPath);
  const refFor = async (name: string) => {
    for (const ref of [`refs/remotes/origin/${name}`, `refs/heads/${name}`]) {
      // simple-git resolves a failed `--quiet` call with no output, so the output decides.
      const found = await git
        .raw(["rev-parse", "--verify", "--quiet", ref])
        .then((sha) => sha.trim() !== "")
        .catch(() => false);
      if (found) return ref;
    }
    return undefined;
  };
  const configured = (await git.raw(["config", "--get", "consort.defaultBranch"]).catch(() => "")).trim();
  if (configured) {
    const ref = await refFor(configured);
    if (ref) return { name: configured, ref, source: "git config consort.defaultBranch" };
    throw new DefaultBranchError(
      `git config consort.defaultBranch names ${configured}, which this checkout does not have.`,
      `Fetch it (git fetch origin ${configured}) or correct the setting (git config consort.defaultBranch <branch>).`,
    );
  }
  const asked = await remoteHead(repoPath);
  if (asked.name) {
    const ref = await refFor(asked.name);
    if (ref) return { name: asked.name, ref, source: "origin's HEAD (git ls-remote --symref origin HEAD)" };
  }
  const why = asked.name ? `origin's default ${asked.name} is not fetched` : `origin could not be asked: ${asked.why}`;
  for (const name of ["main", "master"]) {
    const ref = await refFor(name);
    if (ref)
      return {
        name,
        ref,
        source: `the ${ref.startsWith("refs/heads/") ? "local" : "remote-tracking"} branch ${name} (${why}; git config consort.defaultBranch <branch> decides)`,
      };
  }
  const originHead = (await git.raw(["symbolic-ref", "--quiet", "refs/remotes/origin/HEAD"]).catch(() => "")).trim();
  if (originHead)
    return {
      name: originHead.replace(/^refs\/remotes\/origin\//, ""),
      ref: originHead,
      source: `the clone's origin/HEAD (${why}; git config consort.defaultBranch <branch> decides)`,
    };
  throw new DefaultBranchError(
    `Could not tell the default branch of ${repoPath}: ${why}, and there is no main, master or origin/HEAD.`,
    "Name it: git config consort.defaultBranch <branch> (or fetch origin).",
  );
}

/** How long one process trusts the remote's answer (or its silence): a board refreshes often, offline too. */
const REMOTE_ANSWER_TTL_MS = 10 * 60_000;
const remoteAnswers = new Map<string, { at: number; answer: Promise<{ name?: string; why: string }> }>();

/** The branch origin's HEAD names on the remote itself, or why it could not be asked; asked once per ten minutes. */
function remoteHead(repoPath: string): Promise<{ name?: string; why: string }> {
  const kept = remoteAnswers.get(repoPath);
  if (kept && Date.now() - kept.at < REMOTE_ANSWER_TTL_MS) return kept.answer;
  const answer = askRemoteHead(repoPath);
  remoteAnswers.set(repoPath, { at: Date.now(), answer });
  return answer;
}

async function askRemoteHead(repoPath: string): Promise<{ name?: string; why: string }> {
  const remote = (
    await simpleGit(repoPath)
      .raw(["remote"])
      .catch(() => "")
  )
    .split("\n")
    .includes("origin");
  if (!remote) return { why: "the checkout has no remote named origin" };
  try {
    // Never a prompt for credentials: a remote that wants them answers as unreachable.
    const { stdout: out } = await promisify(execFile)("git", ["ls-remote", "--symref", "origin", "HEAD"], {
      cwd: repoPath,
      timeout: REMOTE_TIMEOUT_MS,
      env: { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_SSH_COMMAND: "ssh -o BatchMode=yes" },
    });
    const name = /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(out)?.[1];
    return name ? { name, why: "" } : { why: "it names no HEAD branch" };
  } catch (error) {
    return { why: (error instanceof Error ? error.message : String(error)).split("\n")[0]!.trim() };
  }
}
