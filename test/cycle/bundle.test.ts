import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { ACTIONS, REPO_ROOT, bundleAction } from "../../actions/build/src/bundle.js";

describe("the committed action bundles", () => {
  test.each(ACTIONS.map((a) => [a.name, a] as const))(
    "actions/%s/dist is what the sources bundle to (run npm run build:actions when this fails)",
    async (_name, action) => {
      const files = await bundleAction(action);
      expect(Object.keys(files).sort()).toEqual([
        `actions/${action.name}/dist/index.mjs`,
        `actions/${action.name}/dist/main.mjs`,
      ]);
      for (const [path, text] of Object.entries(files)) {
        const committed = join(REPO_ROOT, path);
        expect(existsSync(committed), `${path} is missing: run npm run build:actions`).toBe(true);
        expect(
          readFileSync(committed, "utf8") === text,
          `${path} is stale: run npm run build:actions and commit it`,
        ).toBe(true);
      }
    },
  );

  test.each(ACTIONS.map((a) => a.name))("actions/%s/action.yml runs the bundle on node20", (name) => {
    const action = parseYaml(readFileSync(join(REPO_ROOT, "actions", name, "action.yml"), "utf8")) as {
      runs: { using: string; main: string };
      inputs: Record<string, unknown>;
    };
    expect(action.runs).toEqual({ using: "node20", main: "dist/index.mjs" });
    expect(Object.keys(action.inputs)).toContain("request");
  });
});
