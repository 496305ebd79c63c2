import { generateKeyPairSync } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EnvError, loadEnv } from "../../src/config/env.js";

/** Credentials are checked in shape before Probot sees them, each with what to do. */

const dir = mkdtempSync(join(tmpdir(), "consort-env-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pem = generateKeyPairSync("rsa", { modulusLength: 2048 })
  .privateKey.export({ type: "pkcs1", format: "pem" })
  .toString();
const keyFile = join(dir, "app.pem");
writeFileSync(keyFile, pem);

const problems = (env: NodeJS.ProcessEnv): string[] => {
  try {
    loadEnv(env);
    return [];
  } catch (error) {
    if (error instanceof EnvError) return error.problems;
    throw error;
  }
};

describe("credential shapes, in development as in production", () => {
  it("a well-formed set passes: a numeric APP_ID and a PEM key, inline (newlines as \\n) or from a file", () => {
    expect(problems({ APP_ID: "123456", PRIVATE_KEY: pem.replace(/\n/g, "\\n") })).toEqual([]);
    expect(problems({ APP_ID: "123456", PRIVATE_KEY_PATH: keyFile })).toEqual([]);
  });

  it("APP_ID=abc is refused, saying where the number is", () => {
    expect(problems({ APP_ID: "abc" })).toEqual([
      `APP_ID "abc" is not a number: use the App ID from the app's settings page on GitHub (General → About), e.g. APP_ID=123456.`,
    ]);
  });

  it("a PRIVATE_KEY that is no PEM is refused without echoing it", () => {
    const [problem, ...rest] = problems({ PRIVATE_KEY: "ghp_notakey_secretvalue" });
    expect(rest).toEqual([]);
    expect(problem).toMatch(/^PRIVATE_KEY is not a PEM private key/);
    expect(problem).not.toContain("ghp_notakey_secretvalue");
  });

  it("a PRIVATE_KEY_PATH that does not exist, or holds no key, is refused naming the file", () => {
    expect(problems({ PRIVATE_KEY_PATH: join(dir, "missing.pem") })).toEqual([
      `PRIVATE_KEY_PATH ${join(dir, "missing.pem")} cannot be read (ENOENT): point it at the .pem file the app's settings page generated.`,
    ]);
    const notKey = join(dir, "notes.txt");
    writeFileSync(notKey, "hello\n");
    expect(problems({ PRIVATE_KEY_PATH: notKey, NODE_ENV: "production" })).toContain(
      `PRIVATE_KEY_PATH ${notKey} holds no PEM private key: point it at the .pem file the app's settings page generated.`,
    );
  });
});

describe("the state keys retired by a rotation", () => {
  const production = {
    NODE_ENV: "production",
    APP_ID: "123456",
    PRIVATE_KEY: pem,
    WEBHOOK_SECRET: "s",
    CONSORT_STATE_KEY: "n".repeat(40),
  };

  it("are read from CONSORT_STATE_KEYS_PREVIOUS, comma-separated, blanks dropped", () => {
    expect(
      loadEnv({ CONSORT_STATE_KEYS_PREVIOUS: ` ${"a".repeat(32)} ,, ${"b".repeat(40)}` }).CONSORT_STATE_KEYS_PREVIOUS,
    ).toEqual(["a".repeat(32), "b".repeat(40)]);
    expect(loadEnv({}).CONSORT_STATE_KEYS_PREVIOUS).toEqual([]);
  });

  it("a key too short to have been a state key is refused in production, by its place and without echoing it", () => {
    const refused = problems({ ...production, CONSORT_STATE_KEYS_PREVIOUS: `${"a".repeat(32)},short-secret` });
    expect(refused).toEqual([
      "CONSORT_STATE_KEYS_PREVIOUS: key 2 is too short to be a state key the app sealed with (32+ characters); list the old CONSORT_STATE_KEY values, comma-separated.",
    ]);
    expect(refused.join("")).not.toContain("short-secret");
  });
});
