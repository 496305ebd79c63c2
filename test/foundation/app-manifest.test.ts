import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { Probot } from "probot";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createConsortApp } from "../../src/index.js";

/**
 * Least privilege, checked against the code: app.yml asks for exactly the permissions the app's
 * GitHub calls need and the events its handlers take, each justified in a comment naming a call
 * or a handler. The CLI (src/cli) and `consort protect` (src/protect) run on a person's token, so
 * their calls (rulesets, the authenticated user) justify nothing here.
 */

const ROOT = new URL("../../", import.meta.url).pathname;
const text = readFileSync(join(ROOT, "app.yml"), "utf8");
const manifest = parse(text) as Record<string, unknown>;

/** Which permission each GitHub call of the app needs (GitHub's "Permissions required for GitHub Apps"). */
const NEEDS: Array<[RegExp, string]> = [
  [/^rest\.checks\./, "checks"],
  [
    /^rest\.(git\.|repos\.(getContent|createOrUpdateFileContents|listCommits|getCommit|compareCommitsWithBasehead)$)/,
    "contents",
  ],
  [/^(GET|POST) \/repos\/\{owner\}\/\{repo\}\/(git|contents|compare|commits)\//, "contents"],
  // Comments on a PR are issue comments: "Pull requests" write grants them without "Issues".
  // So are a PR's issue events (who dismissed a review): "Pull requests" read grants them.
  [/^rest\.(pulls\.|issues\.((create|update|delete|list)Comments?|listEvents)$)/, "pull_requests"],
  [/^GET \/repos\/\{owner\}\/\{repo\}\/pulls$/, "pull_requests"],
  [/^(GET|POST) \/repos\/\{owner\}\/\{repo\}\/actions\//, "actions"],
  [/^rest\.teams\.getMembershipForUserInOrg$/, "members"],
  [/^rest\.repos\.getCollaboratorPermissionLevel$/, "metadata"],
  [/^GET \/repos\/\{owner\}\/\{repo\}$/, "metadata"],
  // The app's own description, asked with its JWT: GitHub answers it whatever the app may do, as it does metadata.
  [/^GET \/app$/, "metadata"],
  // Its own webhook deliveries, listed and redelivered with its JWT: no installation permission.
  [/^(GET|POST) \/app\/hook\/deliveries(\/\{delivery_id\}\/attempts)?$/, "metadata"],
];
/** Permissions no call needs but an event does: GitHub sends `merge_group` only with "Merge queues" read. */
const FOR_EVENTS: Record<string, string> = { merge_queues: "merge_group" };
/** Events GitHub sends every app without a subscription (they cannot be listed in default_events). */
const ALWAYS_SENT = ["installation", "installation_repositories"];

function appSources(dir = join(ROOT, "src")): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return ["cli", "protect"].includes(name) ? [] : appSources(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** Every GitHub call in the app's code, as `rest.x.y` or `METHOD /route`, with the file that makes it. */
function appCalls(): Array<{ call: string; file: string }> {
  return appSources().flatMap((file) =>
    [...readFileSync(file, "utf8").matchAll(/rest\.[a-zA-Z]+\.[a-zA-Z]+|request\("([A-Z]+ [^"]+)"/g)].map((m) => ({
      call: m[1] ?? m[0],
      file: relative(ROOT, file),
    })),
  );
}

const permissionOf = (call: string) => NEEDS.find(([pattern]) => pattern.test(call))?.[1];

/** The items of a top-level section of app.yml (`key: value` or `- value`), each with the comment lines right above it. */
function entries(section: string): Array<{ name: string; value: string; comment: string }> {
  const lines = text.split("\n");
  const start = lines.indexOf(`${section}:`);
  if (start < 0) throw new Error(`app.yml has no ${section}`);
  const items: Array<{ name: string; value: string; comment: string }> = [];
  let comment: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line !== "" && !line.startsWith(" ")) break;
    const trimmed = line.trim();
    if (trimmed.startsWith("#")) comment.push(trimmed.slice(1).trim());
    else if (trimmed) {
      const item = /^(?:- )?([a-z_]+)(?::\s*(\S+))?$/.exec(trimmed);
      if (!item) throw new Error(`app.yml: cannot read "${trimmed}" under ${section}`);
      items.push({ name: item[1]!, value: item[2] ?? "", comment: comment.join(" ") });
      comment = [];
    }
  }
  // What YAML itself reads must be what this reading found.
  const parsed = manifest[section];
  const names = Array.isArray(parsed) ? parsed : Object.keys((parsed as Record<string, unknown> | null) ?? {});
  if (names.join() !== items.map((i) => i.name).join())
    throw new Error(`app.yml: ${section} reads as ${names.join()}, not ${items.map((i) => i.name).join()}`);
  return items;
}

/** The events the app's handlers are bound to, by top-level name. */
function handledEvents(): string[] {
  const names = new Set<string>();
  const app = {
    on: (events: string | string[]) => {
      for (const e of Array.isArray(events) ? events : [events]) names.add(e.split(".")[0]!);
    },
    log: { info() {} },
  };
  createConsortApp({
    appId: 1,
    stateKey: "k".repeat(40),
    clock: () => new Date(),
    openProvider: () => Promise.reject(new Error("unused")),
  })(app as unknown as Probot);
  return [...names].sort();
}

describe("app.yml asks for least privilege", () => {
  it("every GitHub call of the app maps to a permission the manifest grants", () => {
    const granted = new Set(entries("default_permissions").map((p) => p.name));
    const unjustified = appCalls().filter((c) => !granted.has(permissionOf(c.call) ?? "?"));
    expect(unjustified).toEqual([]);
  });

  it("every permission is needed by a call of the app, and none for consort protect or deployments", () => {
    const needed = new Set(appCalls().map((c) => permissionOf(c.call)));
    const permissions = entries("default_permissions");
    const events = entries("default_events").map((e) => e.name);
    const unneeded = permissions
      .map((p) => p.name)
      .filter((name) => !needed.has(name) && !(FOR_EVENTS[name] && events.includes(FOR_EVENTS[name])));
    expect(unneeded).toEqual([]);
    for (const absent of ["administration", "deployments", "issues"])
      expect(permissions.map((p) => p.name)).not.toContain(absent);
    // Read where the app only reads: writes only where a call writes.
    expect(Object.fromEntries(permissions.map((p) => [p.name, p.value]))).toEqual({
      checks: "write",
      contents: "write",
      pull_requests: "write",
      actions: "write",
      members: "read",
      metadata: "read",
      merge_queues: "read",
    });
  });

  it("each permission's comment names a call the app makes with it", () => {
    const calls = appCalls();
    for (const permission of entries("default_permissions")) {
      if (FOR_EVENTS[permission.name]) {
        expect(permission.comment, `app.yml: the comment on ${permission.name} names no handler`).toContain(
          "src/handlers/",
        );
        continue;
      }
      const named = calls.filter(
        (c) =>
          permissionOf(c.call) === permission.name &&
          permission.comment.includes(
            c.call.replace(/^rest\./, "").replace(/^(GET|POST) \/repos\/\{owner\}\/\{repo\}\//, ""),
          ),
      );
      expect(named.length, `app.yml: the comment on ${permission.name} names none of its calls`).toBeGreaterThan(0);
    }
  });

  it("subscribes to exactly the events the app handles, each with a comment naming its handler", () => {
    const events = entries("default_events");
    expect(events.map((e) => e.name).sort()).toEqual(handledEvents().filter((e) => !ALWAYS_SENT.includes(e)));
    for (const event of events) {
      const handler = /src\/handlers\/[a-z-]+\.ts/.exec(event.comment)?.[0];
      expect(handler, `app.yml: the comment on ${event.name} names no handler`).toBeDefined();
      expect(readFileSync(join(ROOT, handler!), "utf8")).toMatch(/export async function handle/);
    }
  });
});
