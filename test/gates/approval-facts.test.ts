import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApproversConfig } from "../../src/config/consort-config.js";
import { gateApproval } from "../../src/gates/approval.js";
import { fetchCodeowners } from "../../src/github/codeowners.js";
import {
  coAuthorsOf,
  collectReviewerFacts,
  listCommitsUnderApproval,
  listGateReviews,
  teamsThatMatter,
} from "../../src/github/reviews.js";
import { GitHubMock } from "../helpers/github.js";
import { contentsReply, octokit } from "../state/helpers.js";

/** Fetching the approval facts from GitHub, then deciding the design gate of acme/shop#7. */

let github: GitHubMock;
beforeEach(() => {
  github = new GitHubMock();
});
afterEach(() => {
  github.dispose();
});

const H = "a".repeat(40);
const SHOP = { owner: "acme", repo: "shop" };
const user = (login: string) => ({ login, id: login.length, type: "User" });
const reviewJson = (id: number, login: string, state: string, submitted: string) => ({
  id,
  node_id: `R${id}`,
  user: user(login),
  body: "",
  state,
  html_url: `https://github.com/acme/shop/pull/7#pullrequestreview-${id}`,
  pull_request_url: "https://api.github.com/repos/acme/shop/pulls/7",
  commit_id: H,
  submitted_at: submitted,
  author_association: "MEMBER",
  _links: { html: { href: "" }, pull_request: { href: "" } },
});

describe("fetching what the approval rules need", () => {
  it("lists reviews, commits, CODEOWNERS on the default branch and the approving reviewers' permission and teams", async () => {
    github
      .on("GET", "/repos/acme/shop/pulls/7/reviews", [
        200,
        [
          reviewJson(11, "lee", "APPROVED", "2026-11-30T06:00:00Z"),
          reviewJson(12, "kim", "CHANGES_REQUESTED", "2026-11-30T06:01:00Z"),
          reviewJson(13, "sam", "APPROVED", "2026-11-30T06:02:00Z"),
        ],
      ])
      .on("GET", "/repos/acme/shop/pulls/7/commits", [
        200,
        [
          { sha: "1".repeat(40), author: user("spec-bot[bot]"), commit: {} },
          { sha: H, author: null, commit: {} },
        ],
      ])
      .on("GET", "/repos/acme/shop/contents/.github%2FCODEOWNERS", [404, { message: "Not Found" }])
      .on("GET", "/repos/acme/shop/contents/CODEOWNERS", contentsReply("/.consort/ @acme/architects\n", "CODEOWNERS"))
      .on("GET", "/repos/acme/shop/collaborators/lee/permission", [
        200,
        { permission: "write", role_name: "maintain", user: user("lee") },
      ])
      .on("GET", "/repos/acme/shop/collaborators/sam/permission", [
        200,
        { permission: "write", role_name: "write", user: user("sam") },
      ])
      .on("GET", "/orgs/acme/teams/architects/memberships/lee", [404, { message: "Not Found" }])
      .on("GET", "/orgs/acme/teams/design-leads/memberships/lee", [200, { state: "active", role: "member", url: "" }])
      .on("GET", "/orgs/acme/teams/architects/memberships/sam", [200, { state: "pending", role: "member", url: "" }])
      .on("GET", "/orgs/acme/teams/design-leads/memberships/sam", [404, { message: "Not Found" }]);

    const client = octokit();
    const reviews = await listGateReviews(client, SHOP, 7);
    const commits = await listCommitsUnderApproval(client, SHOP, 7);
    const codeowners = await fetchCodeowners(client, "acme", "shop", "main");
    const approvers = ApproversConfig.parse({ teams: ["design-leads"] });
    const teams = teamsThatMatter(approvers, "acme", codeowners?.rules);
    const reviewers = await collectReviewerFacts(client, SHOP, reviews, teams);

    github.verify();
    expect(github.calls("GET", "/repos/acme/shop/contents/CODEOWNERS")[0]!.query).toEqual({ ref: "main" });
    expect(teams).toEqual(["acme/architects", "acme/design-leads"]);
    expect(commits).toEqual([
      { sha: "1".repeat(40), authorLogin: "spec-bot[bot]", committerLogin: null, coAuthors: [] },
      { sha: H, authorLogin: null, committerLogin: null, coAuthors: [] },
    ]);
    expect([...reviewers]).toEqual([
      ["lee", { permission: "maintain", teams: ["acme/design-leads"] }],
      ["sam", { permission: "write", teams: [] }],
    ]);

    // The unlinked author of H blocks every approval: fail closed, with the reason.
    const gate = gateApproval(reviews, {
      gate: "design",
      org: "acme",
      pendingHash: "d".repeat(64),
      hashAtCommit: new Map([[H, "d".repeat(64)]]),
      approvers,
      codeowners: codeowners?.rules,
      commits,
      reviewers,
      recordedAuthors: [],
    });
    expect(gate.approved).toBe(false);
    expect(gate.decisions.map((d) => [d.user, d.reasons])).toEqual([
      ["lee", ["commit aaaaaaa has no GitHub author, so it cannot be shown that lee did not write it"]],
      [
        "kim",
        [
          "kim's review 12 is CHANGES_REQUESTED, not APPROVED",
          "kim's permission on the repository is unknown, so the review cannot count",
          expect.stringMatching(/^kim is not an approver/),
          "commit aaaaaaa has no GitHub author, so it cannot be shown that kim did not write it",
        ],
      ],
      [
        "sam",
        [
          expect.stringMatching(/^sam is not an approver/),
          "commit aaaaaaa has no GitHub author, so it cannot be shown that sam did not write it",
        ],
      ],
    ]);
  });

  it("names each commit's committer and co-authors, so a reviewer who played any part in it is known", async () => {
    github.on("GET", "/repos/acme/shop/pulls/7/commits", [
      200,
      [
        {
          sha: "1".repeat(40),
          author: user("spec-bot[bot]"),
          committer: user("Lee"),
          commit: {
            message:
              "spec\n\nConsort-Role: spec-author\nCo-authored-by: Kim Doe <4242+kim@users.noreply.github.com>\nco-authored-by: sam <sam@example.com>\n",
          },
        },
      ],
    ]);
    const commits = await listCommitsUnderApproval(octokit(), SHOP, 7);
    github.verify();
    expect(commits).toEqual([
      {
        sha: "1".repeat(40),
        authorLogin: "spec-bot[bot]",
        committerLogin: "Lee",
        coAuthors: ["kim", "Kim Doe", "sam"],
      },
    ]);
  });

  it("reads co-authors from a GitHub no-reply address, with or without the account id, and by name", () => {
    expect(coAuthorsOf("x\n\nCo-authored-by: A <a@users.noreply.github.com>")).toEqual(["a", "A"]);
    expect(coAuthorsOf("x\n\nCo-Authored-By:   bot  <1+ci-bot[bot]@users.noreply.github.com>  ")).toEqual([
      "ci-bot[bot]",
      "bot",
    ]);
    expect(coAuthorsOf("x\n\nCo-authored-by: Lee")).toEqual(["Lee"]);
    expect(coAuthorsOf("x\n\nReviewed-by: Lee <lee@users.noreply.github.com>")).toEqual([]);
  });

  it("refuses to decide on a pull request with more commits than GitHub lists", async () => {
    const page = Array.from({ length: 100 }, (_, i) => ({
      sha: i.toString(16).padStart(40, "0"),
      author: user("dana"),
      commit: {},
    }));
    const link = (n: number) =>
      `<https://api.github.com/repos/acme/shop/pulls/7/commits?per_page=100&page=${n}>; rel="next"`;
    github
      .on("GET", "/repos/acme/shop/pulls/7/commits", [200, page, { link: link(2) }])
      .on("GET", "/repos/acme/shop/pulls/7/commits", [200, page, { link: link(3) }])
      .on("GET", "/repos/acme/shop/pulls/7/commits", [200, page.slice(0, 50)]);
    await expect(listCommitsUnderApproval(octokit(), SHOP, 7)).rejects.toThrow(
      /250 or more commits.*self-approval cannot be ruled out/,
    );
    github.verify();
  });
});
