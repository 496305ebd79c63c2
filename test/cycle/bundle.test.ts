import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { parse as parseYaml } from "yaml";
import { ACTION_DIR, REPO_ROOT, bundleAction } from "../../actions/build/src/bundle.js";
import { ACTION_STEPS } from "../../actions/consort/src/step.js";
import { ROLE_NAMES } from "../../src/contracts/roles.js";

describe("the committed action bundle", () => {
  test(`${ACTION_DIR}/dist is what the sources bundle to (run npm run build:actions when this fails)`, async () => {
    const files = await bundleAction();
    expect(Object.keys(files).sort()).toEqual([
      `${ACTION_DIR}/dist/index.mjs`,
      `${ACTION_DIR}/dist/main.mjs`,
      ...ROLE_NAMES.map((role) => `${ACTION_DIR}/roles/${role}.md`).sort(),
    ]);
    for (const [path, text] of Object.entries(files)) {
      const committed = join(REPO_ROOT, path);
      expect(existsSync(committed), `${path} is missing: run npm run build:actions`).toBe(true);
      expect(
        readFileSync(committed, "utf8") === text,
        `${path} is stale: run npm run build:actions and commit it`,
      ).toBe(true);
    }
  });

  test("there is one action: action.yml runs the bundle on node20 with a required step and request", () => {
    const action = parseYaml(readFileSync(join(REPO_ROOT, ACTION_DIR, "action.yml"), "utf8")) as {
      runs: { using: string; main: string };
      inputs: Record<string, { required?: boolean; description: string }>;
    };
    expect(action.runs).toEqual({ using: "node20", main: "dist/index.mjs" });
    expect(action.inputs.step?.required).toBe(true);
    expect(action.inputs.request?.required).toBe(true);
    for (const step of ACTION_STEPS) expect(action.inputs.step?.description).toContain(step);
    expect(readFileSync(join(REPO_ROOT, "actions/README.md"), "utf8")).not.toMatch(
      /actions\/(cycle|deploy|promote|agent)\b/,
    );
  });
});
