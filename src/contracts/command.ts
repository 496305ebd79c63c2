/**
 * How a person runs the CLI in their own repository, the one spelling every hint prints, from any
 * floor (an error of the substrate, a check run's text, `consort init`'s hints). A bare `npx
 * consort` would fetch an unrelated registry package named `consort`; `--no-install` makes npx run
 * only the `consort` bin of the repository's own node_modules, and fail instead of downloading.
 */
export const CONSORT_COMMAND = "npx --no-install consort";

/** `consort <args>` as a person types it. */
export function consortCommand(args: string): string {
  return `${CONSORT_COMMAND} ${args}`;
}
