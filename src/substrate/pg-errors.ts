import { SubstrateError } from "./provider.js";

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

/** Turn a driver or server error into one a person can act on. */
export function toSubstrateError(
  error: unknown,
  context: { server: string; action: string; database?: string },
): SubstrateError {
  if (error instanceof SubstrateError) return error;
  const e = (error ?? {}) as PgLikeError;
  const code = e.code ?? "";
  const raw =
    e.message ||
    (Array.isArray(e.errors) ? e.errors.map((x) => String((x as Error)?.message ?? x)).join("; ") : "") ||
    String(error);
  const where = `${context.action} on ${context.server}`;
  const make = (message: string, hint: string, c: string) =>
    new SubstrateError(`${where} failed: ${message}`, hint, c, { cause: error });
  switch (code) {
    case "ECONNREFUSED":
    case "ENOTFOUND":
    case "EHOSTUNREACH":
    case "ETIMEDOUT":
    case "EAI_AGAIN":
      return make(
        `the server is unreachable (${code})`,
        "check that the server runs and that the URL's host and port are right",
        "SERVER_UNREACHABLE",
      );
    case "28P01":
    case "28000":
      return make("the server refused the login", "check the user and password in the database URL", "LOGIN_REFUSED");
    case "42501":
      return make(
        raw,
        "the role needs CREATEDB (ALTER ROLE … CREATEDB) and must own the branch databases",
        "PERMISSION_DENIED",
      );
    case "55006":
      return make(
        `${context.database ? `database "${context.database}" ` : ""}is in use by other sessions (${raw})`,
        "close the connections to it (let the migrate or seed step exit) and try again",
        "DATABASE_IN_USE",
      );
    case "53100":
      return make(
        `the server is out of disk space (${raw})`,
        "free disk space on the server, or delete stale branches with `consort db delete`",
        "DISK_FULL",
      );
    case "3D000":
      return make(raw, "the database does not exist: check the URL's database name", "DATABASE_MISSING");
    case "53300":
      return make(
        raw,
        "the server has too many connections: close idle clients or raise max_connections",
        "TOO_MANY_CONNECTIONS",
      );
    case "ECONNRESET":
    case "57P01":
    case "57P02":
    case "57P03":
      return make(
        `the server went away (${raw})`,
        "it crashed, restarted or is starting up: run the command again (nothing half-made is kept)",
        "SERVER_CONNECTION_LOST",
      );
    default:
      if (/Connection terminated|server closed the connection unexpectedly/i.test(raw)) {
        return make(
          `the connection to the server was lost mid-way (${raw})`,
          "the server crashed or restarted: run the command again (nothing half-made is kept; what was left is reaped)",
          "SERVER_CONNECTION_LOST",
        );
      }
      if (/No space left on device|could not extend file|could not write/i.test(raw)) {
        return make(
          `the server is out of disk space (${raw})`,
          "free disk space on the server, or delete stale branches with `consort db delete`",
          "DISK_FULL",
        );
      }
      return make(
        raw,
        "see the server's message above; run again with the same arguments once it is fixed",
        code ? `PG_${code}` : "SUBSTRATE_ERROR",
      );
  }
}
