/** A collaborator's role on a repository, most to least. */
export const PERMISSIONS = ["admin", "maintain", "write", "triage", "read", "none"] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** True for roles that can push: the only ones whose approval GitHub (and Consort) counts. */
export function canWrite(permission: Permission): boolean {
  return permission === "admin" || permission === "maintain" || permission === "write";
}
