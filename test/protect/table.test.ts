import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CHECK_NAMES } from "../../src/contracts/gates.js";
import { PROTECTION_NOTES } from "../../src/protect/notes.js";
import { DEFAULT_BRANCH_RULESET, desiredRulesets, STATE_BRANCH_RULESET } from "../../src/protect/rulesets.js";
import { protectionRows, protectionTable } from "../../src/protect/table.js";

/**
 * README's install section states the protection `consort protect` sets, generated from the
 * rulesets it writes: one source of truth, so the two cannot drift.
 */

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("the protection table in README's install section", () => {
  it("is the one generated from what consort protect writes (npm run docs)", () => {
    expect(readme).toContain(`\n${protectionTable()}\n`);
  });

  it("has a row for every rule and setting of both rulesets, each explained, and no note for something it does not set", () => {
    const rows = protectionRows();
    const written = desiredRulesets({ appId: 1, approvals: 1 }).flatMap((ruleset) => [
      `${ruleset.name}/bypass_actors`,
      ...ruleset.rules.flatMap((rule) => [
        `${ruleset.name}/${rule.type}`,
        ...Object.keys(rule.parameters ?? {}).map((setting) => `${ruleset.name}/${rule.type}.${setting}`),
      ]),
    ]);
    expect(rows.map((r) => r.key)).toEqual(written);
    expect(rows.filter((r) => !PROTECTION_NOTES[r.key]).map((r) => r.key)).toEqual([]);
    expect(Object.keys(PROTECTION_NOTES).sort()).toEqual([...written].sort());
  });

  it("names the seven checks and what Consort cannot do without", () => {
    const checks = protectionRows().find((r) => r.key.endsWith("required_status_checks.required_status_checks"))!;
    expect(checks.value).toBe(`${CHECK_NAMES.map((c) => `\`${c}\``).join(", ")}, each bound to the app's id`);
    const needed = Object.entries(PROTECTION_NOTES)
      .filter(([, note]) => note.needed)
      .map(([key]) => key);
    expect(needed).toEqual([
      `${DEFAULT_BRANCH_RULESET}/bypass_actors`,
      `${DEFAULT_BRANCH_RULESET}/required_status_checks`,
      `${DEFAULT_BRANCH_RULESET}/required_status_checks.required_status_checks`,
      `${DEFAULT_BRANCH_RULESET}/required_status_checks.do_not_enforce_on_create`,
      `${DEFAULT_BRANCH_RULESET}/pull_request`,
      `${DEFAULT_BRANCH_RULESET}/non_fast_forward`,
      `${DEFAULT_BRANCH_RULESET}/deletion`,
      `${STATE_BRANCH_RULESET}/bypass_actors`,
      `${STATE_BRANCH_RULESET}/creation`,
      `${STATE_BRANCH_RULESET}/update`,
      `${STATE_BRANCH_RULESET}/update.update_allows_fetch_and_merge`,
      `${STATE_BRANCH_RULESET}/non_fast_forward`,
      `${STATE_BRANCH_RULESET}/deletion`,
    ]);
  });
});
