import { z } from "zod";

/** The eight roles' names (docs/ARCHITECTURE.md, Tracks, artifacts and roles); what each owns is src/roles' to say. */

/** The roles' ids: the `Consort-Role:` trailer values and the keys of `roles:` in `.github/consort.yml`. */
export const ROLE_NAMES = [
  "product-owner",
  "spec-author",
  "architect",
  "dba",
  "test-strategist",
  "ux-designer",
  "navigator",
  "driver",
] as const;
export const RoleName = z.enum(ROLE_NAMES);
export type RoleName = z.infer<typeof RoleName>;
