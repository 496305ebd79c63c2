import { z } from "zod";
import { AcId, FeatureId, NfrId, StoryId } from "../contracts/ids.js";

/**
 * `.consort/spec.json` (contract). The Product Owner writes the feature, its stories and their
 * acceptance criteria; the Spec Author refines the text and adds the non-functional requirements.
 */

const text = z.string().trim().min(1);

const AcceptanceCriterion = z
  .object({
    id: AcId,
    given: text,
    when: text,
    then: text,
  })
  .strict();
type AcceptanceCriterion = z.infer<typeof AcceptanceCriterion>;

const Story = z
  .object({
    id: StoryId,
    title: text,
    asA: text,
    iWant: text,
    soThat: text,
    /** A person uses it through a screen: the UX Designer then designs its screens and states. */
    userFacing: z
      .boolean()
      .default(false)
      .describe("a person uses it through a screen: the UX Designer then designs it"),
    acceptanceCriteria: z.array(AcceptanceCriterion).min(1, "give each story at least one acceptance criterion"),
    /** Anything the Spec Author adds: edge cases, examples, what is out of scope. */
    notes: z.array(text).optional(),
  })
  .strict();
type Story = z.infer<typeof Story>;

const NFR_CATEGORIES = [
  "validation",
  "security",
  "performance",
  "reliability",
  "layering",
  "configuration",
  "observability",
  "accessibility",
  "other",
] as const;

const NonFunctionalRequirement = z
  .object({
    id: NfrId,
    category: z.enum(NFR_CATEGORIES),
    statement: text,
    /** The stories it constrains; empty means the whole feature. */
    stories: z.array(StoryId).default([]),
  })
  .strict();
type NonFunctionalRequirement = z.infer<typeof NonFunctionalRequirement>;

export const Spec = z
  .object({
    feature: z
      .object({
        id: FeatureId,
        title: text,
        summary: text,
      })
      .strict(),
    stories: z.array(Story).min(1, "list at least one story"),
    /** Added by the Spec Author; required once the spec step is done (an empty list says "none"). */
    nfrs: z
      .array(NonFunctionalRequirement)
      .optional()
      .describe("added by the Spec Author; required from the spec step on (an empty list says none)"),
  })
  .strict();
export type Spec = z.infer<typeof Spec>;

/** Whether a spec's text names a user-facing story (the track then designs screens); a spec that does not parse names none. */
export function hasUserFacingStory(text: string | undefined): boolean {
  if (text === undefined) return false;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return false;
  }
  return Spec.safeParse(json).data?.stories.some((story) => story.userFacing) ?? false;
}
