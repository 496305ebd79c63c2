import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, test } from "vitest";

/** What bin/consort.js decides for a package at `root`: the reason lib/ is stale, or "current". */
function staleness(root: string): string {
  const script = resolve("scripts/build-lib.mjs");
  return execFileSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `const { staleReason } = await import(${JSON.stringify(script)}); console.log(staleReason(process.argv[1]) ?? "current");`,
      root,
    ],
    { encoding: "utf8" },
  ).trim();
}

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

function packageAt(files: Record<string, Date>): string {
  const root = mkdtempSync(join(tmpdir(), "consort-build-lib-"));
  roots.push(root);
  for (const [file, time] of Object.entries(files)) {
    mkdirSync(join(root, file, ".."), { recursive: true });
    writeFileSync(join(root, file), "");
    utimesSync(join(root, file), time, time);
  }
  return root;
}

describe("whether the CLI can run lib/ as the sources stand", () => {
  const before = new Date("2026-12-01T10:00:00Z");
  const after = new Date("2026-12-01T11:00:00Z");

  test("not when lib/ was never built", () => {
    expect(staleness(packageAt({ "src/cli/main.ts": before }))).toBe("lib/ has not been built");
  });

  test("not when a source changed after the build, which it names", () => {
    const root = packageAt({ "src/cli/main.ts": before, "src/tools/registry.ts": after, "lib/.built": before });
    expect(staleness(root)).toBe("src/tools/registry.ts changed after lib/ was built");
  });

  test("yes when every source is older, or as old (an installed package's files all carry one time)", () => {
    expect(staleness(packageAt({ "src/cli/main.ts": before, "src/a/b.ts": before, "lib/.built": after }))).toBe(
      "current",
    );
    expect(staleness(packageAt({ "src/cli/main.ts": before, "lib/.built": before }))).toBe("current");
  });
});
