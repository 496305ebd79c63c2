import { execFileSync } from "node:child_process";

/**
 * Vitest global setup: the tests that spawn `node bin/consort.js` run the built lib/, as a person's
 * CLI does, so lib/ is rebuilt first when src/ changed since the last build (about two seconds).
 */
export default function setup(): void {
  execFileSync(process.execPath, ["scripts/build-lib.mjs", "--if-stale"], { stdio: "inherit" });
}
