import { describe } from "vitest";
import { fixtureReport, fixtureRun } from "./fixtures.js";
import { describeNodeReport } from "./node-report.js";

// The same checks run on a report this node writes now: node-live.test.ts.
describe("the node --test report committed in fixtures/node", () => {
  describeNodeReport(async () => ({ xml: await fixtureReport("node"), exitCode: (await fixtureRun("node")).exitCode }));
});
