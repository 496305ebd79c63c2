import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { TrackEvidence, trackEvidence } from "../../src/board/evidence.js";
import { boardPage, evidencePage, laneSvg, trackPage, trackUrl } from "../../src/board/pages.js";
import { trackView } from "../../src/board/view.js";
import { boardTrack, NOW, renamed } from "./fixtures.js";

const render = (viewer: string | null) => ({
  base: "/consort",
  viewer,
  signOut: true,
  now: NOW,
  events: "/consort/events",
});
/** The rows of the board, as `data-track` ids. */
const rows = (page: string) => [...page.matchAll(/<tr class="[^"]*" data-track="([^"]+)"/g)].map((m) => m[1]);

describe("the board across repositories", () => {
  const atDesignGate = boardTrack("design-gate", { config: { approvers: { users: ["lead-human", "po-bot[bot]"] } } });
  const building = renamed(boardTrack("green-verify", { repository: "acme/ledger" }), "feature/ledger");
  const done = renamed(boardTrack("done"), "feature/old");

  it("lists every track in flight with where it stands and what it waits for, not the finished one as a row", () => {
    const page = boardPage([atDesignGate, building, done], render("someone-else"), { mine: false });
    expect(rows(page)).toEqual(["acme/stockflow#12", "feature-ledger"]);
    expect(page).toContain(">design-gate</td>");
    expect(page).toContain("approval: design gate (@lead-human)");
    expect(page).toContain('<td data-label="Waits for">green cycle acme/stockflow#12#2</td>');
    expect(page).toContain("2 of 2 shown, 1 finished");
  });

  it("says 'your approval' to a configured approver, and never to one who authored what the gate froze", () => {
    const lead = trackView(atDesignGate, "Lead-Human");
    expect(lead.waiting).toEqual({ actor: "person", what: "approval: design gate", who: ["lead-human"], mine: true });
    expect(boardPage([atDesignGate], render("lead-human"), { mine: false })).toContain(
      "<strong>your approval: design gate</strong>",
    );
    // po-bot[bot] is a configured approver but authored the stories: it may not approve.
    expect(trackView(atDesignGate, "po-bot[bot]").waiting.mine).toBe(false);
  });

  it("filters to what waits for the viewer", () => {
    const page = boardPage([atDesignGate, building], render("lead-human"), { mine: true });
    expect(rows(page)).toEqual(["acme/stockflow#12"]);
    expect(boardPage([atDesignGate, building], render("stranger"), { mine: true })).toContain("Nothing waits for you.");
  });

  it("shows a blocked track's refusal with its reason", () => {
    const blocked = boardTrack("blocked");
    const page = boardPage([blocked], render(null), { mine: false });
    expect(page).toContain(
      "<li>Blocked: T1 still fails</li>".replace("T1 still fails", blocked.snapshot.context.blocked!.reason),
    );
    expect(trackView(blocked, null).lane.find((node) => node.status === "failed")?.key).toBe("unit:T1");
  });

  it("counts the wait from the track's last change", () => {
    const page = boardPage([atDesignGate], render(null), { mine: false });
    expect(page).toContain(`<time datetime="${atDesignGate.snapshot.context.updatedAt}">2 h 55 min</time>`);
  });
});

describe("the lane picture", () => {
  it("draws each station coloured by where the track stands, the gates as diamonds", () => {
    const view = trackView(boardTrack("red"), null);
    expect(view.lane.map((n) => `${n.key}:${n.status}`)).toEqual([
      "design:done",
      "design-gate:done",
      "test-list:done",
      "test-list-gate:done",
      "unit:T1:current",
      "unit:T2:ahead",
      "deploying:ahead",
      "deploy-gate:ahead",
      "promote-gate:ahead",
      "promoting:ahead",
    ]);
    const svg = laneSvg(view.lane).value;
    expect(svg.match(/<rect /g)).toHaveLength(4);
    expect(svg).toContain('aria-label="Lane: Design: done, Design gate: done');
  });

  it("marks every station done for a finished track", () => {
    expect(trackView(boardTrack("done"), null).lane.every((node) => node.status === "done")).toBe(true);
  });
});

describe("a track's page", () => {
  const done = boardTrack("done");
  const page = trackPage(done, render("lead-human"));

  it("shows each gate with its frozen hash and who approved it when", () => {
    const design = done.snapshot.context.gates.design;
    expect(page).toContain(
      `<span class="hash" title="${design.pendingHash}">${design.pendingHash!.slice(0, 7)}</span>`,
    );
    expect(page).toContain(`@lead-human at <span class="hash">${design.approvals[0]!.manifestHash.slice(0, 7)}</span>`);
  });

  it("links every cycle to its Actions run with its verdict", () => {
    const failed = done.snapshot.context.cycles.find((c) => c.outcome === "invalid")!;
    expect(page).toContain(
      `green · invalid · <a href="https://github.com/acme/stockflow/actions/runs/${failed.runId}">run ${failed.runId}</a> <span class="refusal">(T1 failed: expected 1 rows, got 0)</span>`,
    );
  });

  it("names the paired database branch and its parent, and the timeline by role", () => {
    expect(page).toContain(
      "<dt>Branch</dt><dd><code>feature-f1-stock</code></dd><dt>Parent</dt><dd><code>main</code></dd>",
    );
    // Without the branch's commits listed, the steps the machine recorded stand for them, by role.
    expect(page).toContain("<strong>navigator</strong> RED of T1 verified");
    expect(page).toContain("<strong>driver</strong> GREEN of T1 verified");
  });

  it("says so when this app has written no consort/schema check on the track's head yet", () => {
    const page = trackPage(done, render(null), {
      schema: {
        markdown: null,
        conclusion: null,
        source: "the consort/schema check runs on c000016: none by this app yet",
      },
      problems: [],
    });
    expect(page).toContain(
      '<p class="src"><span class="src-tag">source</span> the consort/schema check runs on c000016: none by this app yet</p><p class="empty">No diff to show yet.</p>',
    );
  });

  it("is addressed by repository and track id, each encoded", () => {
    expect(trackUrl("/consort", "acme/stockflow", "acme/stockflow#12")).toBe(
      "/consort/t/acme/stockflow/acme%2Fstockflow%2312",
    );
  });
});

describe("the evidence of a finished track", () => {
  const done = boardTrack("done");
  const evidence = trackEvidence(done);
  const schema = JSON.parse(readFileSync(new URL("../../schemas/track-evidence.schema.json", import.meta.url), "utf8"));

  it("validates against schemas/track-evidence.schema.json", () => {
    const validate = new Ajv2020({ strict: false, allErrors: true }).compile(schema);
    expect(validate(JSON.parse(JSON.stringify(evidence)))).toBe(true);
    expect(validate({ ...evidence, finished: "yes" })).toBe(false);
  });

  it("holds who approved which files at which hash, every cycle, the fork and the promotion", () => {
    const ctx = done.snapshot.context;
    expect(evidence.finished).toBe(true);
    expect(evidence.gates.map((g) => [g.gate, g.check, g.approvals.map((a) => a.approver)])).toEqual([
      ["design", "success", ["lead-human"]],
      ["test-list", "success", ["lead-human"]],
      ["deploy", "success", ["lead-human"]],
      ["promote", "success", ["lead-human"]],
    ]);
    expect(evidence.gates[0]!.files.map((f) => f.path)).toEqual(Object.keys(ctx.gates.design.files).sort());
    expect(evidence.cycles.map((c) => `${c.step}:${c.unit}:${c.outcome}`)).toEqual(
      ctx.cycles.map((c) => `${c.step}:${c.unit}:${c.outcome}`),
    );
    expect(evidence.database).toEqual({
      branch: "feature-f1-stock",
      parent: "main",
      forkedAt: ctx.createdAt,
      expiresAt: null,
      cycleBranches: ctx.cycles
        .filter((c) => c.step !== "release" && c.step !== "promote")
        .map((c) => ({
          dispatchId: c.dispatchId,
          step: c.step,
          unit: c.unit,
          branch: (c.evidence as { databaseBranch: string }).databaseBranch,
          ttlSeconds: 3600,
          expiresBy: new Date(Date.parse(c.reportedAt!) + 3_600_000).toISOString(),
        })),
      promotion: {
        dispatchId: ctx.cycles.at(-1)!.dispatchId,
        commit: ctx.mergedCommit,
        outcome: "valid",
        at: ctx.cycles.at(-1)!.reportedAt,
      },
    });
    expect(TrackEvidence.parse(evidence)).toEqual(evidence);
  });

  it("renders as a page that says whether the track is finished", () => {
    expect(evidencePage(evidence, render(null))).toContain(
      `Merged at <code>${done.snapshot.context.mergedCommit}</code> and promoted.`,
    );
    expect(evidencePage(trackEvidence(boardTrack("red")), render(null))).toContain(
      "<strong>Not finished</strong> (stands at red)",
    );
  });
});
