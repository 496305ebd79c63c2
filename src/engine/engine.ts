import { restoreSnapshot } from "../orchestrator/index.js";
import { failAllChecks, type Target } from "../app/checks.js";
import { EffectsError, runEffects } from "./effects.js";
import { advanceTrack, type AdvanceOutcome, type EngineDeps } from "./track.js";

/**
 * The one engine behind every front door that moves a track (the webhook handlers and
 * `consort reconcile`): facts become machine events by the same functions wherever they were
 * found (pushes in commits.ts, finished runs in ingest.ts, reviews in src/gates), `advanceTrack`
 * applies them to the signed state, and the effects of what was written run here.
 */

type AdvanceOptions = Parameters<typeof advanceTrack>[1];

/** Advance a track with the events `decide` returns, then run the effects of what was written. */
export async function advanceAndAct(deps: EngineDeps, options: AdvanceOptions): Promise<AdvanceOutcome> {
  const outcome = await advanceTrack(deps, options);
  if (outcome.kind === "advanced") {
    await runEffects(deps, {
      trackId: options.trackId,
      state: outcome.state,
      snapshot: outcome.result.snapshot,
      effects: outcome.result.effects,
      config: options.config,
      ...(outcome.result.rejection ? { rejection: outcome.result.rejection.reasons } : {}),
    });
  } else {
    deps.log.info({ trackId: options.trackId, delivery: deps.deliveryId }, `track ${options.trackId}: ${outcome.kind}`);
  }
  return outcome;
}

/**
 * Advance like `advanceAndAct`; when that changed nothing, show the track again as its state
 * stands (the checks on `headSha`, when known, and the sticky comment), in case those writes were
 * what got lost. A cycle that outlived its timeout is ended on the way, like any state change.
 */
export async function advanceAndShow(deps: EngineDeps, options: AdvanceOptions): Promise<AdvanceOutcome> {
  const outcome = await advanceAndAct(deps, options);
  if ((outcome.kind === "unchanged" || outcome.kind === "duplicate") && options.headSha) {
    await runEffects(deps, {
      trackId: options.trackId,
      state: outcome.state,
      snapshot: restoreSnapshot(outcome.state.snapshot),
      config: options.config,
      effects: [{ type: "updateChecks", commit: options.headSha }],
    });
  }
  return outcome;
}

/**
 * Run a delivery's work on a track and, when it fails before its effects could report anything
 * (GitHub unreachable, a read refused, a bug), fail every check on `headSha` with the reason
 * before the error goes on to Probot. GitHub stops waiting for a delivery after ten seconds and
 * Probot has answered 202 by then, so a failure that only reached the log would be invisible: the
 * checks are where people and branch protection look. Failed effects already wrote their own
 * checks (EffectsError), so those are not overwritten.
 */
export async function reportingFailures<T>(target: Target | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (target && !(error instanceof EffectsError)) {
      const reason = error instanceof Error ? error.message : String(error);
      await failAllChecks(
        target,
        "Consort could not process this event",
        `${reason}\n\nNothing was decided on this event, so Consort fails closed. Redeliver the webhook (the app's Advanced settings, Recent Deliveries) or run \`consort reconcile\` once the cause is fixed.`,
      ).catch(() => {});
    }
    throw error;
  }
}
