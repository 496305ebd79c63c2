import { z } from "zod";
import { answering, CommitSha, dispatchedRequest } from "./cycle-request.js";
import { CommandRecord } from "./cycle-result.js";
import { RoleName } from "./roles.js";

/** The agent turn's request (`consort-agent.yml`, which the engine dispatches) and its result (src/cycle/agent-turn.ts runs it). */

export const AgentRequest = z
  .object({
    ...dispatchedRequest,
    role: RoleName,
    /** The track's head the turn starts from; the checkout must be exactly there. */
    commit: CommitSha.optional(),
    /** The orchestrator's NextAction, passed to the agent as it is. */
    nextAction: z.record(z.string(), z.unknown()),
    /** Globs of the paths this role may write in this step. */
    allowedPaths: z.array(z.string().min(1)).min(1, "a role with no allowed paths can commit nothing"),
    /** The commit subject; default "consort(<role>): <nextAction.kind or step>". */
    subject: z.string().trim().min(1).max(120).optional(),
  })
  .strict();
export type AgentRequest = z.infer<typeof AgentRequest>;

export const AgentTurnResult = z
  .object({
    ...answering(AgentRequest),
    verdict: z.enum(["committed", "refused"]),
    commit: CommitSha.nullable(),
    /** Files the agent changed (added, modified, deleted, renamed). */
    files: z.array(z.string()),
    /** Changed files outside the allowed paths (the reason for a refusal). */
    outside: z.array(z.string()),
    agent: CommandRecord.optional(),
    reasons: z.array(z.string()),
  })
  .strict();
export type AgentTurnResult = z.infer<typeof AgentTurnResult>;

export const AGENT_RESULT_FILE = "agent-turn-result.json";
