import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { chmod, chown, lstat, mkdir, mkdtemp, readdir, readlink, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import type { ConfinementRecord } from "../contracts/cycle-result.js";

/**
 * Confinement of the repository's own commands (docs/ARCHITECTURE.md, Cycles). Each job's commands run as a throwaway
 * OS user made for that job alone (a random uid no other job has had), with an empty home, in a
 * copy of the checkout without `.git`, inside their own mount and PID namespaces: a private /tmp,
 * /var/tmp and /dev/shm, the runner's folders (its workspace, its temp with the event file) out of
 * sight, and a /proc that shows their own processes alone. So they cannot learn the step (no git
 * metadata, no event file, no job process, no file's age), cannot leave anything for a later job,
 * cannot see or signal another job, and own nothing the job's user later runs git in. After the
 * job, every process of that user is ended, the user deleted and its folder removed. It needs root
 * or passwordless sudo (GitHub-hosted runners have it); where neither is there, the commands run
 * as the job's user and the result says so.
 */

/** The stem of the throwaway users' names (the workflow may name another: CONSORT_CONFINED_USER). */
const CONFINED_USER = "consort";

/** The throwaway users' name stem a job's environment names, else the default. */
export const confinedUserOf = (env: NodeJS.ProcessEnv): string => env.CONSORT_CONFINED_USER || CONFINED_USER;

/**
 * The runner's folders a job's environment names, which the commands must never see: the
 * workspace (the checkout and its .git) and the runner's temp (the event file, the step's files).
 */
export function runnerFoldersOf(env: NodeJS.ProcessEnv): string[] {
  const named = [env.GITHUB_WORKSPACE, env.RUNNER_TEMP, env.GITHUB_EVENT_PATH && dirname(env.GITHUB_EVENT_PATH)];
  return [...new Set(named.filter((dir): dir is string => !!dir && isAbsolute(dir)).map((dir) => resolve(dir)))];
}

/** How this process acts as root: it is root, or through sudo. */
type Via = "root" | "sudo";

/** One job's throwaway user: who, its folder (home, tmp, the copy of the checkout), and how this process acts for it. */
export interface Jail {
  user: string;
  uid: number;
  gid: number;
  /** The job's own folder (0711, this process's): home, tmp and work below it are the user's (0700). */
  root: string;
  home: string;
  tmp: string;
  /** The copy of the checkout the commands run in. */
  work: string;
  /** The checkout it is a copy of: a command asked to run there runs in `work`. */
  source: string;
  /**
   * The checkout's own node_modules (an install the job made before, never committed): laid over
   * the copy's empty one, read-only below what the commands write, instead of copied file by file.
   */
  modules?: string;
  /** Folders mounted over with an empty one for the commands (the runner's). */
  hide: string[];
  via: Via;
}

/** Confinement is possible (how, the user name stem, the runner's folders to hide), or why not. */
export type Confinement =
  { confined: true; via: Via; stem: string; hide: string[] } | { confined: false; reason: string };

const exec = promisify(execFile);

const succeeds = (file: string, args: string[]) =>
  exec(file, args, { timeout: 10_000 }).then(
    () => true,
    () => false,
  );

/** Run a system command with root's rights: directly as root, else through `sudo -n`. */
function privileged(via: Via, file: string, args: string[]) {
  return via === "root" ? exec(file, args) : exec("sudo", ["-n", file, ...args]);
}

/**
 * Whether the commands can be confined here. Never throws: where confinement is impossible, the
 * answer says why, and the job runs unconfined and says so.
 */
export async function prepareConfinement(stem = CONFINED_USER, hide: string[] = []): Promise<Confinement> {
  if (process.platform !== "linux")
    return { confined: false, reason: `confinement to a separate OS user needs Linux; this is ${process.platform}` };
  const via: Via | undefined =
    process.getuid?.() === 0 ? "root" : (await succeeds("sudo", ["-n", "true"])) ? "sudo" : undefined;
  if (!via)
    return {
      confined: false,
      reason:
        "the job runs as an ordinary user without passwordless sudo, so the commands ran as the job's own user: they could read the job's environment and write its files",
    };
  return { confined: true, via, stem, hide };
}

/** A uid no user has had: random, far above the ranges useradd hands out (and below 2^31). */
const throwawayUid = () => 0x70000000 + (randomBytes(4).readUInt32BE() % 0x0fff0000);

/** useradd and userdel lock the user database: another job's may hold it for a moment. */
async function withUserDatabase(via: Via, file: string, args: string[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await privileged(via, file, args);
      return;
    } catch (error) {
      // 10: the database is locked (another job's useradd); 4: the uid is taken.
      const code = (error as { code?: number }).code;
      if (attempt >= 20 || (code !== 10 && code !== 4)) throw error;
      await new Promise((r) => setTimeout(r, 50 + attempt * 25));
    }
  }
}

/**
 * Make one job's throwaway user and its folder, and copy the checkout `source` into it without
 * `.git`, every file with one fixed time (a file's age would tell which commit touched it last).
 * `tracked` are the paths the commit holds: a symlink among them is the track's and is never
 * followed up to its target's folders.
 */
export async function openJail(
  confinement: Extract<Confinement, { confined: true }>,
  source: string,
  tracked: ReadonlySet<string> = new Set(),
): Promise<Jail> {
  const { via, stem, hide } = confinement;
  const user = `${stem}-${randomBytes(4).toString("hex")}`.slice(0, 32);
  const root = await mkdtemp(join(tmpdir(), "consort-job-"));
  await chmod(root, 0o711);
  let uid = throwawayUid();
  for (let attempt = 0; ; attempt++) {
    try {
      await privileged(via, "useradd", [
        "--uid",
        String(uid),
        "--user-group",
        "--no-create-home",
        "--no-log-init",
        "--home-dir",
        join(root, "home"),
        "--shell",
        "/bin/sh",
        user,
      ]);
      break;
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (attempt >= 20 || (code !== 10 && code !== 4)) {
        await rm(root, { recursive: true, force: true });
        throw new Error(
          `the job's throwaway user ${user} could not be made (${(error as Error).message.split("\n")[0]}): the commands are not run unconfined instead`,
        );
      }
      if (code === 4) uid = throwawayUid();
      await new Promise((r) => setTimeout(r, 50 + attempt * 25));
    }
  }
  const gid = primaryGroupOf(user);
  const jail: Jail = {
    user,
    uid,
    gid,
    root,
    home: join(root, "home"),
    tmp: join(root, "tmp"),
    work: join(root, "work"),
    source: resolve(source),
    hide,
    via,
  };
  try {
    const owned = [jail.home, jail.tmp, jail.work];
    const modules = await installedModules(jail.source, tracked);
    if (modules) {
      jail.modules = modules;
      owned.push(join(jail.root, "modules-upper"), join(jail.work, "node_modules"));
      await mkdir(join(jail.root, "modules-work"), { mode: 0o700 });
    }
    for (const dir of owned) await mkdir(dir, { mode: 0o700 });
    // Each process spawned costs a fork of this one: as root, the folders change hands in-process.
    if (via === "root") await Promise.all(owned.map((dir) => chown(dir, uid, gid)));
    else await privileged(via, "chown", [`${uid}:${gid}`, ...owned]);
    await copyCheckout(jail, tracked);
  } catch (error) {
    await closeJail(jail);
    throw error;
  }
  return jail;
}

/** The primary group of a user useradd just made, from /etc/passwd (readable by all; no process to spawn). */
function primaryGroupOf(user: string): number {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${user}:`));
  const gid = Number(line?.split(":")[3]);
  if (!line || !Number.isInteger(gid)) throw new Error(`the user ${user} useradd made is not in /etc/passwd`);
  return gid;
}

/**
 * The checkout's own node_modules, when the job installed one there before the action (never a
 * committed one, nor a path overlayfs options cannot carry): the commands get it as a layer.
 */
async function installedModules(source: string, tracked: ReadonlySet<string>): Promise<string | undefined> {
  const modules = join(source, "node_modules");
  if (/[:,]/.test(modules) || [...tracked].some((p) => p === "node_modules" || p.startsWith("node_modules/")))
    return undefined;
  return (await lstat(modules).then(
    (entry) => entry.isDirectory(),
    () => false,
  ))
    ? modules
    : undefined;
}

/** Every file's time in the copy: one fixed instant, the same for every job. */
const COPY_MTIME = "@946684800";

/** The checkout, without .git, into the jail's `work`, written by the jail's user (who owns the copy). */
async function copyCheckout(jail: Jail, tracked: ReadonlySet<string>): Promise<void> {
  const installed = jail.modules !== undefined;
  const extract = ["tar", "-x", "-f", "-", "-C", jail.work, "--no-same-owner"];
  const into =
    jail.via === "root"
      ? spawn(extract[0]!, extract.slice(1), { uid: jail.uid, gid: jail.gid, stdio: ["pipe", "ignore", "pipe"] })
      : spawn("sudo", ["-n", "-u", jail.user, "--", ...extract], { stdio: ["pipe", "ignore", "pipe"] });
  const excluded = ["--exclude=.git", ...(installed ? ["--exclude=./node_modules"] : [])];
  const from = spawn("tar", ["-c", "-f", "-", "-C", jail.source, ...excluded, `--mtime=${COPY_MTIME}`, "."], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  from.stdout.pipe(into.stdin);
  const ended = (child: ReturnType<typeof spawn>, name: string) =>
    new Promise<void>((done, fail) => {
      let errors = "";
      child.stderr?.on("data", (chunk: Buffer) => (errors += chunk.toString("utf8")));
      child.on("error", fail);
      child.on("close", (code) =>
        code === 0
          ? done()
          : fail(
              new Error(
                `copying the checkout for the confined commands failed (${name} exited ${code}): ${errors.trim()}`,
              ),
            ),
      );
    });
  await Promise.all([ended(from, "tar -c"), ended(into, "tar -x")]);
  // Links a job made beside the commit (node_modules, a shared install) are followed by the
  // commands: let the user reach where they point (to read, as anyone may). A committed link is
  // the track's, and never opens a folder.
  const reached = new Set<string>();
  for (const folder of ["", "node_modules"])
    for (const entry of await readdir(join(jail.source, folder), { withFileTypes: true }).catch(() => [])) {
      const path = folder ? `${folder}/${entry.name}` : entry.name;
      if (!entry.isSymbolicLink() || tracked.has(path)) continue;
      // Most links of an install point into one folder: resolve each folder once.
      const points = await readlink(join(jail.source, path)).catch(() => undefined);
      if (points === undefined || reached.has(dirname(resolve(jail.source, folder, points)))) continue;
      reached.add(dirname(resolve(jail.source, folder, points)));
      const target = await realpath(join(jail.source, path)).catch(() => undefined);
      if (target) await passThroughAbove(jail.via, target);
    }
}

/**
 * The job is over: end every process of its user, delete the user (its group goes with it) and
 * remove its folder, the copy of the checkout and the home with it.
 */
export async function closeJail(jail: Jail): Promise<void> {
  await endConfinedProcesses(jail);
  await withUserDatabase(jail.via, "userdel", [jail.user]).catch(() => {});
  if (jail.via === "root") await rm(jail.root, { recursive: true, force: true });
  else await privileged(jail.via, "rm", ["-rf", "--one-file-system", jail.root]);
}

/** Where a command asked to run at `cwd` runs for the jail: in the copy when `cwd` is in the checkout. */
export function jailedPath(jail: Jail, cwd: string): string {
  const inside = relative(jail.source, resolve(cwd));
  return inside === "" || (!inside.startsWith("..") && !isAbsolute(inside)) ? join(jail.work, inside) : cwd;
}

/** How commands run outside a Consort job (`consort cycle`, tests): as the caller, and the result says so. */
export const OUTSIDE_A_JOB: Extract<Confinement, { confined: false }> = {
  confined: false,
  reason: "run outside a Consort job (consort cycle on a workstation): the commands ran as the caller's own user",
};

/**
 * What the result records about how the commands ran: as which throwaway user (the job's jail), or
 * unconfined with the reason. A confinement whose jail was never made ran no command.
 */
export function confinementRecord(confinement: Confinement, jail?: Jail): ConfinementRecord {
  if (!confinement.confined) return { confined: false, reason: confinement.reason };
  return jail
    ? { confined: true, user: jail.user, uid: jail.uid }
    : { confined: false, reason: "no command ran: the job stopped before its throwaway user was made" };
}

/** Let everyone pass through (never list or write) every folder above `path`. */
async function passThroughAbove(via: Via, path: string): Promise<void> {
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    const { mode } = await stat(dir);
    if ((mode & 0o001) === 0) await privileged(via, "chmod", ["o+x", dir]);
  }
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

/**
 * What runs as root in the command's new mount and PID namespaces before it becomes the jail's
 * user: private /tmp, /var/tmp and /dev/shm, an empty folder over each of the runner's, the job's
 * own folder mounted back where it was (it may lie under one of them), then the command, with no
 * way back to privileges (no setuid: sudo, su and crontab do nothing for it).
 * Arguments: root uid gid cwd PATH sudo(0|1) node_modules(or -) hidden... -- command.
 */
const JAIL_SCRIPT = [
  "set -e",
  "root=$1; uid=$2; gid=$3; dir=$4; path=$5; sudo=$6; modules=$7; shift 7",
  'if [ "$modules" != - ]; then mount -t overlay overlay -o "lowerdir=$modules,upperdir=$root/modules-upper,workdir=$root/modules-work" "$root/work/node_modules"; fi',
  'exec 3<"$root"',
  'for d in /tmp /var/tmp /dev/shm; do if [ -d "$d" ]; then mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$d"; fi; done',
  'while [ "$1" != "--" ]; do if [ -d "$1" ]; then mount -t tmpfs -o mode=755,nosuid,nodev,size=64k tmpfs "$1"; fi; shift; done; shift',
  'mkdir -p "$root"; mount --no-canonicalize --rbind /proc/self/fd/3 "$root"; exec 3<&-',
  'cd "$dir"',
  // sudo adds its own names (which say who ran it): the command sees the allow-list alone.
  'if [ "$sudo" = 1 ]; then unset SUDO_COMMAND SUDO_USER SUDO_UID SUDO_GID MAIL LOGNAME USER SHELL; fi',
  'export PATH="$path"',
  'exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs -- /bin/sh -c "$1"',
].join("\n");

/**
 * How a command runs as the jail's user: the spawn's file, arguments and options. Its HOME and
 * TMPDIR are the job's own; its processes live in a PID namespace that ends with the command.
 */
export function confinedSpawn(
  jail: Jail,
  command: string,
  env: Record<string, string>,
  cwd: string,
): { file: string; args: string[]; env: Record<string, string> } {
  const confinedEnv: Record<string, string> = { ...env, HOME: jail.home, TMPDIR: jail.tmp };
  const namespaces = [
    "unshare",
    "--mount",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
    "--propagation",
    "private",
    "--",
    "/bin/sh",
    "-c",
    JAIL_SCRIPT,
    "consort-jail",
    jail.root,
    String(jail.uid),
    String(jail.gid),
    jailedPath(jail, cwd),
    confinedEnv.PATH ?? "/usr/bin:/bin",
    jail.via === "sudo" ? "1" : "0",
    jail.modules ?? "-",
    ...jail.hide,
    "--",
    command,
  ];
  if (jail.via === "root") return { file: namespaces[0]!, args: namespaces.slice(1), env: confinedEnv };
  // sudo resets the environment but for the names it is told to keep (the allow-list alone).
  return {
    file: "sudo",
    args: ["-n", `--preserve-env=${Object.keys(confinedEnv).join(",")}`, "--", ...namespaces],
    env: confinedEnv,
  };
}
