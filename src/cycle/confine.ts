import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  constants as fsConstants,
  copyFileSync,
  existsSync,
  lchownSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  type Dirent,
} from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import type { ConfinementRecord } from "../contracts/cycle-result.js";

/**
 * Confinement of the repository's own commands (docs/ARCHITECTURE.md, Cycles). Each job's commands run as a throwaway
 * identity made for that job alone (a random uid no user, process or other job has), with an empty
 * home, in a copy of the checkout without `.git`, inside their own mount and PID namespaces: a
 * private /tmp, /var/tmp and /dev/shm, the runner's folders (its workspace, its temp with the
 * event file) out of sight, and a /proc that shows their own processes alone. So they cannot learn
 * the step (no git metadata, no event file, no job process, no file's age), cannot leave anything
 * for a later job, cannot see or signal another job, and own nothing the job's user later runs git
 * in. After the job, every process of that uid is ended and its folder removed; a job that died
 * before is cleaned up after by the next. It needs root or passwordless sudo (GitHub-hosted runners
 * have it); where neither is there, the commands run as the job's user and the result says so.
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

/**
 * The throwaway ids: random in this range, far above what useradd hands out and below 2^31. A
 * job's uid has no /etc/passwd entry (useradd and userdel lock the user database, and cost most of
 * a cycle's confinement): its commands see one, in a passwd file of the job's own laid over
 * /etc/passwd in their mount namespace, so getpwuid, `id -un`, os.userInfo() and git find a name.
 */
const UID_FLOOR = 0x70000000;
const UID_SPAN = 0x0fff0000;

/** Every file's time in the copy: one fixed instant, the same for every job. */
const COPY_MTIME = 946684800;

/**
 * A job's folder is named after its uid and the process that owns it (the PID namespace, pid and
 * start time: a pid alone may be reused), so a later job can tell a live job's folder from one a
 * crashed job left: `consort-job-<uid>-<pidns>.<pid>.<start>`.
 */
const JAIL_FOLDER = /^consort-job-(\d+)-(\d+)\.(\d+)\.(\d+)$/;

interface JailFolder {
  path: string;
  uid: number;
  pidns: string;
  pid: number;
  start: string;
}

/** A process's start time (clock ticks since boot, /proc/<pid>/stat field 22), or undefined when it is gone. */
function processStart(pid: number | "self"): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** This process as a jail folder's owner: `<pidns>.<pid>.<start>`. */
function ownerTag(): string {
  const pidns = /\d+/.exec(readlinkSync("/proc/self/ns/pid"))?.[0] ?? "0";
  return `${pidns}.${process.pid}.${processStart("self") ?? "0"}`;
}

/** The jail folders in `parent` (live or left by a crashed job). */
function jailFolders(parent: string): JailFolder[] {
  const found: JailFolder[] = [];
  for (const name of readdirSync(parent)) {
    const match = JAIL_FOLDER.exec(name);
    if (match)
      found.push({
        path: join(parent, name),
        uid: Number(match[1]),
        pidns: match[2]!,
        pid: Number(match[3]),
        start: match[4]!,
      });
  }
  return found;
}

/** The uids and gids /etc/passwd and /etc/group name (readable by all: no process to spawn). */
function namedIds(): Set<number> {
  const ids = new Set<number>();
  for (const file of ["/etc/passwd", "/etc/group"])
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const id = Number(line.split(":")[2]);
      if (line && Number.isInteger(id)) ids.add(id);
    }
  return ids;
}

/**
 * End what jobs that died left in `parent` (their jail folders, and every process of their uids),
 * never a live job's: a folder is left over when the process that made it is gone (its pid no
 * longer runs, or runs another program started later). A folder made in another PID namespace is
 * left alone (its owner cannot be seen from here), and so is one this process's user did not make
 * or whose uid is not a throwaway one (anyone may name a folder in /tmp after another's uid). One
 * that cannot be cleaned is left for a later job: it holds nothing of this one. Returns the folders
 * removed.
 */
export async function sweepLeftoverJails(via: Via, parent: string = tmpdir()): Promise<string[]> {
  const ours = ownerTag().split(".")[0];
  const removed: string[] = [];
  for (const folder of jailFolders(parent)) {
    if (folder.pidns !== ours || processStart(folder.pid) === folder.start) continue;
    if (folder.uid < UID_FLOOR || folder.uid >= UID_FLOOR + UID_SPAN) continue;
    try {
      const made = lstatSync(folder.path);
      if (!made.isDirectory() || made.uid !== process.getuid?.()) continue;
      await endProcessesOf(via, folder.uid, folder.uid, `the throwaway uid ${folder.uid} a dead job left`);
      await removeFolder(via, folder.path);
      removed.push(folder.path);
    } catch {
      continue;
    }
  }
  return removed;
}

/** A throwaway uid drawn at random from the range. */
const drawUid = () => UID_FLOOR + (randomBytes(4).readUInt32BE() % UID_SPAN);

/**
 * Claim a uid no user, group, process or other job's folder has (live or left over), by making the
 * job's folder named after it (0711, this process's) in `parent`. Two jobs drawing one uid at once
 * both see two folders, and both draw again.
 */
export function claimJailFolder(parent: string, draw: () => number = drawUid): { uid: number; root: string } {
  const named = namedIds();
  const owner = ownerTag();
  for (let attempt = 0; attempt < 20; attempt++) {
    const uid = draw();
    const claimedBy = () => jailFolders(parent).filter((folder) => folder.uid === uid);
    if (named.has(uid) || processesOf(uid).length > 0 || claimedBy().length > 0) continue;
    const root = join(parent, `consort-job-${uid}-${owner}`);
    try {
      mkdirSync(root, { mode: 0o711 });
    } catch {
      continue;
    }
    chmodSync(root, 0o711);
    if (claimedBy().length === 1) return { uid, root };
    rmSync(root, { recursive: true, force: true });
  }
  throw new Error(
    `no free uid for the job's throwaway user after 20 draws (in ${parent}): the commands are not run unconfined instead`,
  );
}

/**
 * Make one job's throwaway identity and its folder, and copy the checkout `source` into it without
 * `.git`, every file with one fixed time (a file's age would tell which commit touched it last).
 * `tracked` are the paths the commit holds: a symlink among them is the track's and is never
 * followed up to its target's folders. Leftovers of crashed jobs are swept first.
 */
export async function openJail(
  confinement: Extract<Confinement, { confined: true }>,
  source: string,
  tracked: ReadonlySet<string> = new Set(),
): Promise<Jail> {
  const { via, stem, hide } = confinement;
  await sweepLeftoverJails(via);
  const { uid, root } = claimJailFolder(tmpdir());
  // The group has the uid's number: no /etc/group entry either.
  const gid = uid;
  const user = `${stem.slice(0, 23)}-${uid.toString(16)}`;
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
    writeIdentityFiles(jail);
    const owned = [jail.home, jail.tmp, jail.work];
    const modules = installedModules(jail.source, tracked);
    if (modules) {
      jail.modules = modules;
      mkdirSync(join(root, "modules-work"), { mode: 0o700 });
      owned.push(join(root, "modules-upper"));
    }
    for (const dir of owned) mkdirSync(dir, { mode: 0o700 });
    // As root the copy changes hands as it is written; through sudo, with one chown after it.
    copyTree(jail.source, jail.work, modules ? new Set(["node_modules"]) : NOTHING, {
      uid: via === "root" ? uid : undefined,
      gid,
    });
    if (modules) mkdirSync(join(jail.work, "node_modules"), { mode: 0o700 });
    if (via === "root") for (const dir of [...owned, join(jail.work, "node_modules")]) lchownIfThere(dir, uid, gid);
    else await privileged(via, "chown", ["-R", "-P", "-h", `${uid}:${gid}`, ...owned]);
    await letLinksThrough(jail, tracked);
  } catch (error) {
    await closeJail(jail);
    throw error;
  }
  return jail;
}

function lchownIfThere(path: string, uid: number, gid: number): void {
  try {
    lchownSync(path, uid, gid);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}

/** The passwd and group files the commands see: the machine's, with the job's user and group added. */
function writeIdentityFiles(jail: Jail): void {
  const machine = (file: string) => {
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    return text === "" || text.endsWith("\n") ? text : `${text}\n`;
  };
  writeFileSync(
    join(jail.root, "passwd"),
    `${machine("/etc/passwd")}${jail.user}:x:${jail.uid}:${jail.gid}::${jail.home}:/bin/sh\n`,
    { mode: 0o644 },
  );
  writeFileSync(join(jail.root, "group"), `${machine("/etc/group")}${jail.user}:x:${jail.gid}:\n`, { mode: 0o644 });
}

/**
 * The checkout's own node_modules, when the job installed one there before the action (never a
 * committed one, nor a path overlayfs options cannot carry): the commands get it as a layer.
 */
function installedModules(source: string, tracked: ReadonlySet<string>): string | undefined {
  const modules = join(source, "node_modules");
  if (/[:,]/.test(modules) || [...tracked].some((p) => p === "node_modules" || p.startsWith("node_modules/")))
    return undefined;
  try {
    return lstatSync(modules).isDirectory() ? modules : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Copy the checkout `from` into the folder `to` (made already): files (a clone where the file
 * system can, else a copy: never a hard link, which the user could write through into the job's
 * file), folders and symlinks (never followed), each with the fixed time and no setuid, setgid or
 * sticky bit, owned by `owner.uid` when given. `.git` is left out at every depth, `skipTop` at the
 * top; other kinds of file (sockets, fifos, devices) too. Synchronous: a checkout is small, and
 * thousands of tiny calls through the thread pool are slow on a loaded machine.
 */
function copyTree(from: string, to: string, skipTop: ReadonlySet<string>, owner: { uid?: number; gid: number }): void {
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.name === ".git" || skipTop.has(entry.name)) continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else if (entry.isDirectory()) {
      mkdirSync(target, { mode: 0o700 });
      copyTree(source, target, NOTHING, owner);
      chmodSync(target, statSync(source).mode & 0o777);
    } else if (entry.isFile()) {
      // The chown below (as root here, or through sudo after) clears a setuid or setgid bit.
      copyFileSync(source, target, fsConstants.COPYFILE_FICLONE);
    } else continue;
    if (owner.uid !== undefined) lchownSync(target, owner.uid, owner.gid);
    lutimesSync(target, COPY_MTIME, COPY_MTIME);
  }
}

const NOTHING: ReadonlySet<string> = new Set();

/**
 * Links a job made beside the commit (node_modules, a shared install) are followed by the
 * commands: let the user reach where they point (to read, as anyone may). A committed link is
 * the track's, and never opens a folder.
 */
async function letLinksThrough(jail: Jail, tracked: ReadonlySet<string>): Promise<void> {
  const reached = new Set<string>();
  for (const folder of ["", "node_modules"]) {
    let entries: Dirent[];
    try {
      entries = readdirSync(join(jail.source, folder), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = folder ? `${folder}/${entry.name}` : entry.name;
      if (!entry.isSymbolicLink() || tracked.has(path)) continue;
      // Most links of an install point into one folder: resolve each folder once.
      let target: string;
      try {
        const into = dirname(resolve(jail.source, folder, readlinkSync(join(jail.source, path))));
        if (reached.has(into)) continue;
        reached.add(into);
        target = realpathSync(join(jail.source, path));
      } catch {
        continue;
      }
      await passThroughAbove(jail.via, target);
    }
  }
}

/**
 * The job is over: end every process of its user and remove its folder, the copy of the checkout,
 * the home and its passwd file with it.
 */
export async function closeJail(jail: Jail): Promise<void> {
  await endConfinedProcesses(jail);
  await removeFolder(jail.via, jail.root);
}

/** Remove a jail's folder (its user's files within it are root's to remove). */
async function removeFolder(via: Via, path: string): Promise<void> {
  if (via === "root") rmSync(path, { recursive: true, force: true });
  else await privileged(via, "rm", ["-rf", "--one-file-system", path]);
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
export async function passThroughAbove(via: Via, path: string): Promise<void> {
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir))
    if ((statSync(dir).mode & 0o001) === 0) await privileged(via, "chmod", ["o+x", dir]);
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
  await endProcessesOf(jail.via, jail.uid, jail.gid, `the confined user ${jail.user}`);
}

/** End every process of `uid` as that uid (so nothing else can be hit), `who` naming it in the error. */
async function endProcessesOf(via: Via, uid: number, gid: number, who: string): Promise<void> {
  const killAll = ["/bin/sh", "-c", "kill -9 -1 2>/dev/null; exit 0"];
  for (let round = 0; round < 50; round++) {
    if (processesOf(uid).length === 0) return;
    if (via === "root") await exec(killAll[0]!, killAll.slice(1), { uid, gid }).catch(() => {});
    else
      await exec("sudo", [
        "-n",
        "setpriv",
        `--reuid=${uid}`,
        `--regid=${gid}`,
        "--clear-groups",
        "--",
        ...killAll,
      ]).catch(() => {});
  }
  const left = processesOf(uid);
  if (left.length > 0)
    throw new Error(
      `${who} still has ${left.length} process(es) (${left.slice(0, 5).join(", ")}) after 50 rounds of kill: the verdict is not read while the commands' processes live`,
    );
}

/**
 * What runs as root in the command's new mount and PID namespaces before it becomes the jail's
 * user: private /tmp, /var/tmp and /dev/shm, an empty folder over each of the runner's, the job's
 * own folder mounted back where it was (it may lie under one of them), its passwd and group files
 * over the machine's (the user has no entry there), then the command, with no way back to
 * privileges (no setuid: sudo, su and crontab do nothing for it).
 * Arguments: root uid gid name cwd PATH sudo(0|1) node_modules(or -) hidden... -- command.
 */
const JAIL_SCRIPT = [
  "set -e",
  "root=$1; uid=$2; gid=$3; name=$4; dir=$5; path=$6; sudo=$7; modules=$8; shift 8",
  'if [ "$modules" != - ]; then mount -t overlay overlay -o "lowerdir=$modules,upperdir=$root/modules-upper,workdir=$root/modules-work" "$root/work/node_modules"; fi',
  'exec 3<"$root"',
  'for d in /tmp /var/tmp /dev/shm; do if [ -d "$d" ]; then mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$d"; fi; done',
  'while [ "$1" != "--" ]; do if [ -d "$1" ]; then mount -t tmpfs -o mode=755,nosuid,nodev,size=64k tmpfs "$1"; fi; shift; done; shift',
  'mkdir -p "$root"; mount --no-canonicalize --rbind /proc/self/fd/3 "$root"; exec 3<&-',
  'for f in passwd group; do if [ -f "/etc/$f" ]; then mount --bind "$root/$f" "/etc/$f"; fi; done',
  'cd "$dir"',
  // sudo adds its own names (which say who ran it): the command sees the allow-list alone.
  'if [ "$sudo" = 1 ]; then unset SUDO_COMMAND SUDO_USER SUDO_UID SUDO_GID MAIL SHELL; fi',
  'export PATH="$path" HOME="$root/home" TMPDIR="$root/tmp" USER="$name" LOGNAME="$name"',
  'exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs -- /bin/sh -c "$1"',
].join("\n");

/**
 * How a command runs as the jail's user: the spawn's file, arguments and options. Its HOME and
 * TMPDIR are the job's own, USER and LOGNAME its name; its processes live in a PID namespace that
 * ends with the command.
 */
export function confinedSpawn(
  jail: Jail,
  command: string,
  env: Record<string, string>,
  cwd: string,
): { file: string; args: string[]; env: Record<string, string> } {
  const confinedEnv: Record<string, string> = {
    ...env,
    HOME: jail.home,
    TMPDIR: jail.tmp,
    USER: jail.user,
    LOGNAME: jail.user,
  };
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
    jail.user,
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
