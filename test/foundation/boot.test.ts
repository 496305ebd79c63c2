import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
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

  it("without credentials outside production serves Probot's setup page", async () => {
    const port = String(3900 + Math.floor(Math.random() * 90));
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", PORT: port, NODE_ENV: "development" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let page = "";
      for (let attempt = 0; attempt < 100 && !page; attempt++) {
        await new Promise((r) => setTimeout(r, 200));
        page = await fetch(`http://127.0.0.1:${port}/probot`).then((r) => (r.ok ? r.text() : ""), () => "");
      }
      expect(page).toContain("Register GitHub App");
    } finally {
      child.kill("SIGTERM");
    }
  });
});

describe("the environment schema", () => {
  it("accepts a complete production environment and reads the key from PRIVATE_KEY_PATH", () => {
    const env = loadEnv({
      NODE_ENV: "production",
      APP_ID: "42",
      PRIVATE_KEY_PATH: "/run/secrets/key.pem",
      WEBHOOK_SECRET: "s3cret",
      CONSORT_STATE_KEY: "k".repeat(32),
    });
    expect(env.APP_ID).toBe("42");
    expect(env.PORT).toBe(3000);
  });

  it("treats empty values as missing and refuses a short state key", () => {
    const attempt = () =>
      loadEnv({ NODE_ENV: "production", APP_ID: " ", PRIVATE_KEY: "pem", WEBHOOK_SECRET: "s", CONSORT_STATE_KEY: "short" });
    expect(attempt).toThrow(EnvError);
    expect(attempt).toThrow(/APP_ID is missing[\s\S]*CONSORT_STATE_KEY is too short/);
  });

  it("names an invalid port", () => {
    expect(() => loadEnv({ PORT: "eighty" })).toThrow(/PORT/);
  });
});
