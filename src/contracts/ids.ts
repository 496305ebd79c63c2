import { z } from "zod";

/** Identifier formats shared by every design artifact (ids are how artifacts refer to each other). */

const FEATURE_ID = /^F[1-9]\d*$/;
const STORY_ID = /^S[1-9]\d*$/;
const AC_ID = /^S[1-9]\d*-AC[1-9]\d*$/;
const TEST_ID = /^T[1-9]\d*$/;
const INVARIANT_ID = /^INV[1-9]\d*$/;
const NFR_ID = /^NFR[1-9]\d*$/;

export const FeatureId = z.string().regex(FEATURE_ID, "a feature id such as F1");
export const StoryId = z.string().regex(STORY_ID, "a story id such as S1");
export const AcId = z.string().regex(AC_ID, "an acceptance-criterion id such as S1-AC2");
export const TestId = z.string().regex(TEST_ID, "a test id such as T3");
export const InvariantId = z.string().regex(INVARIANT_ID, "a persistence-invariant id such as INV2");
export const NfrId = z.string().regex(NFR_ID, "a non-functional requirement id such as NFR1");

/** A repository-relative path with forward slashes: no leading slash, no `..`, no backslash. */
export const RepoPath = z
  .string()
  .min(1)
  .refine(
    (p) => {
      const parts = p.split("/");
      return !p.startsWith("/") && !p.includes("\\") && !parts.includes("..") && !parts.includes("");
    },
    {
      message: "a repository-relative path such as test/stock.test.ts (forward slashes, no leading slash, no ..)",
    },
  );

/** The story an acceptance-criterion id belongs to: `S1-AC2` → `S1`. */
export function storyOfAc(ac: string): string {
  return ac.slice(0, ac.indexOf("-AC"));
}
