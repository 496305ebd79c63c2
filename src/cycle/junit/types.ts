import { z } from "zod";
import { FlavourSchema, type Flavour } from "../../contracts/runners.js";

/** The runner flavours are the runner table's (src/contracts/runners.ts); the JUnit reader names them too. */
export { FlavourSchema, type Flavour };

/**
 * How one test ended. A RED cycle needs `failed-assertion`: `failed-error` is a crash, a
 * TypeError, a panic, a missing import or a file that did not load, which proves nothing about
 * the behaviour under test.
 */
const TEST_OUTCOMES = ["passed", "failed-assertion", "failed-error", "skipped"] as const;
const TestOutcomeSchema = z.enum(TEST_OUTCOMES);
export type TestOutcome = z.infer<typeof TestOutcomeSchema>;

/**
 * What a failure says is missing: a module (JavaScript's specifier as written, with the file that
 * imported it when the runner says; Python's dotted name), a name a module does not export, or both.
 */
const MissingSchema = z.object({
  language: z.enum(["js", "python"]),
  module: z.string().optional(),
  export: z.string().optional(),
  importer: z.string().optional(),
});
export type Missing = z.infer<typeof MissingSchema>;

const TestCaseResultSchema = z.object({
  /** The test file as the runner wrote it (relative or absolute), when the report says. */
  file: z.string().optional(),
  classname: z.string().optional(),
  /** The test's name exactly as the runner reported it. */
  name: z.string(),
  outcome: TestOutcomeSchema,
  /** First line of the failure or skip reason. */
  message: z.string().optional(),
  /** The error's type when the report gives or implies one (AssertionError, TypeError, panic…). */
  type: z.string().optional(),
  durationMs: z.number().nonnegative().optional(),
  /** Titles of the enclosing suites, outermost first, where the runner nests them (node). */
  suites: z.array(z.string()).optional(),
  /**
   * The runner setting that likely made the report unable to say more (a failure written without
   * its stack trace), and how to change it: a person can act on it.
   */
  hint: z.string().optional(),
  /** A missing module or export the failure names (see ./missing.ts). */
  missing: MissingSchema.optional(),
  /**
   * Surefire: the class its report file is named after (TEST-<class>.xml), which still says the
   * package when the report writes classes by their display names.
   */
  reportClass: z.string().optional(),
});
export type TestCaseResult = z.infer<typeof TestCaseResultSchema>;

const LoadErrorSchema = z.object({
  /** The file that failed to load, compile or import, when the report names it. */
  file: z.string().optional(),
  /** The class or package that failed, for runners that name those instead of files. */
  classname: z.string().optional(),
  message: z.string(),
  /** A missing module or export the failure names (see ./missing.ts). */
  missing: MissingSchema.optional(),
});
export type LoadError = z.infer<typeof LoadErrorSchema>;

export const JUnitReportSchema = z.object({
  flavour: FlavourSchema,
  tests: z.array(TestCaseResultSchema),
  /** Files, classes or packages that failed before their tests could run. */
  loadErrors: z.array(LoadErrorSchema),
  /** The latest timestamp any suite carries, as written (zones differ by runner). */
  timestamp: z.string().optional(),
  /** Go: the module's path, from go.mod at the checkout's root; the root package's import path. */
  goModule: z.string().optional(),
});
export type JUnitReport = z.infer<typeof JUnitReportSchema>;

export type JUnitErrorCode = "malformed-xml" | "not-junit" | "bad-option" | "no-report" | "stale-report";

/** The report cannot be read as JUnit at all: the cycle must refuse, never guess. */
export class JUnitError extends Error {
  override readonly name = "JUnitError";
  constructor(
    readonly code: JUnitErrorCode,
    message: string,
  ) {
    super(message);
  }
}
