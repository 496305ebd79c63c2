import { SubstrateError } from "./provider.js";
import { consortCommand } from "../contracts/command.js";

/** Where a server is, without its password: for messages and logs. */
export function describeServer(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || "5432"} as ${decodeURIComponent(u.username) || "(default user)"}`;
  } catch {
    return "(an unparseable URL)";
  }
}

interface PgLikeError {
  code?: string;
  message?: string;
  errors?: unknown[];
}

interface ErrorContext {
  server: string;
  action: string;
  database?: string;
}

/**
 * What each kind of failure means and what fixes it, matched in order by the driver's or server's
 * code, or by the message where the driver gives no code (a connection cut mid-way, a full disk).
 */
const KNOWN_ERRORS: readonly {
  kind: string;
  codes: readonly string[];
  pattern?: RegExp;
  message: (raw: string, code: string, context: ErrorContext) => string;
  hint: string;
}[] = [
  {
    kind: "SERVER_UNREACHABLE",
    codes: ["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ETIMEDOUT", "EAI_AGAIN"],
    message: (_raw, code) => `the server is unreachable (${code})`,
    hint: "check that the server runs and that the URL's host and port are right",
  },
  {
    kind: "LOGIN_REFUSED",
    codes: ["28P01", "28000"],
    message: () => "the server refused the login",
    hint: "check the user and password in the database URL",
  },
  {
    kind: "PERMISSION_DENIED",
    codes: ["42501"],
    message: (raw) => raw,
    hint: "the role needs CREATEDB (ALTER ROLE … CREATEDB) and must own the branch databases",
  },
  {
    kind: "DATABASE_IN_USE",
    codes: ["55006"],
    message: (raw, _code, context) =>
      `${context.database ? `database "${context.database}" ` : ""}is in use by other sessions (${raw})`,
    hint: "close the connections to it (let the migrate or seed step exit) and try again",
  },
  {
    kind: "SERVER_CONNECTION_LOST",
    codes: [],
    pattern: /Connection terminated|server closed the connection unexpectedly|has encountered a connection error/i,
    message: (raw) => `the connection to the server was lost mid-way (${raw})`,
    hint: "the server crashed or restarted: run the command again (nothing half-made is kept; what was left is reaped)",
  },
  {
    kind: "DISK_FULL",
    codes: ["53100"],
    pattern: /No space left on device|could not extend file|could not write/i,
    message: (raw) => `the server is out of disk space (${raw})`,
    hint: `free disk space on the server, or delete stale branches with \`${consortCommand("db delete")}\``,
  },
  {
    kind: "DATABASE_MISSING",
    codes: ["3D000"],
    message: (raw) => raw,
    hint: "the database does not exist: check the URL's database name",
  },
  {
    kind: "TOO_MANY_CONNECTIONS",
    codes: ["53300"],
    message: (raw) => raw,
    hint: "the server has too many connections: close idle clients or raise max_connections",
  },
  {
    kind: "SERVER_CONNECTION_LOST",
    codes: ["ECONNRESET", "57P01", "57P02", "57P03"],
    message: (raw) => `the server went away (${raw})`,
    hint: "it crashed, restarted or is starting up: run the command again (nothing half-made is kept)",
  },
];

/** Turn a driver or server error into one a person can act on. */
export function toSubstrateError(error: unknown, context: ErrorContext): SubstrateError {
  if (error instanceof SubstrateError) return error;
  const e = (error ?? {}) as PgLikeError;
  const code = e.code ?? "";
  const raw =
    e.message ||
    (Array.isArray(e.errors) ? e.errors.map((x) => String((x as Error)?.message ?? x)).join("; ") : "") ||
    String(error);
  const known = KNOWN_ERRORS.find((k) => k.codes.includes(code)) ?? KNOWN_ERRORS.find((k) => k.pattern?.test(raw));
  const message = known ? known.message(raw, code, context) : raw;
  const hint = known?.hint ?? "see the server's message above; run again with the same arguments once it is fixed";
  const kind = known?.kind ?? (code ? `PG_${code}` : "SUBSTRATE_ERROR");
  return new SubstrateError(`${context.action} on ${context.server} failed: ${message}`, hint, kind, { cause: error });
}
