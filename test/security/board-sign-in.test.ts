import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitHubSignIn, returnPath } from "../../src/board/sign-in.js";

/**
 * The board's sign-in, attacked from outside: a forged or replayed OAuth state, a session cookie
 * edited by hand, a sign-in that tries to send the browser elsewhere afterwards, a cross-site
 * sign-out. Each must leave the visitor signed out (or signed in) exactly as before.
 */

const signIn = gitHubSignIn({
  clientId: "Iv1.attack",
  clientSecret: "secret",
  sessionSecret: "s".repeat(64),
  base: "/consort",
  githubUrl: "http://127.0.0.1:9",
  apiUrl: "http://127.0.0.1:9",
  secure: true,
});

let server: Server;
let origin = "";
beforeAll(async () => {
  server = createServer((req, res) => {
    void (async () => {
      if (await signIn.handle(req, res)) return;
      const viewer = await signIn.viewer(req, res);
      if (viewer) res.writeHead(200).end(`hello ${viewer.login}`);
    })();
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", () => done()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => new Promise<void>((done) => server.close(() => done())));

const get = (path: string, cookie?: string) =>
  fetch(`${origin}${path}`, { redirect: "manual", headers: cookie ? { cookie } : {} });

describe("signing in to the board", () => {
  it("sends GitHub a fresh random state and keeps it in a Secure HttpOnly SameSite cookie", async () => {
    const first = await get("/consort/login");
    const second = await get("/consort/login");
    const state = (response: Response) => new URL(response.headers.get("location")!).searchParams.get("state");
    expect(state(first)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(state(first)).not.toBe(state(second));
    expect(first.headers.get("set-cookie")).toMatch(
      /^consort_oauth_state=[A-Za-z0-9_-]+; Path=\/consort; HttpOnly; SameSite=Lax; Max-Age=600; Secure$/,
    );
  });

  it("refuses a callback with another browser's state cookie", async () => {
    const mine = await get("/consort/login");
    const cookie = mine.headers.get("set-cookie")!.split(";")[0]!;
    const theirs = new URL((await get("/consort/login")).headers.get("location")!).searchParams.get("state")!;
    const response = await get(`/consort/callback?code=abc&state=${theirs}`, cookie);
    expect(response.status).toBe(400);
    expect(response.headers.get("set-cookie")).toBeNull();
  });

  it("ignores a session cookie edited by hand: the visitor is sent to sign in", async () => {
    const forged = `consort_session=${Buffer.from(JSON.stringify({ login: "admin", token: "x", expires: 9e15 })).toString("base64url")}`;
    const response = await get("/consort/", forged);
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/consort/sign-in?next=%2Fconsort%2F");
  });

  it("returns only to a path on the board after sign-in, never to another site", () => {
    for (const next of [
      "https://evil.example/",
      "//evil.example/",
      "/consort\\evil",
      "/consort/\\evil",
      "/elsewhere",
      null,
    ])
      expect(returnPath("/consort", next)).toBe("/consort/");
    expect(returnPath("/consort", "/consort/t/acme/shop/feature-orders?x=1")).toBe(
      "/consort/t/acme/shop/feature-orders?x=1",
    );
  });

  it("signs out only by POST, so a link or image on another site cannot sign anyone out", async () => {
    const response = await get("/consort/logout");
    expect(response.status).toBe(405);
    expect(response.headers.get("set-cookie")).toBeNull();
    const post = await fetch(`${origin}/consort/logout`, { method: "POST", redirect: "manual" });
    expect(post.status).toBe(302);
    expect(post.headers.get("set-cookie")).toBe(
      "consort_session=; Path=/consort; HttpOnly; SameSite=Lax; Max-Age=0; Secure",
    );
  });
});
