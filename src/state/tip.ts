import { z } from "zod";
import { STATE_BRANCH } from "./schema.js";

/**
 * Whose commit a commit on `consort/state` is, as GitHub's commit API shows it. The app writes
 * every state commit itself through the API with its installation token and no author, committer
 * or signature of its own: GitHub then makes the app's bot (`<slug>[bot]`) the author and signs
 * the commit ("Signature verification for bots" in GitHub's docs on commit signature
 * verification). Nobody else can produce that pair: an admin's push or web edit has the admin as
 * its author, and a push that claims the bot's e-mail carries no signature of GitHub's.
 */

/** A commit as `GET /repos/{o}/{r}/commits/{ref}` (or its listing) answers, trimmed to what is read. */
export const StateCommit = z.object({
  sha: z.string().regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/),
  /** The GitHub account of the git author; `{}` or null when the author's e-mail names none. */
  author: z.object({ login: z.string().optional() }).nullable().optional(),
  commit: z.object({
    author: z.object({ name: z.string().optional() }).nullable().optional(),
    tree: z.object({ sha: z.string() }).optional(),
    verification: z.object({ verified: z.boolean(), reason: z.string() }).optional(),
  }),
  parents: z.array(z.object({ sha: z.string() })),
  /** The files the commit changed against its first parent, each with its new blob sha (null when removed). */
  files: z
    .array(z.object({ filename: z.string(), sha: z.string().nullable().optional(), status: z.string() }))
    .optional(),
});
export type StateCommit = z.infer<typeof StateCommit>;

/** Why `commit` is not one the app wrote (authored by `appLogin`, signed by GitHub), or undefined when it is. */
export function notTheAppsCommit(commit: StateCommit, appLogin: string): string | undefined {
  const login = commit.author?.login;
  const verification = commit.commit.verification;
  if (login !== undefined && login.toLowerCase() === appLogin.toLowerCase() && verification?.verified === true)
    return undefined;
  const author = login ?? `"${commit.commit.author?.name ?? "unknown"}" (no GitHub account)`;
  const signature = verification?.verified
    ? "signed by GitHub"
    : `not signed by GitHub (${verification?.reason ?? "unsigned"})`;
  return `commit ${commit.sha.slice(0, 7)} on ${STATE_BRANCH} was not written by this app (authored by ${author}, ${signature}; the app's own are authored by ${appLogin} and signed by GitHub): someone pushed to ${STATE_BRANCH} past its ruleset`;
}
