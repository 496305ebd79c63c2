import { z } from "zod";

/** What the Navigator decides about a build unit. */
export const REVIEW_VERDICTS = z.enum(["accept", "refactor"]);

/** `.consort/reviews/<unit>.json` (contract), by the Navigator after a verified GREEN. */
export const ReviewVerdict = z
  .object({
    /** The build unit reviewed: a test id (`T3`) or, with granularity `ac`, an AC id (`S1-AC2`). */
    unit: z.string().regex(/^(?:T[1-9]\d*|S[1-9]\d*-AC[1-9]\d*)$/, "a test id such as T3 or an AC id such as S1-AC2"),
    verdict: REVIEW_VERDICTS,
    /** What was looked at and, for `refactor`, what the Driver should change. */
    notes: z
      .array(z.string().trim().min(1))
      .default([])
      .describe("what was checked; for refactor, what the Driver should change"),
  })
  .strict()
  .superRefine((review, ctx) => {
    if (review.verdict === "refactor" && review.notes.length === 0) {
      ctx.addIssue({
        code: "custom",
        path: ["notes"],
        message: "a refactor verdict needs notes: say what the Driver should change",
      });
    }
  });
export type ReviewVerdict = z.infer<typeof ReviewVerdict>;
