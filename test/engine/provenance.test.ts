import { describe, expect, it } from "vitest";
import { judgeResultCommit, judgeRunProvenance, type ReportedRun } from "../../src/engine/provenance.js";

/**
 * Which finished runs may move a track, with every refusal word for word: written against the
 * mutants `npm run mutate -- --mutate src/app/provenance.ts` could leave alive.
 */
const run: ReportedRun = {
  id: 987,
  path: ".github/workflows/consort-cycle.yml",
  event: "workflow_dispatch",
  headBranch: "main",
  headRepositoryId: 1,
  repositoryId: 1,
  conclusion: "success",
  htmlUrl: "https://github.com/acme/shop/actions/runs/987",
  dispatchId: "feature-x#1",
  actor: "consort[bot]",
  triggeringActor: "consort[bot]",
};
const recorded = {
  runId: 987,
  dispatchId: "feature-x#1",
  workflow: "cycle" as const,
  commit: "c".repeat(40),
  requestSha256: "e".repeat(64),
};
const judge = (changes: Partial<ReportedRun>) =>
  judgeRunProvenance({ run: { ...run, ...changes }, defaultBranch: "main", recorded });

describe("the provenance of a finished run", () => {
  it("trusts the run the app dispatched, of the cycle workflow, from the default branch", () => {
    expect(judge({})).toEqual({ trusted: true, workflow: "cycle", recorded });
  });

  it("trusts the workflow path GitHub reports with its ref appended", () => {
    expect(judge({ path: ".github/workflows/consort-cycle.yml@refs/heads/main" })).toEqual({
      trusted: true,
      workflow: "cycle",
      recorded,
    });
  });

  it("trusts a run whose head repository GitHub does not say", () => {
    expect(judge({ headRepositoryId: undefined })).toMatchObject({ trusted: true });
  });

  it("refuses each way a run is not the one Consort dispatched, saying which", () => {
    expect(judge({ path: ".github/workflows/evil.yml" })).toEqual({
      trusted: false,
      reason: "run 987 is of .github/workflows/evil.yml, not a Consort workflow",
    });
    expect(judgeRunProvenance({ run, defaultBranch: "main", recorded: undefined })).toEqual({
      trusted: false,
      reason:
        "run 987 of .github/workflows/consort-cycle.yml was not dispatched by Consort for any open track (its run-name names dispatch feature-x#1, which no track recorded)",
    });
    expect(
      judgeRunProvenance({ run: { ...run, dispatchId: undefined }, defaultBranch: "main", recorded: undefined }),
    ).toEqual({
      trusted: false,
      reason:
        "run 987 of .github/workflows/consort-cycle.yml was not dispatched by Consort for any open track (its run-name names no dispatch id)",
    });
    expect(judge({ dispatchId: "feature-x#2" })).toEqual({
      trusted: false,
      reason: "run 987 names dispatch feature-x#2 in its run-name, but Consort dispatched feature-x#1",
    });
    expect(judge({ dispatchId: undefined })).toEqual({
      trusted: false,
      reason: "run 987 names dispatch none in its run-name, but Consort dispatched feature-x#1",
    });
    expect(judge({ path: ".github/workflows/consort-deploy.yml" })).toEqual({
      trusted: false,
      reason:
        "run 987 is of .github/workflows/consort-deploy.yml, but Consort dispatched .github/workflows/consort-cycle.yml as that run",
    });
    expect(judge({ event: "push" })).toEqual({
      trusted: false,
      reason: `run 987 was triggered by "push", not by Consort's workflow_dispatch`,
    });
    expect(judge({ headBranch: "feature-x" })).toEqual({
      trusted: false,
      reason: `run 987 ran .github/workflows/consort-cycle.yml from "feature-x", not from the default branch main`,
    });
    expect(judge({ headBranch: null })).toEqual({
      trusted: false,
      reason: `run 987 ran .github/workflows/consort-cycle.yml from "no branch", not from the default branch main`,
    });
    expect(judge({ headRepositoryId: 2 })).toEqual({
      trusted: false,
      reason: "run 987 ran code from another repository (a fork)",
    });
  });

  it("refuses a run the app's bot did not start, or a person re-ran, once the app's login is known", () => {
    const judgeAs = (changes: Partial<ReportedRun>) =>
      judgeRunProvenance({ run: { ...run, ...changes }, defaultBranch: "main", recorded, appLogin: "consort[bot]" });
    expect(judgeAs({})).toEqual({ trusted: true, workflow: "cycle", recorded });
    expect(judgeAs({ actor: "Consort[bot]", triggeringActor: undefined })).toMatchObject({ trusted: true });
    expect(judgeAs({ actor: "mallory", triggeringActor: "mallory" })).toEqual({
      trusted: false,
      reason:
        "run 987 was started by mallory, not by Consort (consort[bot]): its run-name borrows dispatch feature-x#1, so it is ignored",
    });
    expect(judgeAs({ actor: undefined })).toEqual({
      trusted: false,
      reason:
        "run 987 was started by an unknown actor, not by Consort (consort[bot]): its run-name borrows dispatch feature-x#1, so it is ignored",
    });
    expect(judgeAs({ triggeringActor: "mallory" })).toEqual({
      trusted: false,
      reason: "run 987 was re-run by mallory, not by Consort (consort[bot]), so it is ignored",
    });
    // Without the login (a caller that cannot ask GET /app) the starter is not judged.
    expect(judge({ actor: "mallory" })).toMatchObject({ trusted: true });
  });

  it("refuses the workflow file of another ref than the default branch", () => {
    expect(judge({ path: ".github/workflows/consort-cycle.yml@refs/heads/feature-x" })).toEqual({
      trusted: false,
      reason:
        "run 987 ran .github/workflows/consort-cycle.yml@refs/heads/feature-x, not the workflow file of the default branch main",
    });
  });

  it("refuses a result about another commit than the one Consort asked about", () => {
    expect(judgeResultCommit(recorded, "d".repeat(40))).toEqual({
      trusted: false,
      reason: `run 987 reports on commit ${"d".repeat(12)}, but Consort asked it to test ${"c".repeat(12)}`,
    });
    expect(judgeResultCommit(recorded, "c".repeat(40))).toBeUndefined();
  });
});
