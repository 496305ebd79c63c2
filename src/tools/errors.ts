import { stat } from "node:fs/promises";

/**
 * A failure the agent can act on: what went wrong and what to do next. Handlers throw it; the
 * server turns it into a tool error (`isError: true`), never a protocol error or a crash.
 */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    readonly code = "TOOL_ERROR",
  ) {
    super(message);
    this.name = "ToolError";
  }
}

/** Fails with a clear message when the checkout is missing, before any tool touches it. */
export async function assertCheckout(repoPath: string): Promise<void> {
  const info = await stat(repoPath).catch(() => undefined);
  if (!info?.isDirectory()) {
    throw new ToolError(
      `The repository path ${repoPath} does not exist or is not a folder.`,
      "Start the server with -C pointing at a local checkout.",
      "NO_CHECKOUT",
    );
  }
}
