import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { desiredRulesets } from "../../src/protect/rulesets.js";
import * as F from "./support/feature.js";
import { AGENTS, LEAD, Scenario, type Checkpoint } from "./support/scenario.js";

/**
 * Approvals on GitHub as it really behaves (issue #14): GitHub dismissing stale approvals on push,
 * people who pushed or co-authored a step, a second PR from the track into another branch, and
 * review deliveries replayed or out of order. Each scenario forks from the design gate (or from the
 * step before it) through the app, as GitHub would deliver the webhooks.
 */

const OTHER = "second-reviewer";
const s = new Scenario({ config: { approvers: { users: [LEAD, OTHER] } } });
s.world.permissions.set(OTHER, "write");
const at: Record<"beforeDba" | "designGate", Checkpoint> = {} as never;

beforeAll(async () => {
  await s.openTrack();
  await s.step("spec-author", { ".consort/spec.json": F.SPEC });
  await s.step("architect", { ".consort/architecture.json": F.ARCHITECTURE });
  at.beforeDba = s.checkpoint();
  await s.step("dba", { ".consort/db-design.json": F.DB_DESIGN });
  expect(s.snapshot().stage).toBe("design-gate");
  at.designGate = s.checkpoint();
}, 300_000);

afterAll(async () => {
  await s.dispose();
});

const design = () => s.snapshot().context.gates.design;
const designCheck = () => {
  const check = s.world.check(s.head(), "consort/design");
  return [check.status, check.conclusion];
};

describe("GitHub's dismissal of stale approvals", () => {
  test("a push that GitHub dismisses the approval on (ruleset asks for it) leaves the design gate approved, as its files did not change", async () => {
    s.restore(at.designGate);
    const [ruleset] = desiredRulesets({ appId: s.world.appId, approvals: 1 });
    const pr = ruleset!.rules.find((r) => r.type === "pull_request")!;
    s.world.rulesets.push({
      ...ruleset,
      rules: [{ ...pr, parameters: { ...pr.parameters, dismiss_stale_reviews_on_push: true } }],
    });
    const approval = await s.review(LEAD, "APPROVED");
    expect(design().status).toBe("approved");

    await s.step("test-strategist", { ".consort/test-list.json": F.TEST_LIST });

    expect(s.world.reviews.find((r) => r.id === approval)!.state).toBe("DISMISSED");
    expect(s.world.issueEvents.map((e) => [e.reviewId, e.message, e.commitId])).toEqual([[approval, null, s.head()]]);
    expect(design().status).toBe("approved");
    expect(s.snapshot().stage).toBe("test-list-gate");
    expect(designCheck()).toEqual(["completed", "success"]);
    expect(s.world.mock.violations).toEqual([]);
  });

  test("with classic protection's dismissal on, the test list is approved after its push and both gates stay approved", async () => {
    s.restore(at.designGate);
    s.world.dismissStaleReviewsOnPush = true;
    try {
      await s.review(LEAD, "APPROVED");
      await s.step("test-strategist", { ".consort/test-list.json": F.TEST_LIST });
      await s.review(LEAD, "APPROVED");
      expect(s.snapshot().stage).toBe("red");
      expect([design().status, s.snapshot().context.gates["test-list"].status]).toEqual(["approved", "approved"]);
    } finally {
      s.world.dismissStaleReviewsOnPush = false;
    }
  });

  test("a person's dismissal still withdraws the approval", async () => {
    s.restore(at.designGate);
    const approval = await s.review(LEAD, "APPROVED");
    await s.dismissReview(approval, OTHER);
    expect([design().status, design().withdrawnReason]).toEqual([
      "withdrawn",
      `${LEAD}'s review ${approval} was dismissed`,
    ]);
    expect(s.snapshot().stage).toBe("design-gate");
  });
});

describe("a replayed or late review delivery decides nothing GitHub's reviews do not say now", () => {
  test("an approval delivered again under a new delivery id after its dismissal re-approves nothing", async () => {
    s.restore(at.designGate);
    const approval = await s.review(LEAD, "APPROVED");
    const delivery = s.lastReviewDelivery!;
    await s.dismissReview(approval, OTHER);
    const withdrawn = design();
    expect(withdrawn.status).toBe("withdrawn");

    await s.redeliver(delivery, true);

    // GitHub lists the review as dismissed now: that is what is decided, and it withdraws nothing more.
    expect(design()).toEqual(withdrawn);
    expect(s.snapshot().stage).toBe("design-gate");
  });

  test("an approval delivered after the same reviewer's later request for changes approves nothing", async () => {
    s.restore(at.designGate);
    const early = s.world.addReview(s.pull!, LEAD, "APPROVED", s.head());
    await s.review(LEAD, "CHANGES_REQUESTED");
    await s.deliverReview(early, "submitted", LEAD);
    expect(design().status).toBe("pending");
    expect(s.logs).toContain(
      `review ${early.id} (submitted) is not ${LEAD}'s standing review on GitHub now: it decides nothing`,
    );
    // No consort/design success on the head: branch protection keeps the merge blocked.
    expect(
      s.world.checkRuns.filter(
        (r) => r.head_sha === s.head() && r.name === "consort/design" && r.conclusion === "success",
      ),
    ).toEqual([]);
  });
});

describe("only the track's pull request into the default branch", () => {
  test("an approval on a second PR from the track into a scratch branch counts for nothing, and closing that PR ends nothing", async () => {
    s.restore(at.designGate);
    // A scratch branch at the architect's commit: the PR from the track into it lists only the DBA's commit.
    const architect = s.repo.commitInfo(s.head())!.parents[0]!;
    s.repo.setBranch("scratch", architect);
    const scratch = s.world.openPull(s.branch, AGENTS.dba.login, "scratch");
    await s.review(LEAD, "APPROVED", s.head(), scratch);
    expect(design().status).toBe("pending");

    scratch.state = "closed";
    await s.deliver("pull_request", {
      ...s.payloadBase,
      action: "closed",
      number: scratch.number,
      pull_request: s.world.pullPayload(scratch),
    });
    expect(s.snapshot().stage).toBe("design-gate");
    expect(s.logs).toContain(
      `a pull request from ${s.branch} into scratch, not the default branch main: Consort acts only on the track's pull request into the default branch`,
    );
  });
});

describe("the approver played no part in the steps under approval", () => {
  test("the person who pushed an agent's step cannot approve the gate over it", async () => {
    s.restore(at.beforeDba);
    const before = s.head();
    s.commit("dba", { ".consort/db-design.json": F.DB_DESIGN });
    await s.push(before, { pusher: LEAD });
    expect(s.snapshot().stage).toBe("design-gate");
    expect(design().authors).toContain(LEAD);

    await s.review(LEAD, "APPROVED");

    expect(design().status).toBe("pending");
    const comment = s.world
      .appComments(s.pull!.number)
      .map((c) => c.body)
      .join("\n");
    expect(comment).toContain(
      `@${LEAD}'s approval does not count for the design gate: ${LEAD} authored or pushed steps Consort recorded for the design gate under approval and cannot approve their own work`,
    );
    await s.review(OTHER, "APPROVED");
    expect(design().status).toBe("approved");
  });

  test("a co-author of a commit under approval cannot approve it", async () => {
    s.restore(at.beforeDba);
    const dba = await s.step(
      "dba",
      { ".consort/db-design.json": F.DB_DESIGN },
      { trailer: `dba\nCo-authored-by: Lead <${LEAD}@users.noreply.github.com>` },
    );
    expect(s.snapshot().stage).toBe("design-gate");

    await s.review(LEAD, "APPROVED");

    expect(design().status).toBe("pending");
    const comment = s.world
      .appComments(s.pull!.number)
      .map((c) => c.body)
      .join("\n");
    expect(comment).toContain(
      `@${LEAD}'s approval does not count for the design gate: ${LEAD} is a co-author of ${dba.slice(0, 7)} under approval and cannot approve their own work`,
    );
  });
});

describe("approvers by team", () => {
  /** At the design gate, with CODEOWNERS on main naming @acme/architects (whose one member is arch-lead) for .consort/. */
  function architectsOwnTheDesign() {
    s.restore(at.designGate);
    const lead = { name: "Lead", email: `${LEAD}@users.noreply.github.com`, login: LEAD };
    s.repo.commitOn("main", lead, "Architects own the design", {
      ".github/CODEOWNERS": "/.consort/ @acme/architects\n",
    });
    s.world.teams.set("acme/architects", new Set(["arch-lead"]));
  }
  afterEach(() => s.world.teams.clear());

  test("a member of the team that CODEOWNERS names for .consort/ approves; GitHub answers the membership", async () => {
    architectsOwnTheDesign();
    s.world.permissions.set("arch-lead", "write");
    await s.review("arch-lead", "APPROVED");
    expect([design().status, design().approvals.map((a) => a.approver)]).toEqual(["approved", ["arch-lead"]]);
  });

  test("someone outside that team, with write access and no other basis, does not approve", async () => {
    architectsOwnTheDesign();
    s.world.permissions.set("drive-by-writer", "write");
    await s.review("drive-by-writer", "APPROVED");
    expect(design().status).toBe("pending");
  });
});
