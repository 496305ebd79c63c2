import { execFile } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RoleName } from "../../src/config/consort-config.js";
import { readLane } from "../../src/tools/local-lane.js";
import { runConsort } from "../helpers/cli.js";
import { STOCKFLOW, stockflowCheckout, type StockflowCheckout } from "../tools/fixture.js";

/**
 * `consort approve <gate>` on the local lane: refused to a caller with no terminal (in process, and
 * spawned through pipes), refused to an author of the gate's commits, and given by another person
 * at a terminal (a real pseudo-terminal from util-linux `script`), saying it is a rehearsal.
 */

const run = promisify(execFile);
const CLI = resolve("bin/consort.js");

let checkout: StockflowCheckout;
beforeAll(async () => {
  checkout = await stockflowCheckout({ designOnTrack: true });
  const design = (name: string) => readFile(join(STOCKFLOW, ".consort", name), "utf8");
  const { nfrs: _nfrs, ...stories } = JSON.parse(await design("spec.json")) as Record<string, unknown>;
  await commitAs("product-owner", "Stories", { ".consort/spec.json": `${JSON.stringify(stories, null, 2)}\n` });
  await commitAs("spec-author", "Spec and NFRs", { ".consort/spec.json": await design("spec.json") });
  await commitAs("architect", "Architecture", { ".consort/architecture.json": await design("architecture.json") });
  await commitAs("dba", "DB design", { ".consort/db-design.json": await design("db-design.json") });
}, 90_000);
afterAll(async () => checkout?.cleanup());

async function commitAs(role: RoleName, subject: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(checkout.path, path)), { recursive: true });
    await writeFile(join(checkout.path, path), text);
  }
  await simpleGit(checkout.path).add(Object.keys(files)).commit(`${subject}\n\nConsort-Role: ${role}`);
}

/** `consort approve` in a pseudo-terminal, as a person types it: stdin and stdout are a TTY. */
async function approveAtTerminal(gate: string): Promise<{ status: number; out: string }> {
  const command = [process.execPath, CLI, "approve", gate, "-C", checkout.path].map((a) => `'${a}'`).join(" ");
  try {
    const { stdout } = await run("script", ["-qec", command, "/dev/null"], { cwd: checkout.path });
    return { status: 0, out: stdout.replace(/\r\n/g, "\n") };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    return { status: failed.code ?? -1, out: String(failed.stdout ?? "").replace(/\r\n/g, "\n") };
  }
}

describe("consort approve on the local lane", () => {
  test("the track waits at the design gate for a person", async () => {
    const next = await runConsort("next", "-C", checkout.path, "--json");
    expect(JSON.parse(next.stdout)).toMatchObject({ stage: "design-gate", actor: "person" });
  });

  test("a caller with no terminal is refused, in process and through pipes", async () => {
    const inProcess = await runConsort("approve", "design", "-C", checkout.path);
    expect(inProcess.status).toBe(1);
    expect(inProcess.stderr).toContain("consort approve needs a person at a terminal, and stdin is not one");
    const piped = await run(process.execPath, [CLI, "approve", "design", "-C", checkout.path]).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect("code" in piped && piped.code).toBe(1);
    expect(piped.stderr).toContain("a pipe, a script or an agent cannot approve a gate");
    expect((await readLane(checkout.path, await trackId()))?.approvals).toEqual([]);
  }, 60_000);

  test("an author of the gate's commits is refused at the terminal", async () => {
    const { status, out } = await approveAtTerminal("design");
    expect(status).toBe(1);
    expect(out).toMatch(
      /You \(strategist@example\.com\) wrote or committed [0-9a-f]{7}, [0-9a-f]{7}, [0-9a-f]{7}, [0-9a-f]{7}, among the design gate's commits/,
    );
    expect((await readLane(checkout.path, await trackId()))?.approvals).toEqual([]);
  }, 60_000);

  test("another person at the terminal approves, told it is a rehearsal, and the test list is next", async () => {
    await simpleGit(checkout.path).addConfig("user.email", "lead@example.com");
    const { status, out } = await approveAtTerminal("design");
    expect(out).toContain("✓ design gate approved at the terminal by lead@example.com");
    expect(out).toContain("This is a rehearsal: the approval is kept in this checkout's git directory only");
    expect(status).toBe(0);
    const lane = await readLane(checkout.path, await trackId());
    expect(lane?.approvals).toMatchObject([{ gate: "design", by: "lead@example.com" }]);
    const next = await runConsort("next", "-C", checkout.path, "--json");
    expect(JSON.parse(next.stdout)).toMatchObject({ stage: "test-list", role: "test-strategist" });
    // Approving again is refused: the gate no longer waits.
    expect((await approveAtTerminal("design")).out).toContain(
      "The design gate is not waiting: the track is at test-list",
    );
  }, 60_000);
});

async function trackId(): Promise<string> {
  return JSON.parse((await runConsort("next", "-C", checkout.path, "--json")).stdout).trackId as string;
}
