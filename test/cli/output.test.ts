import { afterEach, describe, expect, it, vi } from "vitest";
import { CliError, progress, reportError } from "../../src/cli/output.js";
import { SubstrateError } from "../../src/substrate/provider.js";

/** What the terminal shows names the command a person runs: `npx --no-install consort …`, as the README says. */

let written = "";
afterEach(() => {
  vi.restoreAllMocks();
  written = "";
});
const captureStderr = () =>
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    written += String(chunk);
    return true;
  });

describe("hints print the command the user runs", () => {
  it("a database error's hint to run `consort db url` says `npx --no-install consort db url`", () => {
    captureStderr();
    reportError(
      new SubstrateError(
        "the app cannot reach the embedded server",
        "on the app's host run `consort db url consort_root`",
      ),
    );
    expect(written).toContain("run `npx --no-install consort db url consort_root`");
    expect(written).not.toMatch(/(^|[\s(`])(?<!--no-install )consort db/m);
  });

  it("a CLI error's hint and a progress line get the same, and a command already spelled out is left alone", () => {
    captureStderr();
    reportError(new CliError("no track here", "run consort next (or npx --no-install consort status)"));
    progress({})("started the server: stop it with consort db stop");
    expect(written).toContain("→ run npx --no-install consort next (or npx --no-install consort status)");
    expect(written).toContain("stop it with npx --no-install consort db stop");
    expect(written).not.toContain("npx --no-install npx");
    // Not a command: Consort's own words and check names stay as they are.
    expect(written).not.toContain("npx --no-install consort/");
  });
});
