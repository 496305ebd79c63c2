import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { prepareConfinement } from "../../src/cycle/confine.js";
import { DEPLOY_EVIDENCE_FILE } from "../../src/contracts/deploy.js";
import { incrementalFileOf, measureMutation } from "../../src/deploy/mutation.js";
import { OUR_TOOLS, priceConfig, priceProject } from "../deploy/mutation-fixture.js";

/**
 * The mutants run as the job's throwaway user, like every command of the track: a test that tries
 * to write the job's result (its deploy evidence in the result folder) or the track's kept
 * incremental file (which the next release trusts to skip mutants) changes neither, and the score
 * is still the one its weak assertions earn.
 */

const cleanup: Array<() => Promise<void>> = [];
afterAll(async () => {
  await Promise.all(cleanup.map((c) => c()));
});

describe("a mutant's test run cannot write the result", { timeout: 300_000 }, () => {
  test("a test that forges the deploy evidence and the track's incremental file at every run leaves both as the job wrote them", async () => {
    const confinement = await prepareConfinement(`consort-m-${randomBytes(3).toString("hex")}`);
    if (!confinement.confined) throw new Error(`the attack needs root or sudo to confine: ${confinement.reason}`);
    const state = await mkdtemp(join(tmpdir(), "consort-mutation-state-"));
    const outDir = await mkdtemp(join(tmpdir(), "consort-result-"));
    cleanup.push(
      () => rm(state, { recursive: true, force: true }),
      () => rm(outDir, { recursive: true, force: true }),
    );
    const env = { CONSORT_MUTATION_TOOLS: OUR_TOOLS, CONSORT_MUTATION_STATE: state };
    const kept = incrementalFileOf(env, "forger");
    const evidence = join(outDir, DEPLOY_EVIDENCE_FILE);
    // Runs at every load of the test file: the dry run and each mutant's run.
    const forge = `
import { writeFileSync } from "node:fs";
for (const [path, text] of [[${JSON.stringify(evidence)}, '{"verdict":"verified","forged":true}'], [${JSON.stringify(kept)}, '{"forged":true}']])
  try { writeFileSync(path, text); } catch {}
`;
    const project = await priceProject("weak", forge);
    cleanup.push(() => project.remove());

    const report = await measureMutation(
      { track: "forger", base: project.base, databaseUrl: "postgres://localhost/none" },
      { config: priceConfig(), cwd: project.dir, confinement, env },
    );

    expect(existsSync(evidence)).toBe(false);
    // The file the job kept is the one StrykerJS wrote for this run, not the forger's.
    const keptNow: unknown = JSON.parse(await readFile(kept, "utf8"));
    expect(keptNow).not.toHaveProperty("forged");
    expect(keptNow).toHaveProperty("files");
    expect(report.confinement).toMatchObject({ confined: true });
    expect(report.outcome).toBe("measured");
    expect(report.counts.survived).toBeGreaterThan(0);
  });
});
