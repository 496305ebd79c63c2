import { z } from "zod";

/**
 * The names every part of Consort shares about gates and checks (docs/ARCHITECTURE.md, Gates), declared once here:
 * the rest of the code derives its lists and types from these.
 */

/** The gates a person approves with a PR review, in lane order (withdrawal cascades down it). */
export const GATE_NAMES = ["design", "test-list", "deploy", "promote"] as const;
export const GateName = z.enum(GATE_NAMES);
export type GateName = z.infer<typeof GateName>;

/** The gates that freeze files (the design artifacts, the test list); deploy and promote approve evidence. */
export const FILE_GATES = ["design", "test-list"] as const satisfies readonly GateName[];
export type FileGate = (typeof FILE_GATES)[number];

/** The check runs Consort owns (contract names), in the order they are written. */
export const CHECK_NAMES = [
  "consort/design",
  "consort/test-list",
  "consort/build",
  "consort/deploy",
  "consort/promote",
  "consort/discipline",
  "consort/schema",
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** The check a gate is shown on: `consort/<gate>`. */
export type GateCheckName = `consort/${GateName}`;
export const gateCheckName = (gate: GateName): GateCheckName => `consort/${gate}`;

/** What a person reads for a gate, e.g. "Test-list gate". */
export const gateTitle = (gate: GateName): string => `${gate[0]!.toUpperCase()}${gate.slice(1)} gate`;
