import { spawn } from "node:child_process";
import { once } from "node:events";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runConsort } from "../helpers/cli.js";
import { localRepo, type LocalRepo } from "../board/local-repo.js";

describe("consort board", () => {
  let repo: LocalRepo;
  beforeAll(async () => {
    repo = await localRepo("feature/cli-board");
  });
  afterAll(async () => repo?.cleanup());

  it("has --help saying where it binds and how to see every track", async () => {
    const { status, stdout } = await runConsort("board", "--help");
    expect(status).toBe(0);
    expect(stdout).toContain("on 127.0.0.1 (no sign-in)");
    expect(stdout).toContain("git fetch origin consort/state:refs/remotes/origin/consort/state");
  });

  it("refuses a --me that is not a GitHub login, naming the option", async () => {
    const { status, stderr } = await runConsort("board", "-C", repo.path, "--me", "not a login");
    expect(status).toBe(1);
    expect(stderr).toContain("consort board: --me: a GitHub login");
  });

  it("prints its URL, serves the checkout's board there and stops on SIGTERM", async () => {
    const child = spawn(process.execPath, ["bin/consort.js", "board", "-C", repo.path, "--port", "0", "--json"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let out = "";
      while (!out.includes("}")) {
        const [chunk] = (await once(child.stdout, "data")) as [Buffer];
        out += chunk.toString();
      }
      const { url } = JSON.parse(out) as { url: string };
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const page = await (await fetch(url)).text();
      expect(page).toContain('data-track="feature-cli-board-');
    } finally {
      child.kill("SIGTERM");
    }
    const [code] = (await once(child, "exit")) as [number | null];
    expect(code).toBe(0);
  }, 60_000);
});
