import { PROTECTION_NOTES } from "./notes.js";
import { DEFAULT_APPROVALS, desiredRulesets, KEEP_IF_SET } from "./rulesets.js";

/**
 * README's table of the protection `consort protect` installs, generated from desiredRulesets and
 * PROTECTION_NOTES (`npm run docs`), so the install section cannot drift from what the command sets.
 */

/** One row per rule and setting: the ruleset, the rule, the setting, the value written, whether Consort needs it, and why. */
export function protectionRows(): Array<{
  key: string;
  ruleset: string;
  rule: string;
  setting: string;
  value: string;
}> {
  const rows: Array<{ key: string; ruleset: string; rule: string; setting: string; value: string }> = [];
  for (const ruleset of desiredRulesets({ appId: 0, approvals: DEFAULT_APPROVALS })) {
    const bypass = ruleset.bypass_actors.length
      ? ruleset.bypass_actors.map((a) => `the app (${a.actor_type}, ${a.bypass_mode})`).join(", ")
      : "nobody";
    rows.push({
      key: `${ruleset.name}/bypass_actors`,
      ruleset: ruleset.name,
      rule: "bypass",
      setting: "",
      value: bypass,
    });
    for (const rule of ruleset.rules) {
      rows.push({
        key: `${ruleset.name}/${rule.type}`,
        ruleset: ruleset.name,
        rule: rule.type,
        setting: "",
        value: "on",
      });
      for (const [setting, value] of Object.entries(rule.parameters ?? {})) {
        const kept = KEEP_IF_SET[rule.type]?.includes(setting) ? " (a value your ruleset has is kept)" : "";
        rows.push({
          key: `${ruleset.name}/${rule.type}.${setting}`,
          ruleset: ruleset.name,
          rule: rule.type,
          setting,
          value: `${valueText(setting, value)}${kept}`,
        });
      }
    }
  }
  return rows;
}

function valueText(setting: string, value: unknown): string {
  if (setting === "required_status_checks")
    return `${(value as Array<{ context: string }>).map((c) => `\`${c.context}\``).join(", ")}, each bound to the app's id`;
  if (setting === "required_approving_review_count") return `\`${String(value)}\` (\`--approvals\`, 1–10)`;
  return `\`${JSON.stringify(value)}\``;
}

export function protectionTable(): string {
  const cell = (text: string) => text.replace(/\|/g, "\\|");
  return [
    "| ruleset | rule | setting | `consort protect` sets | Consort needs it | why |",
    "|---|---|---|---|---|---|",
    ...protectionRows().map((row) => {
      const note = PROTECTION_NOTES[row.key];
      return `| ${row.ruleset} | \`${row.rule}\` | ${row.setting ? `\`${row.setting}\`` : ""} | ${cell(row.value)} | ${note ? (note.needed ? "yes" : "no") : "?"} | ${cell(note?.why ?? "")} |`;
    }),
  ].join("\n");
}
