import { ROLE_TRAILER } from "./trailer.js";

/**
 * The role prompts are written once, in the repository's `roles/<role>.md`, for an agent that
 * commits its own work (a coding agent in an editor, through `consort next` or the MCP tools).
 * The agent action runs the same prompt as one turn on a runner, where Consort commits instead:
 * this turns the first kind into the second, and `npm run build:actions` writes the result into
 * the action (a test fails when the committed copies are stale).
 */

const COMMIT_RULE = new RegExp(`^- Every commit ends with the trailer \`${ROLE_TRAILER}: ([a-z-]+)\`.*$`, "m");

const HOW_A_TURN_WORKS = `## How a turn works (the agent action)
- Your task is in the NextAction JSON (the file in \`$CONSORT_NEXT_ACTION\`; also on stdin). Do exactly that step, nothing more.
- You may only change files matching the allowed paths (\`$CONSORT_ALLOWED_PATHS\`, one glob per line). Any other change makes Consort refuse the whole turn and commit nothing.
- Do not commit or push, and do not edit \`.github/\`, the workflows, CODEOWNERS or a frozen file.
- Artifacts under \`.consort/\` must follow their JSON Schemas (in Consort's \`schemas/\` folder, e.g. \`node_modules/consort-for-github/schemas\`); ids are \`F1\`, \`S1\`, \`S1-AC1\`, \`T1\`, \`INV1\`, \`NFR1\`.
`;

/** A role prompt as the agent action gives it: Consort, not the agent, commits with the trailer. */
export function agentTurnPrompt(prompt: string): string {
  const rule = COMMIT_RULE.exec(prompt);
  if (!rule)
    throw new Error(
      `a role prompt must state its commit rule ("- Every commit ends with the trailer \`${ROLE_TRAILER}: <role>\`")`,
    );
  const consortCommits = `- Consort commits your work with the trailer \`${ROLE_TRAILER}: ${rule[1]}\` after checking it: do not commit yourself.`;
  return `${prompt.replace(COMMIT_RULE, consortCommits).trimEnd()}\n\n${HOW_A_TURN_WORKS}`;
}
