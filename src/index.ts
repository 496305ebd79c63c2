import type { Probot } from "probot";

/**
 * The Probot app. This file only wires webhook events to handler modules; each handler
 * parses its payload, asks the pure orchestrator what to do, and runs the effects.
 */
export default function consortApp(app: Probot): void {
  app.log.info("Consort for GitHub loaded");
}
