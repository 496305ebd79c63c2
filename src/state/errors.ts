/** Errors of the state store. Each names the file and what a person can do about it. */

/** A state file failed its schema or its signature: nothing may advance until a maintainer re-seals it. */
export class TamperedStateError extends Error {
  constructor(
    readonly trackId: string,
    readonly path: string,
    /** What failed, e.g. "signature does not match" or "approvals.0.user: a GitHub login". */
    readonly problems: string[],
    /** The state branch commit the file was read at. */
    readonly commit: string | undefined,
  ) {
    super(
      `State file ${path} on consort/state${commit ? ` (commit ${commit.slice(0, 7)})` : ""} is tampered: ${problems.join("; ")}. ` +
        `Nothing advances until a maintainer re-seals it (the "Re-seal state" button on a check, or \`consort state reseal ${trackId}\`).`,
    );
    this.name = "TamperedStateError";
  }
}

/** Another writer kept moving `consort/state` and every retry lost the compare-and-swap. */
export class StateConflictError extends Error {
  constructor(
    readonly trackId: string,
    readonly attempts: number,
  ) {
    super(
      `Could not write tracks/${trackId}.json: consort/state moved under every one of ${attempts} attempts (compare-and-swap lost). ` +
        "The event was not applied; redeliver the webhook or run `consort reconcile`.",
    );
    this.name = "StateConflictError";
  }
}

/** Any other reason the store cannot read or write, e.g. an empty repository or a bad update. */
export class StateStoreError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(hint ? `${message} (${hint})` : message);
    this.name = "StateStoreError";
  }
}
