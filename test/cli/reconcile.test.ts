import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../../src/cli/main.js";

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe("consort reconcile (CLI)", () => {
  it("refuses to run without the app's credentials, saying which and what to do, before any request", async () => {
    vi.stubEnv("APP_ID", "");
    vi.stubEnv("PRIVATE_KEY", "");
    vi.stubEnv("PRIVATE_KEY_PATH", "");
    const out: string[] = [];
    vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (out.push(String(chunk)), true));
    const code = await runCli(["node", "consort", "reconcile", "--repo", "acme/shop", "--json", "--quiet"]);
    expect(code).toBe(1);
    const printed = JSON.parse(out.join(""));
    expect(printed.error.message).toMatch(/runs as the GitHub App, but APP_ID or PRIVATE_KEY is not set/);
    expect(printed.error.hint).toMatch(/export APP_ID and PRIVATE_KEY/);
  });
});
