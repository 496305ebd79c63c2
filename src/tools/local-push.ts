import picomatch from "picomatch";
import { simpleGit } from "simple-git";
import type { ConsortConfig } from "../config/consort-config.js";
import { commandFolders, configuredCommands, isRunnerConfigPath, touchesBeyondConsort } from "../gates/runner-reach.js";
import { runnerPathsToRead, type ChangedPath, type PushedCommit, type PushEvent } from "../orchestrator/index.js";
import { ToolError } from "./errors.js";

/**
 * The commits a push of the checkout would deliver, built from local git exactly as the app
 * builds them from GitHub's compare API: message, changed paths, and the text of every path the
 * machine reads (`.consort/**` and test files). Used to explain, before pushing, what the app
 * would decide; nothing is pushed and no state is written.
 */

const STATUS: Record<string, ChangedPath["status"]> = {
  A: "added",
  M: "modified",
  D: "removed",
  R: "renamed",
  C: "copied",
  T: "changed",
};

/** GitHub's noreply address (`123+login@users.noreply.github.com`) tells the login; other addresses do not. */
function loginFromEmail(email: string): string | null {
  const match = /^(?:\d+\+)?([A-Za-z0-9](?:[A-Za-z0-9-]|\[bot\])*)@users\.noreply\.github\.com$/i.exec(email.trim());
  return match ? match[1]! : null;
}

export async function localPush(
  repoPath: string,
  fromHead: string,
  config: ConsortConfig,
  at: string,
): Promise<PushEvent> {
  const git = simpleGit(repoPath);
  const head = (await git.revparse(["HEAD"])).trim();
  let shas: string[];
  try {
    shas = (await git.raw(["rev-list", "--reverse", `${fromHead}..${head}`])).split("\n").filter(Boolean);
  } catch {
    throw new ToolError(
      `The checkout does not contain the track's last accepted commit ${fromHead.slice(0, 12)}.`,
      "Fetch the track's branch (git fetch) so the local commits can be compared with what the app accepted.",
      "UNKNOWN_HEAD",
    );
  }
  // The push is forced when the accepted commit is not in the new history.
  const isAncestor =
    head === fromHead ||
    (await git
      .raw(["merge-base", "--is-ancestor", fromHead, head])
      .then(() => true)
      .catch(() => false));
  const globs = picomatch([".consort/**", ...config.paths.tests, ...config.paths.code], { dot: true });
  const commands = Object.values(configuredCommands(config.commands));
  const reads = (path: string) => globs(path) || isRunnerConfigPath(path, commands);
  /** A path's text at a commit; null where it has none (or the commit is the root's parent). */
  const textAt = (ref: string, path: string) => git.raw(["show", `${ref}:${path}`]).catch(() => null);
  const commits: PushedCommit[] = [];
  for (const sha of shas) {
    const [email = "", ...body] = (await git.raw(["log", "-1", "--format=%ae%n%B", sha])).split("\n");
    const message = body.join("\n");
    const changes = parseNameStatus(
      await git.raw(["diff-tree", "--no-commit-id", "-r", "-M", "--name-status", "--root", sha]),
    );
    const files: Record<string, string | null> = {};
    for (const change of changes) {
      // A rename also removes its old path; a copy leaves its source as it was.
      const paths =
        change.status === "renamed" && change.previousPath ? [change.path, change.previousPath] : [change.path];
      for (const path of paths) {
        if (!reads(path) || path in files) continue;
        const removed = change.status === "removed" || path !== change.path;
        files[path] = removed ? null : await git.raw(["show", `${sha}:${path}`]);
      }
    }
    // The runner's configuration is compared before and after the commit (see runnerConfigChanges).
    const before: Record<string, string | null> = {};
    // And the package.json files whose scripts say what the test command runs (read locally, so always).
    const packages = changes.some(touchesBeyondConsort)
      ? ["package.json", ...commandFolders(commands).map((dir) => `${dir}/package.json`)]
      : [];
    for (const path of [...runnerPathsToRead(changes, config), ...packages])
      before[path] = await textAt(`${sha}^`, path);
    commits.push({
      sha,
      authorLogin: loginFromEmail(email),
      message: message.replace(/\n+$/, ""),
      changes,
      files,
      before,
    });
  }
  return { type: "push", at, before: fromHead, after: head, forced: !isAncestor, commits };
}

function parseNameStatus(output: string): ChangedPath[] {
  const changes: ChangedPath[] = [];
  for (const line of output.split("\n").filter(Boolean)) {
    const [code = "", first = "", second] = line.split("\t");
    const status = STATUS[code[0] ?? ""] ?? "changed";
    if ((status === "renamed" || status === "copied") && second)
      changes.push({ path: second, status, previousPath: first });
    else changes.push({ path: first, status });
  }
  return changes;
}
