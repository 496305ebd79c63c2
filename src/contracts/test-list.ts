import { z } from "zod";
import { AcId, InvariantId, RepoPath, TestId } from "./ids.js";

/**
 * `.consort/test-list.json` (contract): the Test Strategist's ordered list of the tests the build
 * lane drives one RED/GREEN at a time. Order is the build order; ids run T1, T2, … Tn in that order.
 */

const TEST_KINDS = ["behavior", "fitness", "client"] as const;
const TestKind = z.enum(TEST_KINDS);
type TestKind = z.infer<typeof TestKind>;

export const TestListEntry = z
  .object({
    /** `T1` … `Tn`, in list order. */
    id: TestId.describe("T1 … Tn, in list order"),
    /** The acceptance criterion this test proves, e.g. `S1-AC2`. */
    ac: AcId.describe("the acceptance criterion this test proves, e.g. S1-AC2"),
    /** The test file, relative to the repository root (must match the configured test globs). */
    file: RepoPath.describe("the test file, relative to the repository root; must match the configured test globs"),
    /** The exact title the test runner reports for this test (JUnit `testcase` name). */
    title: z.string().trim().min(1).describe("exactly the name the test runner reports (JUnit testcase name)"),
    /** behavior: through the public boundary; fitness: architecture/persistence rules; client: UI or API client. */
    kind: TestKind.describe(
      "behavior: through the public boundary; fitness: architecture rules; client: through a UI or API client",
    ),
    /** The persistence invariant this test proves, e.g. `INV2` (from architecture.json). */
    invariant: InvariantId.optional().describe("the persistence invariant (architecture.json) this test proves"),
  })
  .strict();
export type TestListEntry = z.infer<typeof TestListEntry>;

export const TestList = z
  .object({
    tests: z.array(TestListEntry).min(1, "list at least one test"),
  })
  .strict()
  .superRefine((list, ctx) => {
    const titles = new Map<string, number>();
    list.tests.forEach((test, index) => {
      const expected = `T${index + 1}`;
      if (test.id !== expected) {
        ctx.addIssue({
          code: "custom",
          path: ["tests", index, "id"],
          message: `test ids run T1…Tn in list order: entry ${index + 1} must be ${expected}, not ${test.id}`,
          params: { fix: "renumber the list" },
        });
      }
      const key = `${test.file}\u0000${test.title}`;
      const first = titles.get(key);
      if (first !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["tests", index, "title"],
          message: `${test.id} has the same file and title as ${list.tests[first]!.id}; the runner could not tell them apart: give each test its own title`,
        });
      } else titles.set(key, index);
    });
  });
export type TestList = z.infer<typeof TestList>;
