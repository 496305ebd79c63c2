import { z } from "zod";
import { InvariantId, NfrId, StoryId } from "../contracts/ids.js";

/**
 * `.consort/architecture.json` (contract), by the Architect Reviewer: layers and what each may
 * import, the modules, the persistence invariants the database must hold, how NFRs are met.
 */

const text = z.string().trim().min(1);
const name = z.string().regex(/^[a-z][a-z0-9-]*$/, "a lower-case name such as routes or stock-service");

const Layer = z
  .object({
    name,
    /** Globs of the source files in this layer, e.g. `src/routes/**`. */
    paths: z.array(text).min(1),
    /** Layers this one may import from (by name); anything else is a layering violation. */
    mayImport: z.array(name).default([]),
    role: text.optional(),
  })
  .strict();
type Layer = z.infer<typeof Layer>;

const Module = z
  .object({
    name,
    layer: name,
    path: text,
    responsibility: text,
    stories: z.array(StoryId).default([]),
    /**
     * The names the module exports that tests import. A RED may fail because one of them is not
     * written yet (in a module the track creates); any other missing name is a crash.
     */
    exports: z.array(z.string().regex(/^[A-Za-z_$][\w$]*$/, "an identifier such as priceFor")).optional(),
  })
  .strict();
type Module = z.infer<typeof Module>;

const INVARIANT_KINDS = ["unique", "not-null", "check", "foreign-key", "transaction", "migration", "other"] as const;

const PersistenceInvariant = z
  .object({
    id: InvariantId,
    kind: z.enum(INVARIANT_KINDS),
    /** The table it is about (must be in db-design.json), when it is about one. */
    table: z.string().min(1).optional(),
    statement: text,
    stories: z.array(StoryId).min(1, "name the stories that rely on this invariant"),
  })
  .strict();
type PersistenceInvariant = z.infer<typeof PersistenceInvariant>;

export const Architecture = z
  .object({
    layers: z.array(Layer).min(1, "declare at least one layer"),
    modules: z.array(Module).default([]),
    persistenceInvariants: z.array(PersistenceInvariant).default([]),
    /** How the architecture meets the spec's NFRs. */
    nfrs: z.array(z.object({ nfr: NfrId, approach: text }).strict()).default([]),
  })
  .strict();
export type Architecture = z.infer<typeof Architecture>;
