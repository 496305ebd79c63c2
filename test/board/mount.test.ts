import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import consortApp from "../../src/index.js";
import { BoardChanges } from "../../src/board/app-source.js";
import { BOARD_BASE, boardRoutes } from "../../src/board/mount.js";
import { loadEnv } from "../../src/config/env.js";
import { createTestProbot } from "../helpers/github.js";

type Handler = (req: IncomingMessage, res: ServerResponse) => boolean | void | Promise<boolean | void>;

/** Serve one handler the way Probot's server does (a handler that answers false falls through to 404). */
async function serve(handler: Handler, path: string): Promise<{ status: number; text: string }> {
  const server = createServer((req, res) => {
    void Promise.resolve(handler(req, res)).then((answered) => {
      if (answered !== true) res.writeHead(404).end("fell through");
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", () => done()));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`, {
      redirect: "manual",
    });
    return { status: response.status, text: await response.text() };
  } finally {
    server.close();
  }
}

const unused = () => Promise.reject(new Error("no installation in this test"));

describe("the board in the app's server", () => {
  it("has its callback URL registered by the app's manifest for Probot's setup on localhost:3000", () => {
    const manifest = parse(readFileSync("app.yml", "utf8")) as { callback_urls?: unknown };
    expect(manifest.callback_urls).toEqual([`http://localhost:3000${BOARD_BASE}/callback`]);
  });

  it("is registered by the app through Probot's addHandler, under /consort only", async () => {
    const handlers: Handler[] = [];
    await createTestProbot().load(consortApp, { cwd: process.cwd(), addHandler: (handler) => handlers.push(handler) });
    expect(handlers).toHaveLength(1);
    expect((await serve(handlers[0]!, "/consortium")).text).toBe("fell through");
    expect((await serve(handlers[0]!, "/api/github/webhooks")).text).toBe("fell through");
  });

  it("without the app's OAuth client id and secret answers 503 naming what to set, and shows nothing", async () => {
    const routes = boardRoutes({
      env: loadEnv({ NODE_ENV: "test", CONSORT_STATE_KEY: "k".repeat(40) }),
      changes: new BoardChanges(),
      installationClient: unused,
    });
    expect(await serve(routes, "/consort/")).toEqual({
      status: 503,
      text: "The Consort board is not set up: set GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET (the app's OAuth client id and secret from its settings page, and the state key), then restart.\n",
    });
  });

  it("with them, sends an unsigned-in visitor to sign in with GitHub", async () => {
    const routes = boardRoutes({
      env: loadEnv({
        NODE_ENV: "test",
        CONSORT_STATE_KEY: "k".repeat(40),
        GITHUB_CLIENT_ID: "Iv1.x",
        GITHUB_CLIENT_SECRET: "y",
      }),
      changes: new BoardChanges(),
      installationClient: unused,
    });
    expect(await serve(routes, "/consort")).toEqual({ status: 302, text: "" });
  });
});
