import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/config/consort-config.js";
import {
  CONFIG_PATH,
  ConfigError,
  configIssues,
  parseConfigText,
  readCheckoutConfig,
  readConfigFile,
} from "../../src/config/load.js";
import { BROKEN_SCHEMA, BROKEN_YAML, FIX_SCHEMA, FIX_YAML, YAML_PROBLEM } from "./broken-configs.js";

/** What a call throws, so a test can assert all of it. */
function thrownBy(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

describe("the text of a configuration", () => {
  it("an empty file is the defaults", () => {
    expect(parseConfigText("", CONFIG_PATH)).toEqual(defaultConfig());
  });

  it("a schema error names the file, every field with zod's message, and the fix", () => {
    const error = thrownBy(() => parseConfigText(BROKEN_SCHEMA, CONFIG_PATH));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(
      [
        ".github/consort.yml is invalid:",
        '  - database.provider: Invalid option: expected one of "local"|"postgres"|"lakebase"',
        "  - repairBound: Too big: expected number to be <=10",
        FIX_SCHEMA,
      ].join("\n"),
    );
  });

  it("text that is not YAML names the file, the parser's line and column, and the fix", () => {
    const error = thrownBy(() => parseConfigText(BROKEN_YAML, CONFIG_PATH));
    expect((error as ConfigError).message).toBe(`.github/consort.yml: ${YAML_PROBLEM}\n${FIX_YAML}`);
  });

  it("consort validate lists a schema error field by field, as JSON paths", () => {
    const error = thrownBy(() => parseConfigText(BROKEN_SCHEMA, CONFIG_PATH)) as ConfigError;
    expect(configIssues(error)).toEqual([
      {
        file: ".github/consort.yml",
        path: "$.database.provider",
        message: 'Invalid option: expected one of "local"|"postgres"|"lakebase"',
        fix: FIX_SCHEMA,
      },
      {
        file: ".github/consort.yml",
        path: "$.repairBound",
        message: "Too big: expected number to be <=10",
        fix: FIX_SCHEMA,
      },
    ]);
  });
});

describe("a configuration file on disk", () => {
  const work = mkdtempSync(join(tmpdir(), "consort-config-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const checkout = (name: string, files: Record<string, string>) => {
    const root = join(work, name);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    mkdirSync(root, { recursive: true });
    return root;
  };

  it("reads the checkout's .github/consort.yml", () => {
    const root = checkout("configured", { [CONFIG_PATH]: "repairBound: 5\ngranularity: ac\n" });
    expect(readCheckoutConfig(root)).toEqual({
      source: "file",
      config: { ...defaultConfig(), repairBound: 5, granularity: "ac" },
    });
  });

  it("a checkout without .github/consort.yml gets the defaults", () => {
    expect(readCheckoutConfig(checkout("bare", {}))).toEqual({ source: "defaults", config: defaultConfig() });
  });

  it("an invalid file in a checkout is named as the person knows it, relative to the checkout", () => {
    const root = checkout("broken", { [CONFIG_PATH]: BROKEN_YAML });
    expect((thrownBy(() => readCheckoutConfig(root)) as ConfigError).message).toBe(
      `.github/consort.yml: ${YAML_PROBLEM}\n${FIX_YAML}`,
    );
  });

  it("a file a person names in the checkout must exist", () => {
    const error = thrownBy(() => readCheckoutConfig(checkout("named", {}), "ci/consort.yml"));
    expect((error as ConfigError).message).toBe(
      "ci/consort.yml: the file does not exist\nPass the path of your consort.yml, or none to use .github/consort.yml (the defaults when there is none).",
    );
  });

  it("a file named by its path is read from there", () => {
    const root = checkout("elsewhere", { "settings/consort.yml": "granularity: ac\n" });
    expect(readConfigFile(join(root, "settings/consort.yml"))).toEqual({
      source: "file",
      config: { ...defaultConfig(), granularity: "ac" },
    });
  });

  it("a path that does not exist is the defaults, as the actions read their `config` input", () => {
    const path = join(checkout("absent", {}), "consort.yml");
    expect(readConfigFile(path)).toEqual({ source: "defaults", config: defaultConfig() });
  });

  it("a path that must exist and does not is named as given", () => {
    const path = join(checkout("required", {}), "consort.yml");
    expect((thrownBy(() => readConfigFile(path, { mustExist: true })) as ConfigError).summary).toBe(
      `${path}: the file does not exist`,
    );
  });
});
