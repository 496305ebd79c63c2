import { spawn } from "node:child_process";
import { readdirSync, readlinkSync } from "node:fs";
import { chown, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { claimJailFolder, processesOf, sweepLeftoverJails } from "../../src/cycle/confine.js";

/**
 * One identity per job, as the uids are handed out: a job's throwaway uid has no passwd entry, so
 * nothing but the claim keeps two jobs apart. A uid is never handed out while anything could still
 * act as it, or while another job's folder (live, or left by a crashed job) names it. As root, as a
 * job on a hosted runner acts through sudo.
 */

let parent: string;
beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error("these tests need root to run a process as a throwaway uid");
  parent = await mkdtemp(join(tmpdir(), "consort-uids-"));
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
});

/** Draws that hand out `uids` in turn. */
const drawing = (...uids: number[]) => {
  let at = 0;
  return () => uids[Math.min(at++, uids.length - 1)]!;
};

describe("a job's throwaway uid", () => {
  test("is never one a live process runs as (a daemon an earlier job left): the claim draws again", async () => {
    const busy = 0x7a000000 + Math.floor(Math.random() * 0x100000);
    const daemon = spawn("sleep", ["60"], { uid: busy, gid: busy, stdio: "ignore" });
    try {
      for (let i = 0; i < 200 && processesOf(busy).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(processesOf(busy)).toEqual([daemon.pid]);

      const claimed = claimJailFolder(parent, drawing(busy, busy + 1));

      expect(claimed.uid).toBe(busy + 1);
      expect(readdirSync(parent).filter((name) => name.startsWith(`consort-job-${busy}-`))).toEqual([]);
    } finally {
      daemon.kill("SIGKILL");
    }
  });

  test("is never one the machine's users or groups name (root's 0 here)", () => {
    const claimed = claimJailFolder(parent, drawing(0, 0x7b000001));

    expect(claimed.uid).toBe(0x7b000001);
  });

  test("is never one another job's folder claims, live or left by a crashed job, and two jobs never get one uid", async () => {
    // A crashed job's folder (its owner pid 1's start time is not this one's) still holds its uid.
    await mkdir(join(parent, "consort-job-2063597570-1.1.1"));
    const first = claimJailFolder(parent, drawing(0x7b000002, 0x7b000003));
    const second = claimJailFolder(parent, drawing(0x7b000003, 0x7b000004));

    expect(first.uid).toBe(0x7b000003);
    expect(second.uid).toBe(0x7b000004);
  });

  test("gives up with the reason after 20 draws of taken uids, rather than share one", () => {
    expect(() => claimJailFolder(parent, drawing(0))).toThrow(
      `no free uid for the job's throwaway user after 20 draws (in ${parent}): the commands are not run unconfined instead`,
    );
  });

  test("a folder another user made in the temp folder, named after a live job's uid, or one named after a uid outside the throwaway range, never gets that uid's processes ended", async () => {
    const pidns = /\d+/.exec(readlinkSync("/proc/self/ns/pid"))![0];
    const inRange = 0x7c000000 + Math.floor(Math.random() * 0x100000);
    const outside = 4242;
    const live = [inRange, outside].map((uid) => spawn("sleep", ["60"], { uid, gid: uid, stdio: "ignore" }));
    try {
      for (let i = 0; i < 200 && (processesOf(inRange).length === 0 || processesOf(outside).length === 0); i++)
        await new Promise((r) => setTimeout(r, 25));
      // Both look left over (owner pid 1 never started at tick 1 here).
      const forged = join(parent, `consort-job-${inRange}-${pidns}.1.1`);
      await mkdir(forged);
      await chown(forged, 1234, 1234);
      await mkdir(join(parent, `consort-job-${outside}-${pidns}.1.1`));

      expect(await sweepLeftoverJails("root", parent)).toEqual([]);

      expect(processesOf(inRange)).toEqual([live[0]!.pid]);
      expect(processesOf(outside)).toEqual([live[1]!.pid]);
    } finally {
      for (const child of live) child.kill("SIGKILL");
    }
  });
});
