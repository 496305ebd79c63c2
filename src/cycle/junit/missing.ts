import type { Flavour, Missing } from "./types.js";

/**
 * What a failure's text says is missing (a module, or a name a module does not export) and what
 * shows it crashed rather than failed an assertion, runner by runner as their real reports word it.
 * The cycle uses the first to tell a module the architecture declares and nobody wrote yet from any
 * other missing import, and the second so that no assertion wrapper (`.resolves`, `not.toThrow`,
 * `assert.doesNotReject`, `pytest.fail`) turns a crash into an assertion failure.
 */

/** An error header (`TypeError: `, `TypeError [Error]: `, `[TypeError: `) of a crash, never an assertion. */
const CRASH_HEADER =
  /(^|[\s"'[(])(TypeError|ReferenceError|SyntaxError|RangeError|ModuleNotFoundError|ImportError|AttributeError|NameError)(\s*\[[^\]]*\])?:\s/m;
/** The words runners use for a module or export that is not there. */
const MISSING_WORDS =
  /Cannot find module '|Cannot find package '|ERR_MODULE_NOT_FOUND|\bMODULE_NOT_FOUND\b|Failed to load url |does not provide an export named|No module named '|cannot import name '|\bis not a (function|constructor)\b/;

/** A code frame line (`> 10 | expect(…)`, `   | ^`) or a stack frame: the test's source, not what happened. */
const SOURCE_LINE = /^\s*(>\s*)?(\d+\s*)?\|/;
const STACK_LINE = /^\s*at\s/;

/**
 * The lines of a failure that say what happened: without code frames and stack frames, and for
 * pytest only its `E` lines (the rest is the test's own source, which may name any error).
 */
/** How much of a failure's text is read: what happened is said at its top, and a body may be megabytes. */
const READ_AT_MOST = 16_384;

function whatHappened(flavour: Flavour, message: string | undefined, text: string): string {
  const lines = text.slice(0, READ_AT_MOST).split("\n");
  const kept =
    flavour === "pytest"
      ? lines.filter((line) => /^E\s/.test(line))
      : lines.filter((line) => !SOURCE_LINE.test(line) && !STACK_LINE.test(line));
  return [message ?? "", ...kept].join("\n");
}

/** True when a failure's message or text shows a crash: a missing module or export, a load error, a TypeError. */
export function showsCrash(flavour: Flavour, message: string | undefined, text: string): boolean {
  const happened = whatHappened(flavour, message, text);
  return CRASH_HEADER.test(happened) || MISSING_WORDS.test(happened);
}

/** The error a crash text names first (`TypeError`), or "a missing module" for the words alone. */
export function crashName(flavour: Flavour, message: string | undefined, text: string): string {
  const happened = whatHappened(flavour, message, text);
  return CRASH_HEADER.exec(happened)?.[2] ?? "a missing module or export";
}

const quoted = (text: string) => text.replace(/\\'/g, "'");

/**
 * What a failure says is missing, in the forms real runs wrote (see test/cycle/junit/fixtures/
 * <runner>/report-new-module.xml): JavaScript's module specifier and the file that imported it, the
 * export a module lacks, Python's dotted module and name. Undefined when the text names nothing.
 */
export function whatIsMissing(flavour: Flavour, message: string | undefined, text: string): Missing | undefined {
  const happened = whatHappened(flavour, message, text);
  // node and vitest (ESM): Cannot find module '/abs/src/pricing.js' imported from /abs/test/x.test.js
  // jest: Cannot find module '../src/pricing.cjs' from 'test/x.test.cjs'; CommonJS: ... Require stack:\n- /abs/test/x.js
  const module =
    /Cannot find module '((?:\\'|[^'\n…])+)'(?:\s+imported from\s+(\S+?)(?=&quot;|["'\]\s]|$)|\s+from\s+'([^']+)'|\s*\n?\s*Require stack:\s*\n?\s*-\s*(\S+?)(?=&quot;|["'\]\s]|$))?/.exec(
      happened,
    );
  if (module)
    return {
      language: "js",
      module: quoted(module[1]!),
      ...(module[2] || module[3] || module[4] ? { importer: (module[2] ?? module[3] ?? module[4])! } : {}),
    };
  // vitest (older): Failed to load url ../src/pricing.js (resolved id: ...) in /abs/test/x.test.ts
  const url = /Failed to load url (\S+)(?: \(resolved id: [^)]*\))?(?: in (\S+?)(?=[.\s]|$))?/.exec(happened);
  if (url) return { language: "js", module: url[1]!, ...(url[2] ? { importer: url[2] } : {}) };
  const named = /The requested module '((?:\\'|[^'\n…])+)' does not provide an export named '([^']+)'/.exec(happened);
  if (named) return { language: "js", module: quoted(named[1]!), export: named[2]! };
  // `bulkDiscount is not a function`, `discounts.bulkDiscount …`, `(0 , _pricing.priceFor) …`: the name, not the module.
  const call = /([A-Za-z_$][\w$]*)\)? is not a (?:function|constructor)/.exec(happened);
  if (call) return { language: "js", export: call[1]! };
  const pyModule = /No module named '([\w.]+)'/.exec(happened);
  if (pyModule) return { language: "python", module: pyModule[1]! };
  const pyName = /cannot import name '(\w+)' from '([\w.]+)'/.exec(happened);
  if (pyName) return { language: "python", module: pyName[2]!, export: pyName[1]! };
  const pyAttribute = /module '([\w.]+)' has no attribute '(\w+)'/.exec(happened);
  if (pyAttribute) return { language: "python", module: pyAttribute[1]!, export: pyAttribute[2]! };
  return undefined;
}
