import { describe, expect, it } from "vitest";
import { trackEvidence } from "../../src/board/evidence.js";
import { boardPage, evidencePage, trackPage } from "../../src/board/pages.js";
import { boardTrack, NOW } from "../board/fixtures.js";

/**
 * Everything on the board that comes from a repository (branch names, test titles, refusal reasons,
 * review notes) is text an agent wrote: the pages must show it, never run it.
 */
const ATTACK = `"><img src=x onerror=alert(1)><script>alert(2)</script>`;

function hostileTrack() {
  const track = boardTrack("red");
  const context = track.snapshot.context;
  const units = context.units.map((unit) => ({
    ...unit,
    tests: unit.tests.map((test) => ({ ...test, title: `${test.title} ${ATTACK}`, file: `${test.file}${ATTACK}` })),
  }));
  return {
    ...track,
    snapshot: {
      ...track.snapshot,
      context: {
        ...context,
        branch: `feature/${ATTACK}`,
        units,
        rejectedHead: { sha: "f".repeat(40), reasons: [`touched ${ATTACK}`], at: context.updatedAt },
        lastProblem: [`T1 failed: ${ATTACK}`],
      },
    },
  };
}

describe("the board escapes what a repository wrote", () => {
  const track = hostileTrack();
  const context = { base: "/consort", viewer: "lead-human", signOut: true, now: NOW, events: "/consort/events" };
  const pages = {
    board: boardPage([track], context, { mine: false, problems: [`acme/shop: track x is left off: ${ATTACK}`] }),
    track: trackPage(track, context, {
      // consort/schema's summary holds what a migration named; a commit what its author wrote.
      schema: {
        markdown: `### Schema\n\n| change | name |\n|---|---|\n| added | \`${ATTACK}\` |\n\n${ATTACK} [run](javascript:alert(3))`,
        conclusion: "success",
        source: "the consort/schema check run",
      },
      commits: {
        list: [
          {
            sha: track.snapshot.context.head,
            at: track.snapshot.context.updatedAt,
            author: ATTACK,
            message: `Step ${ATTACK}\n\nConsort-Role: driver`,
            merge: false,
            url: "javascript:alert(4)",
          },
        ],
        source: `git log ${ATTACK}`,
      },
      problems: [`could not read ${ATTACK}`],
    }),
    evidence: evidencePage(trackEvidence(track), context),
  };

  for (const [name, html] of Object.entries(pages)) {
    it(`the ${name} page holds no markup from the branch, the titles, the reasons or the diff`, () => {
      expect(html).not.toContain("<img");
      expect(html).not.toContain("<script>alert");
      expect(html).not.toMatch(/"><img|onerror=alert\(1\)>/);
      expect(html).toContain("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt;");
      expect(html).not.toMatch(/href="javascript:/i);
      // The only scripts are the board's own live script.
      expect(html.match(/<script>/g)?.length ?? 0).toBeLessThanOrEqual(1);
    });
  }
});
