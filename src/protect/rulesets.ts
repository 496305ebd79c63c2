import { CHECK_NAMES } from "../contracts/gates.js";
import { STATE_BRANCH } from "../state/index.js";

/**
 * The repository rulesets `consort protect` installs (docs/ARCHITECTURE.md, Gates):
 *  - on the default branch: the seven Consort checks, each bound to the app's integration id so
 *    no other app or Actions token can satisfy them, plus the pull-request review rules;
 *  - on `consort/state`: nobody but the app may create, update, force-push or delete it.
 * A ruleset is found by its name; what Consort does not manage in it is kept as it is.
 */

export const DEFAULT_BRANCH_RULESET = "consort: default branch";
export const STATE_BRANCH_RULESET = "consort: state branch";

/** Approving reviews `consort protect` asks for when `--approvals` is not given. */
export const DEFAULT_APPROVALS = 1;

export interface ProtectSettings {
  /** The GitHub App's id (the integration id of its check runs). */
  appId: number;
  /** Approving reviews a merge needs (GitHub allows 0-10; Consort requires at least 1). */
  approvals: number;
}

interface Rule {
  type: string;
  parameters?: Record<string, unknown>;
}

/** The ruleset fields Consort writes (the body of POST/PUT /repos/{o}/{r}/rulesets). */
export interface RulesetBody {
  name: string;
  target: "branch";
  enforcement: "active";
  conditions: { ref_name: { include: string[]; exclude: string[] } };
  bypass_actors: Array<{ actor_id: number | null; actor_type: string; bypass_mode: string }>;
  rules: Rule[];
}

/** The parameters Consort decides; anything else in an existing rule (e.g. allowed merge methods) is kept. */
export function desiredRulesets(settings: ProtectSettings): RulesetBody[] {
  return [
    {
      name: DEFAULT_BRANCH_RULESET,
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: ["~DEFAULT_BRANCH"], exclude: [] } },
      // Nobody bypasses the gates: a bypass would let a merge skip a failed or missing check.
      bypass_actors: [],
      rules: [
        {
          type: "required_status_checks",
          parameters: {
            strict_required_status_checks_policy: false,
            do_not_enforce_on_create: false,
            required_status_checks: CHECK_NAMES.map((context) => ({ context, integration_id: settings.appId })),
          },
        },
        {
          type: "pull_request",
          parameters: {
            required_approving_review_count: settings.approvals,
            // Approvals bind to the frozen hash (src/gates/withdrawal.ts), so stale-review dismissal is
            // not needed; off by default, and a repository that turned it on keeps it (see KEEP_IF_SET).
            dismiss_stale_reviews_on_push: false,
            require_code_owner_review: true,
            require_last_push_approval: true,
            required_review_thread_resolution: false,
          },
        },
        // A rewritten or deleted trunk would hide what was approved.
        { type: "non_fast_forward" },
        { type: "deletion" },
      ],
    },
    {
      name: STATE_BRANCH_RULESET,
      target: "branch",
      enforcement: "active",
      conditions: { ref_name: { include: [`refs/heads/${STATE_BRANCH}`], exclude: [] } },
      bypass_actors: [{ actor_id: settings.appId, actor_type: "Integration", bypass_mode: "always" }],
      rules: [
        { type: "creation" },
        { type: "update", parameters: { update_allows_fetch_and_merge: false } },
        { type: "non_fast_forward" },
        { type: "deletion" },
      ],
    },
  ];
}

/** What GitHub answers for a ruleset (`GET /repos/{o}/{r}/rulesets/{id}`), the parts compared. */
export interface ExistingRuleset {
  id: number;
  name: string;
  target?: string;
  enforcement: string;
  conditions?: { ref_name?: { include?: string[]; exclude?: string[] } } | null;
  bypass_actors?: Array<{ actor_id?: number | null; actor_type: string; bypass_mode?: string }>;
  rules?: Rule[];
}

/** Keys of managed parameters whose existing values are kept when present (Consort only sets a default). */
export const KEEP_IF_SET: Record<string, string[]> = {
  pull_request: ["required_review_thread_resolution", "dismiss_stale_reviews_on_push"],
};
/** Status-check entries other than Consort's seven are the repository's own: kept. */
const MERGED_LISTS: Record<string, string> = { required_status_checks: "required_status_checks" };

/**
 * The body to send for `desired` given the existing ruleset: Consort's rules and parameters win,
 * everything else the repository set in the ruleset stays.
 */
function mergeRuleset(desired: RulesetBody, existing: ExistingRuleset | undefined): RulesetBody {
  if (!existing) return desired;
  const rules: Rule[] = desired.rules.map((rule) => {
    const before = existing.rules?.find((r) => r.type === rule.type);
    if (!rule.parameters) return { type: rule.type };
    const parameters: Record<string, unknown> = { ...(before?.parameters ?? {}), ...rule.parameters };
    for (const key of KEEP_IF_SET[rule.type] ?? [])
      if (before?.parameters && key in before.parameters) parameters[key] = before.parameters[key];
    const listKey = MERGED_LISTS[rule.type];
    if (listKey) {
      const ours = rule.parameters[listKey] as Array<{ context: string }>;
      const theirs = ((before?.parameters?.[listKey] as Array<{ context: string }> | undefined) ?? []).filter(
        (c) => !ours.some((o) => o.context === c.context),
      );
      parameters[listKey] = [...ours, ...theirs];
    }
    return { type: rule.type, parameters };
  });
  const others = (existing.rules ?? []).filter((r) => !desired.rules.some((d) => d.type === r.type));
  return { ...desired, rules: [...rules, ...others] };
}

interface Change {
  op: "add" | "remove" | "change";
  path: string;
  from?: unknown;
  to?: unknown;
}

/** Flatten a ruleset into path → value, keying lists by identity so reordering is no change. */
function flatten(value: unknown, path: string, out: Map<string, unknown>): void {
  if (Array.isArray(value)) {
    // An empty list adds nothing to compare: its absence is the same fact.
    if (value.length === 0) return;
    const keyed = value.every(
      (v) => v && typeof v === "object" && ("type" in v || "context" in v || "actor_type" in v),
    );
    if (keyed) {
      for (const item of value as Array<Record<string, unknown>>) {
        const [key, identity] =
          "type" in item
            ? [String(item.type), ["type"]]
            : "context" in item
              ? [String(item.context), ["context"]]
              : [`${String(item.actor_type)}:${String(item.actor_id ?? "")}`, ["actor_type", "actor_id"]];
        const rest = Object.entries(item).filter(([k, v]) => !identity.includes(k) && v !== undefined);
        if (rest.length > 0) flatten(Object.fromEntries(rest), `${path}[${key}]`, out);
        else out.set(`${path}[${key}]`, true);
      }
      return;
    }
    out.set(path, value.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).sort());
    return;
  }
  if (value && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) out.set(path, "{}");
    for (const [key, v] of entries) flatten(v, path ? `${path}.${key}` : key, out);
    return;
  }
  out.set(path, value);
}

function comparable(ruleset: RulesetBody | ExistingRuleset): Record<string, unknown> {
  return {
    target: ruleset.target ?? "branch",
    enforcement: ruleset.enforcement,
    conditions: {
      ref_name: {
        include: ruleset.conditions?.ref_name?.include ?? [],
        exclude: ruleset.conditions?.ref_name?.exclude ?? [],
      },
    },
    bypass_actors: (ruleset.bypass_actors ?? []).map((a) => ({
      actor_id: a.actor_id ?? null,
      actor_type: a.actor_type,
      bypass_mode: a.bypass_mode ?? "always",
    })),
    rules: ruleset.rules ?? [],
  };
}

/** Every difference between what is and what will be, as safe-settings shows it. */
function diffRuleset(existing: ExistingRuleset | undefined, next: RulesetBody): Change[] {
  const before = new Map<string, unknown>();
  const after = new Map<string, unknown>();
  if (existing) flatten(comparable(existing), "", before);
  flatten(comparable(next), "", after);
  const changes: Change[] = [];
  for (const [path, to] of after) {
    if (!before.has(path)) changes.push({ op: "add", path, to });
    else if (JSON.stringify(before.get(path)) !== JSON.stringify(to))
      changes.push({ op: "change", path, from: before.get(path), to });
  }
  for (const [path, from] of before) if (!after.has(path)) changes.push({ op: "remove", path, from });
  return changes;
}

export interface RulesetPlan {
  name: string;
  action: "create" | "update" | "unchanged";
  id?: number;
  body: RulesetBody;
  changes: Change[];
}

export function planRuleset(desired: RulesetBody, existing: ExistingRuleset | undefined): RulesetPlan {
  const body = mergeRuleset(desired, existing);
  const changes = diffRuleset(existing, body);
  if (!existing) return { name: desired.name, action: "create", body, changes };
  return { name: desired.name, action: changes.length === 0 ? "unchanged" : "update", id: existing.id, body, changes };
}

/** The plan as text: `+` added, `-` removed, `~` changed. */
export function formatPlan(plans: RulesetPlan[]): string {
  const show = (v: unknown) => (typeof v === "string" || Array.isArray(v) ? JSON.stringify(v) : String(v));
  return plans
    .map((plan) => {
      const head = `ruleset "${plan.name}": ${plan.action}${plan.id !== undefined ? ` (id ${plan.id})` : ""}`;
      const lines = plan.changes.map((c) =>
        c.op === "add"
          ? `  + ${c.path}: ${show(c.to)}`
          : c.op === "remove"
            ? `  - ${c.path}: ${show(c.from)}`
            : `  ~ ${c.path}: ${show(c.from)} → ${show(c.to)}`,
      );
      return [head, ...lines].join("\n");
    })
    .join("\n\n");
}
