import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runShellCommand } from "../../src/cycle/commands.js";
import {
  confinedSpawn,
  endConfinedProcesses,
  grantCheckout,
  prepareConfinement,
  processesOf,
  resultFolderOutOfReach,
  type Jail,
} from "../../src/cycle/confine.js";

/**
 * Confinement with a real OS user: the tests run as root (as a job on a hosted runner can, through
 * its passwordless sudo), make a user of their own with useradd, and remove it afterwards.
 */

const exec = promisify(execFile);
const USER = `consort-t-${randomBytes(3).toString("hex")}`;
let jail: Jail;
let dir: string;

beforeAll(async () => {
  const confinement = await prepareConfinement(USER);
  if (!confinement.confined) throw new Error(`these tests need root to make a user: ${confinement.reason}`);
  jail = confinement.jail;
  dir = await mkdtemp(join(tmpdir(), "consort-confine-"));
});
afterAll(async () => {
  if (jail) await endConfinedProcesses(jail);
  await exec("userdel", ["--remove", USER]).catch(() => {});
  if (dir) await rm(dir, { recursive: true, force: true });
});

const run = (command: string, cwd = dir, parentEnv: Record<string, string | undefined> = { PATH: process.env.PATH }) =>
  runShellCommand(command, { cwd, timeoutMs: 20_000, jail, parentEnv });

describe("the confined user", () => {
  test("is made once, unprivileged, and found again by a second preparation", async () => {
    expect(jail.uid).toBeGreaterThan(0);
    expect(jail.via).toBe("root");
    expect(await prepareConfinement(USER)).toEqual({ confined: true, jail });
  });

  test("a command runs as that user, with its HOME, and cannot read the job's process environment", async () => {
    const record = await run(
      `id -un; echo "HOME=$HOME"; (tr '\\0' '\\n' < /proc/${process.pid}/environ) > /dev/null 2>&1 && echo readable || echo unreadable`,
    );
    expect(record.outputTail).toBe(`${USER}\nHOME=${jail.home}\nunreadable`);
  });

  test("a detached process it leaves behind (its own session, its output closed) is ended", async () => {
    const record = await run("setsid sh -c 'sleep 60' > /dev/null 2>&1 < /dev/null & echo started");
    expect(record.outputTail).toBe("started");
    expect((await processesOf(jail.uid)).length).toBeGreaterThan(0);
    await endConfinedProcesses(jail);
    expect(await processesOf(jail.uid)).toEqual([]);
  });
});

describe("the checkout and the result folder", () => {
  test("the user may write the checkout it is handed, never its .git", async () => {
    const checkout = await mkdtemp(join(tmpdir(), "consort-confine-checkout-"));
    await exec("git", ["init", "-q"], { cwd: checkout });
    await writeFile(join(checkout, "app.ts"), "export {};\n");
    await grantCheckout(jail, checkout);
    const record = await run(
      "echo built > app.js && echo ok; (echo 'ref: refs/heads/forged' > .git/HEAD) 2>/dev/null || echo refused",
      checkout,
    );
    expect(record.outputTail).toBe("ok\nrefused");
    expect(await readFile(join(checkout, ".git/HEAD"), "utf8")).not.toContain("forged");
    expect((await stat(join(checkout, "app.js"))).uid).toBe(jail.uid);
    await rm(checkout, { recursive: true, force: true });
  });

  test("a result folder inside the checkout is refused, with the reason", async () => {
    expect(await resultFolderOutOfReach(jail, join(dir, "out"), dir)).toBe(
      `the result folder ${join(dir, "out")} is inside the checkout, which the commands own`,
    );
  });

  test("a result folder under a folder the user owns is refused; one only the job can write is accepted", async () => {
    const owned = join(jail.home, `results-${randomBytes(2).toString("hex")}`);
    expect(await resultFolderOutOfReach(jail, owned, dir)).toBe(
      `the result folder ${owned} is writable by the confined user ${USER} (at ${jail.home})`,
    );
    const safe = join(await mkdtemp(join(tmpdir(), "consort-results-")), "consort-cycle");
    expect(await resultFolderOutOfReach(jail, safe, dir)).toBeUndefined();
    const record = await run(`(echo '{"verdict":"verified"}' > ${safe}/cycle-result.json) 2>/dev/null || echo refused`);
    expect(record.outputTail).toBe("refused");
  });

  test("a world-writable result folder (no sticky bit) is refused", async () => {
    const open = join(await mkdtemp(join(tmpdir(), "consort-open-")), "out");
    await mkdir(open);
    await exec("chmod", ["0777", open]);
    expect(await resultFolderOutOfReach(jail, open, dir)).toBe(
      `the result folder ${open} is writable by the confined user ${USER} (at ${open})`,
    );
  });
});

describe("through sudo (a hosted runner's job user)", () => {
  test("the command is run by sudo as the user, keeping only the allow-listed names", () => {
    const plan = confinedSpawn({ ...jail, via: "sudo" }, "npm test", {
      PATH: "/usr/bin",
      DATABASE_URL: "postgres://x",
    });
    expect(plan).toEqual({
      file: "sudo",
      args: ["-n", "-H", "-u", USER, "--preserve-env=PATH,DATABASE_URL", "--", "/bin/sh", "-c", "npm test"],
      env: { PATH: "/usr/bin", DATABASE_URL: "postgres://x", HOME: jail.home },
    });
  });
});
