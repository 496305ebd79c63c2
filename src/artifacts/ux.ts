import { z } from "zod";
import { StoryId } from "../contracts/ids.js";

/** `.consort/ux.json` (contract, optional), by the UX Designer: screens and their states for user-facing stories. */

const text = z.string().trim().min(1);

const Screen = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9-]*$/, "a lower-case id such as stock-by-location"),
    purpose: text,
    stories: z.array(StoryId).min(1),
    /** Each state the screen can be in (loading, empty, error, filled…) and what it shows. */
    states: z.array(z.object({ name: text, shows: text }).strict()).min(1, "describe at least one state"),
  })
  .strict();

export const Ux = z
  .object({
    screens: z.array(Screen).min(1),
  })
  .strict();
export type Ux = z.infer<typeof Ux>;
