import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { ConsortConfig } from "../../src/config/consort-config.js";
import { openJobProvider } from "../../src/substrate/create-provider.js";
import { postgresUrl } from "../helpers/postgres.js";

/** Which database a dispatched job opens: the app's, when they are meant to share branches. */

const selfHosted = ConsortConfig.parse({
  database: { provider: "local" },
  jobs: { runsOn: ["self-hosted", "consort"] },
});
const dataDir = mkdtempSync(join(tmpdir(), "consort-job-provider-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("the provider of a dispatched job", () => {
  test("local on a self-hosted runner without the app's server URL fails, naming the secret to set", async () => {
    await expect(openJobProvider(selfHosted, { env: { CONSORT_DATA_DIR: dataDir } })).rejects.toThrow(
      "the jobs run on a self-hosted runner (jobs.runsOn in .github/consort.yml), so they use the app's embedded server, but CONSORT_LOCAL_URL is not set",
    );
    // It did not quietly start a server of its own.
    expect(readdirSync(dataDir)).toEqual([]);
  });

  test("the variable's name comes from database.local.urlEnv", async () => {
    const named = ConsortConfig.parse({
      database: { provider: "local", local: { urlEnv: "APP_PG" } },
      jobs: { runsOn: ["self-hosted"] },
    });
    await expect(openJobProvider(named, { env: {} })).rejects.toThrow("but APP_PG is not set");
  });

  test("with the URL handed over it uses the app's server (whatever database the URL names) and starts none", async () => {
    const provider = await openJobProvider(selfHosted, {
      env: { CONSORT_DATA_DIR: dataDir, CONSORT_LOCAL_URL: postgresUrl("consort_root") },
    });
    try {
      expect(provider.kind).toBe("local");
      expect(await provider.getBranch("no-such-branch-here")).toBeUndefined();
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      await provider.close();
    }
  });

  test("a URL that is not a postgresql:// URL is refused", async () => {
    await expect(
      openJobProvider(selfHosted, { env: { CONSORT_LOCAL_URL: "http://127.0.0.1:5432/postgres" } }),
    ).rejects.toThrow("CONSORT_LOCAL_URL must be a postgresql:// URL, not http://");
  });
});
