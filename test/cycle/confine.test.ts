import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runShellCommand } from "../../src/cycle/commands.js";
import {
  closeJail,
  confinedSpawn,
  endConfinedProcesses,
  openJail,
  prepareConfinement,
  processesOf,
  resultFolderOutOfReach,
  sweepLeftoverJails,
  type Confinement,
  type Jail,
} from "../../src/cycle/confine.js";

/**
 * Confinement with a real throwaway identity: the tests run as root (as a job on a hosted runner
 * can, through its passwordless sudo), make jails of their own, and remove them afterwards.
 */

const exec = promisify(execFile);
const REPO = resolve(import.meta.dirname, "../..");
const STEM = `consort-t-${randomBytes(3).toString("hex")}`;
let confinement: Extract<Confinement, { confined: true }>;
let jail: Jail;
/** The job's checkout: a git repository the jail copies. */
let dir: string;

beforeAll(async () => {
  const prepared = await prepareConfinement(STEM, ["/nonexistent-runner-folder"]);
  if (!prepared.confined) throw new Error(`these tests need root to make a user: ${prepared.reason}`);
  confinement = prepared;
  dir = await mkdtemp(join(tmpdir(), "consort-confine-"));
  await exec("git", ["init", "-q"], { cwd: dir });
  await writeFile(join(dir, "app.ts"), "export {};\n");
  jail = await openJail(confinement, dir);
});
afterAll(async () => {
  if (jail) await closeJail(jail);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const run = (command: string, cwd = dir, parentEnv: Record<string, string | undefined> = { PATH: process.env.PATH }) =>
  runShellCommand(command, { cwd, timeoutMs: 20_000, jail, parentEnv });

describe("each job's throwaway user", () => {
  test("is made for the job alone: unprivileged, a uid of its own that the machine's user database never names, an empty home; a second job gets another, and closing it leaves nothing", async () => {
    expect(jail.uid).toBeGreaterThan(0x70000000);
    expect(jail.via).toBe("root");
    expect(jail.user).toBe(`${STEM}-${jail.uid.toString(16)}`);
    expect(await readdir(jail.home)).toEqual([]);
    await expect(exec("getent", ["passwd", String(jail.uid)])).rejects.toThrow();
    const other = await openJail(confinement, dir);
    expect(other.uid).not.toBe(jail.uid);
    expect(other.user).not.toBe(jail.user);
    await closeJail(other);
    await expect(exec("getent", ["passwd", String(other.uid)])).rejects.toThrow();
    expect(existsSync(other.root)).toBe(false);
  });

  test("what looks the user up by uid finds the job's name (id, whoami, node's os.userInfo()), and USER and LOGNAME say it", async () => {
    const record = await run(
      `id -un; whoami; id -gn; node -e 'const u = require("os").userInfo(); console.log(u.username, u.uid, u.homedir)'; echo "$USER $LOGNAME"`,
    );
    expect(record.outputTail).toBe(
      [jail.user, jail.user, jail.user, `${jail.user} ${jail.uid} ${jail.home}`, `${jail.user} ${jail.user}`].join(
        "\n",
      ),
    );
  });

  test("a command runs as that user, with its own HOME and TMPDIR, in the copy of the checkout, and cannot read the job's process environment", async () => {
    const record = await run(
      `id -un; echo "HOME=$HOME TMPDIR=$TMPDIR"; pwd; (tr '\\0' '\\n' < /proc/${process.pid}/environ) > /dev/null 2>&1 && echo readable || echo unreadable`,
    );
    expect(record.outputTail).toBe(`${jail.user}\nHOME=${jail.home} TMPDIR=${jail.tmp}\n${jail.work}\nunreadable`);
  });

  test("a detached process it leaves behind (its own session, its output closed) is ended", async () => {
    const record = await run("setsid sh -c 'sleep 60' > /dev/null 2>&1 < /dev/null & echo started");
    expect(record.outputTail).toBe("started");
    await endConfinedProcesses(jail);
    expect(processesOf(jail.uid)).toEqual([]);
  });
});

/**
 * A job in a process of its own that opens a jail, starts a confined `sleep` in it and says which
 * (uid and folder), then waits: the test kills it as a crash would (SIGKILL), or lets it live.
 */
async function jobInAProcess(): Promise<{ child: ChildProcess; uid: number; root: string }> {
  const script = join(dir, `job-${randomBytes(3).toString("hex")}.mts`);
  const confine = join(REPO, "src/cycle/confine.ts");
  const commands = join(REPO, "src/cycle/commands.ts");
  await writeFile(
    script,
    `import { openJail, prepareConfinement } from ${JSON.stringify(confine)};
import { runShellCommand } from ${JSON.stringify(commands)};
const confinement = await prepareConfinement(${JSON.stringify(STEM)});
if (!confinement.confined) throw new Error(confinement.reason);
const jail = await openJail(confinement, ${JSON.stringify(dir)});
void runShellCommand("sleep 120", { cwd: ${JSON.stringify(dir)}, timeoutMs: 120_000, jail, parentEnv: { PATH: process.env.PATH } });
setInterval(() => {}, 1000);
console.log(JSON.stringify({ uid: jail.uid, root: jail.root }));
`,
  );
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: REPO,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((done, fail) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      if (out.includes("\n")) done(out.split("\n")[0]!);
    });
    child.on("exit", (code) => fail(new Error(`the job's process exited ${code} before it opened its jail`)));
  });
  const { uid, root } = JSON.parse(line) as { uid: number; root: string };
  // Its confined command has started (the jail's uid runs a process) before the test goes on.
  for (let i = 0; i < 200 && processesOf(uid).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
  return { child, uid, root };
}

describe("what a crashed job leaves", () => {
  test("a jail whose job was killed (its folder, a process of its uid) is removed by the next job; a live job's jail is left alone", async () => {
    const crashed = await jobInAProcess();
    const live = await jobInAProcess();
    try {
      crashed.child.kill("SIGKILL");
      await new Promise((r) => crashed.child.once("exit", r));
      expect(processesOf(crashed.uid).length).toBeGreaterThan(0);
      expect(existsSync(crashed.root)).toBe(true);

      const next = await openJail(confinement, dir);
      await closeJail(next);

      expect(existsSync(crashed.root)).toBe(false);
      expect(processesOf(crashed.uid)).toEqual([]);
      expect(existsSync(live.root)).toBe(true);
      expect(processesOf(live.uid).length).toBeGreaterThan(0);
      expect(existsSync(jail.root)).toBe(true);
    } finally {
      live.child.kill("SIGKILL");
      await new Promise((r) => live.child.once("exit", r));
      await sweepLeftoverJails("root");
    }
  });
});

describe("the checkout and the result folder", () => {
  test("the user works in a copy without .git, every file of one time; the job's checkout stays the job's", async () => {
    const record = await run(
      "echo built > app.js && echo ok; ls -a; stat -c %Y app.ts; (echo forged > " +
        join(dir, "app.ts") +
        ") 2>/dev/null || echo refused",
    );
    expect(record.outputTail).toBe("ok\n.\n..\napp.js\napp.ts\n946684800\nrefused");
    expect(await readFile(join(dir, "app.ts"), "utf8")).toBe("export {};\n");
    expect((await stat(join(jail.work, "app.js"))).uid).toBe(jail.uid);
    expect((await stat(dir)).uid).toBe(0);
  });

  test("a result folder inside the checkout is refused, with the reason", async () => {
    expect(await resultFolderOutOfReach(jail, join(dir, "out"), dir)).toBe(
      `the result folder ${join(dir, "out")} is inside the checkout, which the commands own`,
    );
  });

  test("a result folder under a folder the user owns is refused; one only the job can write is accepted", async () => {
    const owned = join(jail.home, `results-${randomBytes(2).toString("hex")}`);
    expect(await resultFolderOutOfReach(jail, owned, dir)).toBe(
      `the result folder ${owned} is writable by the confined user ${jail.user} (at ${jail.home})`,
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
      `the result folder ${open} is writable by the confined user ${jail.user} (at ${open})`,
    );
  });
});

describe("through sudo (a hosted runner's job user)", () => {
  test("sudo enters the namespaces as root keeping only the allow-listed names, and the jail's script becomes the user", () => {
    const plan = confinedSpawn(
      { ...jail, via: "sudo" },
      "npm test",
      { PATH: "/usr/bin", DATABASE_URL: "postgres://x" },
      dir,
    );
    expect(plan.file).toBe("sudo");
    expect(plan.args.slice(0, 3)).toEqual(["-n", "--preserve-env=PATH,DATABASE_URL,HOME,TMPDIR,USER,LOGNAME", "--"]);
    expect(plan.args.slice(3, 12)).toEqual([
      "unshare",
      "--mount",
      "--pid",
      "--fork",
      "--kill-child",
      "--mount-proc",
      "--propagation",
      "private",
      "--",
    ]);
    expect(plan.args.slice(-12)).toEqual([
      "consort-jail",
      jail.root,
      String(jail.uid),
      String(jail.gid),
      jail.user,
      jail.work,
      "/usr/bin",
      "1",
      "-",
      "/nonexistent-runner-folder",
      "--",
      "npm test",
    ]);
    expect(plan.env).toEqual({
      PATH: "/usr/bin",
      DATABASE_URL: "postgres://x",
      HOME: jail.home,
      TMPDIR: jail.tmp,
      USER: jail.user,
      LOGNAME: jail.user,
    });
  });
});
