import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureLocalServer, stopLocalServer } from "../../src/substrate/local-server.js";
import { describe, expect, it } from "vitest";
import { EnvError, loadEnv } from "../../src/config/env.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Run `npm start`'s entry with a controlled environment; resolve on exit or when `until` matches. */
async function start(env: Record<string, string>, until?: RegExp): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    if (until?.test(output)) child.kill("SIGTERM");
  };
  child.stdout.on("data", collect);
  child.stderr.on("data", collect);
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const [code] = (await once(child, "exit")) as [number | null];
  clearTimeout(timer);
  return { code, output };
}

describe("booting the app", () => {
  it("in production without credentials exits 1 naming every missing variable", async () => {
    const { code, output } = await start({ NODE_ENV: "production" });
    expect(code).toBe(1);
    for (const name of ["APP_ID", "PRIVATE_KEY", "WEBHOOK_SECRET", "CONSORT_STATE_KEY"]) {
      expect(output).toContain(`${name} is missing`);
    }
  });

  /** `npm start` on a fresh port with the embedded Postgres in `dataDir`; resolves once it is ready. */
  async function startWithEmbedded(dataDir: string) {
    const port = String(3900 + Math.floor(Math.random() * 90));
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/root",
        PORT: port,
        NODE_ENV: "development",
        CONSORT_DATA_DIR: dataDir,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const seen = { output: "" };
    child.stdout.on("data", (chunk: Buffer) => (seen.output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (seen.output += chunk.toString()));
    let page = "";
    for (let attempt = 0; attempt < 150 && !page; attempt++) {
      await new Promise((r) => setTimeout(r, 200));
      page = await fetch(`http://127.0.0.1:${port}/probot`).then(
        (r) => (r.ok ? r.text() : ""),
        () => "",
      );
    }
    for (let attempt = 0; attempt < 300 && !/embedded Postgres (ready|could not start)/.test(seen.output); attempt++) {
      await new Promise((r) => setTimeout(r, 200));
    }
    /** Ctrl-C, and what the process said until it exited. */
    const interrupt = async () => {
      const exited = once(child, "exit");
      child.kill("SIGINT");
      const [code] = (await exited) as [number | null];
      return { code, output: seen.output };
    };
    return { child, page, seen, interrupt };
  }

  function embeddedDataDir(): { parent: string; dataDir: string } {
    const parent = mkdtempSync(join(tmpdir(), "consort-boot-pg-"));
    chmodSync(parent, 0o755); // as root, the server runs as the postgres user, who must reach it
    return { parent, dataDir: join(parent, "postgres") };
  }

  it("without credentials outside production serves Probot's setup page, brings up the embedded Postgres, and Ctrl-C stops it", async () => {
    const { parent, dataDir } = embeddedDataDir();
    const app = await startWithEmbedded(dataDir);
    try {
      expect(app.page).toContain("Register GitHub App");
      expect(app.seen.output).toContain("embedded Postgres ready");
      const { code, output } = await app.interrupt();
      expect(code).toBe(0);
      expect(output).toContain(`SIGINT: stopping the embedded Postgres this process started (data in ${dataDir})`);
      expect(output).toContain("[consort] embedded Postgres stopped");
      expect(await stopLocalServer(dataDir)).toBe(false);
    } finally {
      app.child.kill("SIGKILL");
      await stopLocalServer(dataDir).catch(() => false);
      rmSync(parent, { recursive: true, force: true });
    }
  }, 90_000);

  it("Ctrl-C leaves an embedded Postgres it found running, and says so and how to stop it", async () => {
    const { parent, dataDir } = embeddedDataDir();
    const running = await ensureLocalServer({ dataDir });
    const app = await startWithEmbedded(dataDir);
    try {
      expect(app.seen.output).toContain("embedded Postgres ready");
      const { code, output } = await app.interrupt();
      expect(code).toBe(0);
      expect(output).toContain(
        `SIGINT: the embedded Postgres on port ${running.port} (data in ${dataDir}) was already running before this process and keeps running; stop it with \`npx --no-install consort db stop\``,
      );
      expect(await stopLocalServer(dataDir)).toBe(true);
    } finally {
      app.child.kill("SIGKILL");
      await stopLocalServer(dataDir).catch(() => false);
      rmSync(parent, { recursive: true, force: true });
    }
  }, 90_000);
});

describe("the environment schema", () => {
  it("accepts a complete production environment and reads the key from PRIVATE_KEY_PATH", () => {
    const secrets = mkdtempSync(join(tmpdir(), "consort-boot-key-"));
    const keyFile = join(secrets, "key.pem");
    writeFileSync(keyFile, "-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----\n");
    const env = loadEnv({
      NODE_ENV: "production",
      APP_ID: "42",
      PRIVATE_KEY_PATH: keyFile,
      WEBHOOK_SECRET: "s3cret",
      CONSORT_STATE_KEY: "k".repeat(32),
    });
    expect(env.APP_ID).toBe("42");
    expect(env.PORT).toBe(3000);
    rmSync(secrets, { recursive: true, force: true });
  });

  it("treats empty values as missing and refuses a short state key", () => {
    const attempt = () =>
      loadEnv({
        NODE_ENV: "production",
        APP_ID: " ",
        PRIVATE_KEY: "pem",
        WEBHOOK_SECRET: "s",
        CONSORT_STATE_KEY: "short",
      });
    expect(attempt).toThrow(EnvError);
    expect(attempt).toThrow(/APP_ID is missing[\s\S]*CONSORT_STATE_KEY is too short/);
  });

  it("names an invalid port", () => {
    expect(() => loadEnv({ PORT: "eighty" })).toThrow(/PORT/);
  });
});
