#!/usr/bin/env node
// The CLI runs from lib/, the JavaScript `npm run build` bundles from src/ (`npm ci` builds it
// through `prepare`). A checkout whose src/ changed since then runs the sources through tsx
// instead (seconds slower at every start), and says how to make lib/ current.
import { LIB_ENTRY, staleReason } from "../scripts/build-lib.mjs";

const stale = staleReason();
if (stale === undefined) {
  await import(`../${LIB_ENTRY}`);
} else {
  process.stderr.write(
    `consort: ${stale}; running src/ through tsx (slow start). \`npm run build\` makes lib/ current.\n`,
  );
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/cli/main.ts");
}
