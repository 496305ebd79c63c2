import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultConfig, ROLE_NAMES } from "../../src/config/consort-config.js";
import { agentTurnPrompt } from "../../src/roles/prompts.js";
import { ROLES, ownershipAt } from "../../src/roles/roles.js";
import type { Stage } from "../../src/orchestrator/types.js";

const prompt = (role: string) => readFileSync(new URL(`../../roles/${role}.md`, import.meta.url), "utf8");
const STEPS: Record<string, Stage[]> = {
  "product-owner": ["stories"],
  "spec-author": ["spec"],
  architect: ["architecture"],
  dba: ["db-design"],
  "ux-designer": ["ux"],
  "test-strategist": ["test-list"],
  navigator: ["red", "review"],
  driver: ["green", "repair", "refactor"],
};

describe("role prompts (roles/<role>.md)", () => {
  it.each(ROLE_NAMES.map((r) => [r]))(
    "%s: names the role, its trailer, and what it owns, reads, produces and must never do",
    (role) => {
      const text = prompt(role);
      expect(text.split("\n")[0]).toBe(`# Role: ${ROLES[role].title}`);
      expect(text).toContain(`Consort-Role: ${role}`);
      for (const section of ["## You own", "## You read", "## Hard rules"]) expect(text).toContain(section);
      expect(text).toMatch(/## (You produce|At red you produce)/);
      expect(text).toContain("NextAction");
    },
  );

  it.each(Object.entries(STEPS))(
    "%s: the files it is told it owns are the ones the machine gives it",
    (role, stages) => {
      const text = prompt(role);
      for (const stage of stages) {
        const owner = ownershipAt(stage, defaultConfig(), "T1");
        expect(owner.role).toBe(role);
        for (const path of owner.paths.filter((p) => p.startsWith(".consort/") && !p.includes("reviews")))
          expect(text).toContain(path);
      }
    },
  );
});

describe("the agent action's role prompts (written from roles/<role>.md by npm run build:actions)", () => {
  it.each(ROLE_NAMES.map((r) => [r]))(
    "%s: the same prompt, where Consort commits with the trailer, not the agent",
    (role) => {
      const source = prompt(role);
      const turn = agentTurnPrompt(source);
      expect(turn).not.toContain("Every commit ends with the trailer");
      expect(turn).toContain(
        `- Consort commits your work with the trailer \`Consort-Role: ${role}\` after checking it`,
      );
      expect(turn).toContain("## How a turn works (the agent action)");
      for (const section of ["## You own", "## You read", "## Hard rules"]) expect(turn).toContain(section);
      // Everything but the commit rule is the source's, line for line.
      const rest = (text: string) => text.split("\n").filter((line) => !line.includes("Consort-Role:"));
      expect(rest(turn).slice(0, rest(source).length - 1)).toEqual(rest(source).slice(0, -1));
    },
  );

  it("ends the prompt with how a turn works, one blank line after its last line", () => {
    const turn = agentTurnPrompt(
      "# Role: Driver\n\n- Every commit ends with the trailer `Consort-Role: driver`.\n\n\n",
    );
    const head =
      "# Role: Driver\n\n- Consort commits your work with the trailer `Consort-Role: driver` after checking it: do not commit yourself.\n\n## How a turn works (the agent action)\n- Your task";
    expect(turn.slice(0, head.length)).toBe(head);
  });

  it("refuses a prompt that does not state its commit rule, so no role ships without one", () => {
    expect(() => agentTurnPrompt("# Role: Someone\n\n## Hard rules\n- Be nice.\n")).toThrow(
      /must state its commit rule/,
    );
  });
});
