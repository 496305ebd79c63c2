import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, realpath, stat } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import type { ConfinementRecord } from "./result.js";

/**
 * Confinement of the repository's own commands (docs/ARCHITECTURE.md, Cycles): they run as a separate unprivileged
 * OS user, so they cannot read the job's processes (their environment holds the runtime token),
 * write the result folder or .git, or outlive the step: every process of that user is ended
 * before the verdict is read. It needs root or passwordless sudo (GitHub-hosted runners have it);
 * where neither is there, the commands run as the job's user and the result says so.
 */

/** The OS user the commands run as on a runner (the workflow may name another: CONSORT_CONFINED_USER). */
const CONFINED_USER = "consort-untrusted";

/** The confined user a job's environment names, else the default. */
export const confinedUserOf = (env: NodeJS.ProcessEnv): string => env.CONSORT_CONFINED_USER || CONFINED_USER;

/** A prepared confined user: who, and how this process acts for it (as root, or through sudo). */
export interface Jail {
  user: string;
  uid: number;
  gid: number;
  home: string;
  via: "root" | "sudo";
}

export type Confinement = { confined: true; jail: Jail } | { confined: false; reason: string };

const exec = promisify(execFile);

const succeeds = (file: string, args: string[]) =>
  exec(file, args, { timeout: 10_000 }).then(
    () => true,
    () => false,
  );

/** Run a system command with root's rights: directly as root, else through `sudo -n`. */
function privileged(via: Jail["via"], file: string, args: string[]) {
  return via === "root" ? exec(file, args) : exec("sudo", ["-n", file, ...args]);
}

async function lookupUser(user: string): Promise<Omit<Jail, "via"> | undefined> {
  try {
    const { stdout } = await exec("getent", ["passwd", user]);
    const [, , uid, gid, , home] = stdout.trim().split(":");
    return { user, uid: Number(uid), gid: Number(gid), home: home || `/home/${user}` };
  } catch {
    return undefined;
  }
}

/**
 * Make (or find) the confined user. Never throws: where confinement is impossible, the answer says
 * why, and the cycle runs unconfined and says so.
 */
export async function prepareConfinement(user = CONFINED_USER): Promise<Confinement> {
  if (process.platform !== "linux")
    return { confined: false, reason: `confinement to a separate OS user needs Linux; this is ${process.platform}` };
  const via: Jail["via"] | undefined =
    process.getuid?.() === 0 ? "root" : (await succeeds("sudo", ["-n", "true"])) ? "sudo" : undefined;
  if (!via)
    return {
      confined: false,
      reason:
        "the job runs as an ordinary user without passwordless sudo, so the commands ran as the job's own user: they could read the job's environment and write its files",
    };
  let found = await lookupUser(user);
  if (!found) {
    try {
      await privileged(via, "useradd", ["--system", "--user-group", "--create-home", "--shell", "/bin/sh", user]);
    } catch (error) {
      // Another job on the machine may have made it meanwhile (useradd exits 9): look again.
      found = await lookupUser(user);
      if (!found)
        return {
          confined: false,
          reason: `the confined user ${user} could not be created (${(error as Error).message.split("\n")[0]}), so the commands ran as the job's own user`,
        };
    }
    found ??= await lookupUser(user);
  }
  if (!found || found.uid === 0 || found.uid === process.getuid?.())
    return { confined: false, reason: `the user ${user} is not a separate unprivileged user, so it confines nothing` };
  return { confined: true, jail: { ...found, via } };
}

/** How commands run outside a Consort job (`consort cycle`, tests): as the caller, and the result says so. */
export const OUTSIDE_A_JOB: Extract<Confinement, { confined: false }> = {
  confined: false,
  reason: "run outside a Consort job (consort cycle on a workstation): the commands ran as the caller's own user",
};

/** What the result records about how the commands ran. */
export function confinementRecord(confinement: Confinement): ConfinementRecord {
  return confinement.confined
    ? { confined: true, user: confinement.jail.user, uid: confinement.jail.uid }
    : { confined: false, reason: confinement.reason };
}

/** Let the confined user pass through (never list or write) every folder above `path`. */
async function passThroughAbove(jail: Jail, path: string): Promise<void> {
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    const { mode } = await stat(dir);
    if ((mode & 0o001) === 0) await privileged(jail.via, "chmod", ["o+x", dir]);
  }
}

/**
 * Hand the checkout to the confined user (it installs, builds and writes its report there), but
 * keep `.git` out of its reach, and let it pass through the folders above the checkout.
 */
export async function grantCheckout(jail: Jail, cwd: string): Promise<void> {
  const root = resolve(cwd);
  await passThroughAbove(jail, root);
  // Links at the top or in node_modules (a shared install, say) are followed by the commands: let
  // the user reach where they point too (to read, as anyone may; what they point at stays its owner's).
  const reached = new Set<string>();
  for (const folder of [root, join(root, "node_modules")])
    for (const entry of await readdir(folder, { withFileTypes: true }).catch(() => []))
      if (entry.isSymbolicLink()) {
        const target = await realpath(join(folder, entry.name)).catch(() => undefined);
        if (target && !reached.has(dirname(target))) {
          reached.add(dirname(target));
          await passThroughAbove(jail, target);
        }
      }
  // Everything but .git, in one process (symlinks themselves, never what they point at).
  const git = join(root, ".git");
  await privileged(jail.via, "find", [
    root,
    "-path",
    git,
    "-prune",
    "-o",
    "-exec",
    "chown",
    "--no-dereference",
    `${jail.uid}:${jail.gid}`,
    "{}",
    "+",
  ]);
}

/**
 * Make the result folder, and refuse it when the confined user could write it or replace it: it
 * owns the folder or one above it, or one of them is writable by it (without the sticky bit).
 */
export async function resultFolderOutOfReach(jail: Jail, outDir: string, cwd: string): Promise<string | undefined> {
  const dir = resolve(outDir);
  const fromCheckout = relative(resolve(cwd), dir);
  if (fromCheckout === "" || (!fromCheckout.startsWith("..") && !isAbsolute(fromCheckout)))
    return `the result folder ${dir} is inside the checkout, which the commands own`;
  await mkdir(dir, { recursive: true, mode: 0o755 });
  for (let at = dir; ; at = dirname(at)) {
    const { uid, gid, mode } = await stat(at);
    const sticky = (mode & 0o1000) !== 0;
    const writable =
      uid === jail.uid || ((mode & 0o002) !== 0 && !sticky) || (gid === jail.gid && (mode & 0o020) !== 0 && !sticky);
    if (writable) return `the result folder ${dir} is writable by the confined user ${jail.user} (at ${at})`;
    if (at === dirname(at)) return undefined;
  }
}

/**
 * The ids of the live processes whose real or effective user is `uid` (a zombie is dead already).
 * Read synchronously: hundreds of tiny /proc reads through the thread pool took half a second on a
 * loaded machine, where this takes milliseconds.
 */
export function processesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let status: string;
    try {
      status = readFileSync(join("/proc", entry, "status"), "utf8");
    } catch {
      continue; // ended meanwhile
    }
    if (/^State:\s+[ZX]/m.test(status)) continue;
    const ids = /^Uid:\s+(\d+)\s+(\d+)/m.exec(status);
    if (ids && (Number(ids[1]) === uid || Number(ids[2]) === uid)) pids.push(Number(entry));
  }
  return pids;
}

/**
 * End every process of the confined user (a detached daemon included), as that user with
 * `kill -9 -1`, until none is left: a fork racing the kill is caught by the next round.
 */
export async function endConfinedProcesses(jail: Jail): Promise<void> {
  const killAll = ["/bin/sh", ["-c", "kill -9 -1 2>/dev/null; exit 0"]] as const;
  for (let round = 0; round < 50; round++) {
    if (processesOf(jail.uid).length === 0) return;
    if (jail.via === "root") await exec(killAll[0], [...killAll[1]], { uid: jail.uid, gid: jail.gid }).catch(() => {});
    else await exec("sudo", ["-n", "-u", jail.user, killAll[0], ...killAll[1]]).catch(() => {});
  }
  const left = processesOf(jail.uid);
  if (left.length > 0)
    throw new Error(
      `the confined user ${jail.user} still has ${left.length} process(es) (${left.slice(0, 5).join(", ")}) after 50 rounds of kill: the verdict is not read while the commands' processes live`,
    );
}

/** How a command runs as the confined user: the spawn's file, arguments and options. */
export function confinedSpawn(
  jail: Jail,
  command: string,
  env: Record<string, string>,
): { file: string; args: string[]; uid?: number; gid?: number; env: Record<string, string> } {
  const confinedEnv = { ...env, HOME: jail.home };
  if (jail.via === "root")
    return { file: "/bin/sh", args: ["-c", command], uid: jail.uid, gid: jail.gid, env: confinedEnv };
  // sudo resets the environment but for the names it is told to keep (the allow-list alone).
  return {
    file: "sudo",
    args: [
      "-n",
      "-H",
      "-u",
      jail.user,
      `--preserve-env=${Object.keys(env)
        .filter((name) => name !== "HOME")
        .join(",")}`,
      "--",
      "/bin/sh",
      "-c",
      command,
    ],
    env: confinedEnv,
  };
}
