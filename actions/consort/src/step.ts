/** The jobs the one Consort action runs, chosen by its `step` input. */
export const ACTION_STEPS = ["cycle", "deploy", "promote", "agent"] as const;
export type ActionStep = (typeof ACTION_STEPS)[number];

/** The step the workflow asked for, or undefined when the input names none of them. */
export function actionStep(env: NodeJS.ProcessEnv): ActionStep | undefined {
  const value = (env.INPUT_STEP ?? "").trim();
  return ACTION_STEPS.find((step) => step === value);
}

/** Only the agent never starts a database. */
export function stepNeedsPostgres(step: ActionStep | undefined): boolean {
  return step !== "agent";
}
