import { ROLE_NAMES, RoleName } from "../contracts/roles.js";

/** The commit trailer every commit on a track carries: `Consort-Role: <role>` (docs/ARCHITECTURE.md, Tracks, artifacts and roles). */
export const ROLE_TRAILER = "Consort-Role";

export type RoleClaim = { ok: true; role: RoleName } | { ok: false; reason: string };

/**
 * The role a commit message claims. Trailers are `Key: value` lines in the message's last
 * paragraph (after the subject), as `git interpret-trailers` reads them; the key is case-insensitive.
 */
export function readRoleTrailer(message: string): RoleClaim {
  const paragraphs = message
    .replace(/\r\n?/g, "\n")
    .trim()
    .split(/\n[ \t]*\n/);
  const values: string[] = [];
  if (paragraphs.length >= 2) {
    for (const line of paragraphs.at(-1)!.split("\n")) {
      const match = /^([A-Za-z0-9-]+)\s*:\s*(.*?)\s*$/.exec(line);
      if (match && match[1]!.toLowerCase() === ROLE_TRAILER.toLowerCase()) values.push(match[2]!);
    }
  }
  if (values.length === 0)
    return {
      ok: false,
      reason: `no ${ROLE_TRAILER} trailer: end the commit message with a blank line and \`${ROLE_TRAILER}: <role>\` (one of ${ROLE_NAMES.join(", ")})`,
    };
  const distinct = [...new Set(values)];
  if (distinct.length > 1)
    return {
      ok: false,
      reason: `the commit claims ${distinct.length} roles (${distinct.join(", ")}): one commit, one role`,
    };
  const claimed = distinct[0]!;
  const role = RoleName.safeParse(claimed);
  if (!role.success)
    return {
      ok: false,
      reason: `unknown role "${claimed}" in the ${ROLE_TRAILER} trailer: use one of ${ROLE_NAMES.join(", ")}`,
    };
  return { ok: true, role: role.data };
}
