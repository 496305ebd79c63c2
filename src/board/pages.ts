import { gateTitle } from "../contracts/gates.js";
import type { MutationReport } from "../contracts/mutation.js";
import { mutationHeadline } from "../deploy/index.js";
import type { TrackEvidence } from "./evidence.js";
import { runUrlOf, trackEvidence } from "./evidence.js";
import { markdownHtml, markup, page, SafeHtml, waitedFor, type PageFrame } from "./html.js";
import { trackTimeline, type TimelineEntry, type TimelineVerdict } from "./timeline.js";
import {
  inFlight,
  PROVENANCE_NOTE,
  trackView,
  type BoardTrack,
  type LaneNode,
  type Provenance,
  type TrackDetails,
  type TrackView,
} from "./view.js";

/**
 * The board's pages, rendered from board tracks: the board across repositories, a track's page,
 * and a track's evidence. Pure: the same input gives the same HTML, whoever serves it.
 */

export interface RenderContext extends Omit<PageFrame, "title" | "events"> {
  now: Date;
  /** The server-sent events URL (live pages only). */
  events?: string;
}

/** The URL of a track's page (repository and track id are path segments, each encoded). */
export function trackUrl(base: string, repository: string, trackId: string): string {
  const [owner, name] = repository.split("/");
  return `${base}/t/${encodeURIComponent(owner!)}/${encodeURIComponent(name!)}/${encodeURIComponent(trackId)}`;
}

const short = (sha: string | null | undefined) => (sha ? sha.slice(0, 7) : "—");
const STATUS_WORD: Record<LaneNode["status"], string> = {
  done: "done",
  current: "in progress",
  waiting: "waiting for approval",
  failed: "stopped",
  ahead: "not reached",
};
const none = markup`<span class="empty">—</span>`;
const provenanceTag = (provenance: Provenance) =>
  provenance === "signed" ? "" : markup` <span class="tag failure">${PROVENANCE_NOTE[provenance]}</span>`;

/** The lane as a picture: one station per step, gate (a diamond) and unit, coloured by where it stands. */
export function laneSvg(lane: LaneNode[], compact = false): SafeHtml {
  const gap = compact ? 26 : 84;
  // Room at each end for half a label, so the first and last are not cut.
  const pad = compact ? 12 : 42;
  const height = compact ? 24 : 52;
  const y = 12;
  const width = gap * (lane.length - 1) + 2 * pad;
  const summary = lane.map((node) => `${node.label}: ${STATUS_WORD[node.status]}`).join(", ");
  const shapes = lane.map((node, index) => {
    const x = pad + index * gap;
    const title = markup`<title>${node.label}: ${STATUS_WORD[node.status]}</title>`;
    const shape =
      node.kind === "gate"
        ? markup`<rect class="${node.status}" x="${x - 7}" y="${y - 7}" width="14" height="14" transform="rotate(45 ${x} ${y})">${title}</rect>`
        : markup`<circle class="${node.status}" cx="${x}" cy="${y}" r="${node.kind === "unit" ? 7 : 9}">${title}</circle>`;
    const label = compact
      ? ""
      : markup`<text x="${x}" y="${y + 30}" text-anchor="middle">${node.label.length > 12 ? `${node.label.slice(0, 11)}…` : node.label}</text>`;
    return markup`${shape}${label}`;
  });
  return markup`<svg class="lane" role="img" aria-label="${`Lane: ${summary}`}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" preserveAspectRatio="xMinYMid meet"><line x1="${pad}" y1="${y}" x2="${width - pad}" y2="${y}"/>${shapes}</svg>`;
}

function waitingCell(view: TrackView, viewer: string | null): SafeHtml {
  const who = view.waiting.who.length > 0 ? ` (${view.waiting.who.map((login) => `@${login}`).join(", ")})` : "";
  if (!view.waiting.mine || !viewer) return markup`${view.waiting.what}${who}`;
  return markup`<strong>${view.waiting.what.startsWith("approval") ? `your ${view.waiting.what}` : `you: ${view.waiting.what}`}</strong>`;
}

function refusalList(reasons: string[]): SafeHtml | string {
  if (reasons.length === 0) return "";
  return markup`<ul class="refusals">${reasons.map((reason) => markup`<li>${reason}</li>`)}</ul>`;
}

export interface BoardOptions {
  /** Show only what waits for the viewer. */
  mine: boolean;
  /** What the source could not read (a repository, a state file), with why: shown, never hidden. */
  problems?: string[];
  /** Deliveries the app will not try again (its dead letters), newest first. */
  deadLetters?: DeadLetter[];
}

/** A webhook delivery that failed for good, as the app's queue keeps it (src/queue). */
export interface DeadLetter {
  id: string;
  repository: string;
  event: string;
  attempts: number;
  reason: string;
  failedAt: Date;
}

/** The dead letters with what to do: the work they carried is caught up by reconciling their repository. */
function deadLetterSection(dead: DeadLetter[] | undefined): SafeHtml | "" {
  if (!dead || dead.length === 0) return "";
  const repositories = [...new Set(dead.map((d) => d.repository))];
  return markup`<section class="problems" aria-labelledby="dead-letters"><h2 id="dead-letters">Deliveries that failed for good</h2>
<p>The app will not try these again, so their tracks may be behind. Catch a repository up with <code>consort reconcile --repo owner/name</code>, run with the app's settings (APP_ID, PRIVATE_KEY, CONSORT_STATE_KEY, DATABASE_URL): ${repositories.map((r, i) => markup`${i > 0 ? ", " : ""}<code>consort reconcile --repo ${r}</code>`)}.</p>
<ul class="refusals">${dead.map((d) => markup`<li>${d.repository}: ${d.event} delivery <code>${d.id}</code>, ${d.attempts} attempt(s), <time datetime="${d.failedAt.toISOString()}">${d.failedAt.toISOString()}</time>: ${d.reason}</li>`)}</ul></section>`;
}

/** The board: every track in flight across the viewer's repositories, the longest-waiting first. */
export function boardPage(tracks: BoardTrack[], context: RenderContext, options: BoardOptions): string {
  const views = tracks
    .filter(inFlight)
    .map((track) => trackView(track, context.viewer))
    .sort((a, b) => a.since.localeCompare(b.since) || a.trackId.localeCompare(b.trackId));
  const shown = options.mine ? views.filter((view) => view.waiting.mine) : views;
  const finished = tracks.filter((track) => !inFlight(track));
  const rows = shown.map(
    (view) => markup`<tr class="${view.waiting.mine ? "mine" : ""}" data-track="${view.trackId}">
<td data-label="Track"><a href="${trackUrl(context.base, view.repository, view.trackId)}">${view.branch}</a><br><span class="empty">${view.repository}</span>${provenanceTag(view.provenance)}<br><span class="src">${view.source}</span></td>
<td data-label="Lane">${laneSvg(view.lane, true)}</td>
<td data-label="Stands at">${view.stage}</td>
<td data-label="Waits for">${waitingCell(view, context.viewer)}</td>
<td data-label="Waiting"><time datetime="${view.since}">${waitedFor(view.since, context.now)}</time></td>
<td data-label="Refusals">${view.refusals.length === 0 ? markup`<span class="empty">none</span>` : refusalList(view.refusals)}</td>
</tr>`,
  );
  const current = new SafeHtml('aria-current="page"');
  const filterLabel = context.viewer ? "Waiting for me" : "Waiting for a person";
  const table =
    shown.length === 0
      ? markup`<p class="empty">${options.mine ? (context.viewer ? "Nothing waits for you." : "Nothing waits for a person.") : "No track is in flight."}</p>`
      : markup`<table class="board"><thead><tr><th>Track</th><th>Lane</th><th>Stands at</th><th>Waits for</th><th>Waiting</th><th>Refusals</th></tr></thead><tbody>${rows}</tbody></table>`;
  const done =
    finished.length === 0
      ? ""
      : markup`<section aria-labelledby="finished"><h2 id="finished">Finished</h2><ul>${finished.map((t) => markup`<li><a href="${trackUrl(context.base, t.repository, t.snapshot.context.trackId)}">${t.snapshot.context.branch}</a> (${t.repository}, ${t.snapshot.stage})</li>`)}</ul></section>`;
  const problems =
    options.problems && options.problems.length > 0
      ? markup`<section class="problems" aria-labelledby="problems"><h2 id="problems">Not shown</h2><ul class="refusals">${options.problems.map((p) => markup`<li>${p}</li>`)}</ul></section>`
      : "";
  const body = markup`${deadLetterSection(options.deadLetters)}${problems}<nav class="filter" aria-label="Filter">
<a id="filter-all" href="${context.base}/" ${options.mine ? "" : current}>All in flight</a> ·
<a id="filter-mine" href="${context.base}/?mine=1" ${options.mine ? current : ""}>${filterLabel}</a>
<span class="empty">${shown.length} of ${views.length} shown${finished.length ? `, ${finished.length} finished` : ""}</span>
</nav>
${table}
${done}`;
  return page({ ...context, title: options.mine ? `${filterLabel} · Consort board` : "Consort board" }, body);
}

const stampCell = (stamp: { commit: string; at: string } | null) =>
  stamp ? markup`${short(stamp.commit)} · <time datetime="${stamp.at}">${stamp.at}</time>` : none;

/** The small mark that names where a fact comes from ("from consort/state at 1a2b3c4"). */
const sourceMark = (text: string) => markup`<p class="src"><span class="src-tag">source</span> ${text}</p>`;

const VERDICT_WORD: Record<TimelineVerdict, string> = {
  accepted: "accepted",
  refused: "refused",
  undecided: "pending",
  event: "",
};

/** How many timeline entries one group holds; older groups are collapsed, the newest is open. */
const TIMELINE_GROUP = 25;

function timelineSection(entries: TimelineEntry[], source: string): SafeHtml {
  const row = (entry: TimelineEntry) => {
    const commit = entry.commit
      ? entry.commit.url && /^https?:\/\//.test(entry.commit.url)
        ? markup`<a href="${entry.commit.url}"><code>${short(entry.commit.sha)}</code></a>`
        : markup`<code>${short(entry.commit.sha)}</code>`
      : "";
    const run = entry.run?.url ? markup` <a href="${entry.run.url}">run ${entry.run.id ?? ""}</a>` : "";
    const verdict =
      entry.verdict === "event"
        ? ""
        : markup`<span class="tag ${entry.verdict === "accepted" ? "success" : entry.verdict === "refused" ? "failure" : "pending"}">${VERDICT_WORD[entry.verdict]}</span>`;
    const reasons =
      entry.reasons.length > 0 && entry.verdict !== "accepted"
        ? markup`<ul class="refusals">${entry.reasons.map((r) => markup`<li>${r}</li>`)}</ul>`
        : "";
    return markup`<li class="${entry.verdict}"><time datetime="${entry.at}">${entry.at.replace("T", " ").replace(/\.\d+Z$|Z$/, "")}</time> <strong>${entry.who}</strong> ${entry.what} ${commit}${run} ${verdict}${reasons}</li>`;
  };
  const groups: TimelineEntry[][] = [];
  for (let i = 0; i < entries.length; i += TIMELINE_GROUP) groups.push(entries.slice(i, i + TIMELINE_GROUP));
  const commits = entries.filter((e) => e.commit).length;
  const refused = entries.filter((e) => e.commit && e.verdict === "refused").length;
  const body = groups.map((group, index) => {
    const first = index * TIMELINE_GROUP + 1;
    const count = (verdict: TimelineVerdict) => group.filter((e) => e.commit && e.verdict === verdict).length;
    const label = `Steps ${first}–${first + group.length - 1}: ${group[0]!.at.slice(0, 10)} to ${group.at(-1)!.at.slice(0, 10)} · ${count("accepted")} accepted, ${count("refused")} refused`;
    const open = index === groups.length - 1 ? new SafeHtml(" open") : "";
    return markup`<details class="steps" id="steps-${first}"${open}><summary>${label}</summary><ol start="${first}">${group.map(row)}</ol></details>`;
  });
  return markup`<section aria-labelledby="timeline"><h2 id="timeline">Timeline</h2>${sourceMark(source)}
<p class="empty">${entries.length} steps, ${commits} commits (${refused} refused), oldest first.</p>${body}</section>`;
}

function databaseSection(track: BoardTrack, evidence: TrackEvidence, details: TrackDetails): SafeHtml {
  const { context: ctx } = track.snapshot;
  const db = evidence.database;
  const promotion = db.promotion;
  const expiry =
    track.snapshot.stage === "done"
      ? `deleted: the track is merged and ${ctx.parentDatabaseBranch} migrated${promotion?.at ? ` (${promotion.at})` : ""}`
      : track.snapshot.stage === "abandoned"
        ? `deleted with the abandoned track${ctx.ended ? ` (${ctx.ended.at})` : ""}`
        : "never: a track's branch has no TTL (on Lakebase a branch that expires cannot have children); it is deleted when the track is merged and promoted, abandoned, or its git branch is deleted";
  const ttl = (seconds: number) => (seconds >= 3600 ? `${seconds / 3600} h` : `${seconds / 60} min`);
  const throwaway =
    db.cycleBranches.length === 0
      ? markup`<p class="empty">No cycle has run on a throwaway branch yet.</p>`
      : markup`<p id="throwaway-ttl">Each cycle forks a throwaway branch from <code>${db.branch}</code> with a TTL of ${ttl(db.cycleBranches[0]!.ttlSeconds)} and deletes it at the run's end; it is gone by the time shown at the latest.</p>
<table class="cycles"><thead><tr><th>Throwaway branch</th><th>Cycle</th><th>Gone by</th></tr></thead><tbody>${db.cycleBranches.map(
          (b) =>
            markup`<tr><td><code>${b.branch}</code></td><td>${b.step} ${b.unit}</td><td>${b.expiresBy ? markup`<time datetime="${b.expiresBy}">${b.expiresBy}</time>` : "running"}</td></tr>`,
        )}</tbody></table>`;
  const schema = details.schema
    ? markup`<h3 id="schema-diff">Schema diff against ${ctx.parentDatabaseBranch}${details.schema.conclusion ? markup` <span class="tag ${details.schema.conclusion === "success" ? "success" : details.schema.conclusion === "failure" ? "failure" : "pending"}">${details.schema.conclusion}</span>` : ""}</h3>${sourceMark(details.schema.source)}${details.schema.markdown === null ? markup`<p class="empty">No diff to show yet.</p>` : markup`<div class="md">${markdownHtml(details.schema.markdown)}</div>`}`
    : markup`<h3 id="schema-diff">Schema diff against ${ctx.parentDatabaseBranch}</h3><p class="empty">Not shown here: it is the consort/schema check of the pull request (\`consort db diff\` computes it on your machine).</p>`;
  return markup`<section aria-labelledby="database"><h2 id="database">Database branch</h2>${sourceMark(`${evidence.sources.state}; throwaway branches from the cycle results`)}
<dl class="facts"><dt>Branch</dt><dd><code>${db.branch}</code></dd><dt>Parent</dt><dd><code>${db.parent}</code></dd><dt>Forked</dt><dd><time datetime="${db.forkedAt}">${db.forkedAt}</time> (when the track started)</dd>
<dt>Expires</dt><dd id="db-expires">${expiry}</dd>
<dt>Promotion</dt><dd>${promotion ? `${promotion.outcome ?? "running"} (${promotion.dispatchId})` : "not yet"}</dd></dl>
<h3>Throwaway branches of the cycles</h3>${throwaway}
${schema}</section>`;
}

/** A track's page: the lane, the gates, every test's cycles, the database branch, the timeline. */
export function trackPage(track: BoardTrack, context: RenderContext, details: TrackDetails = { problems: [] }): string {
  const view = trackView(track, context.viewer);
  const evidence = trackEvidence(track);
  const { context: ctx } = track.snapshot;
  const url = trackUrl(context.base, track.repository, view.trackId);
  const stateMark = sourceMark(evidence.sources.state);
  const gates = evidence.gates.map(
    (gate) => markup`<tr id="gate-${gate.gate}">
<td>${gateTitle(gate.gate)}</td>
<td><span class="tag ${gate.check}">${gate.check}</span> ${gate.checkTitle}</td>
<td><span class="hash" title="${gate.manifestHash ?? ""}">${short(gate.manifestHash)}</span></td>
<td>${gate.approvals.length === 0 ? markup`<span class="empty">none</span>` : gate.approvals.map((a) => markup`@${a.approver} at <span class="hash">${short(a.manifestHash)}</span> · <time datetime="${a.at}">${a.at}</time><br>`)}</td>
</tr>`,
  );
  const units = ctx.units.map((unit) => {
    const record = ctx.evidence[unit.id];
    const runs = ctx.cycles
      .filter((cycle) => cycle.unit === unit.id)
      .map((cycle) => {
        const link = runUrlOf(track.repository, cycle.runId, cycle.evidence);
        const reasons =
          cycle.reasons.length > 0 ? markup` <span class="refusal">(${cycle.reasons.join("; ")})</span>` : "";
        return markup`${cycle.step} · ${cycle.outcome ?? "running"}${link ? markup` · <a href="${link}">run ${cycle.runId ?? ""}</a>` : ""}${reasons}<br>`;
      });
    return markup`<tr>
<td><strong>${unit.id}</strong><br>${unit.tests.map((test) => markup`<span title="${test.file}">${test.title}</span><br>`)}</td>
<td>${stampCell(record?.red ?? null)}</td>
<td>${stampCell(record?.green ?? null)}</td>
<td>${record?.review ? record.review.verdict : none}${record?.refactor ? markup`<br>refactor ${stampCell(record.refactor)}` : ""}</td>
<td>${runs}</td>
</tr>`;
  });
  const timeline = trackTimeline(
    track.snapshot,
    details.commits?.list,
    track.config,
    (runId, ev) => runUrlOf(track.repository, runId, ev),
    track.commitRefusals,
  );
  const timelineSource = details.commits
    ? `${details.commits.source}; each judged against the snapshot ${evidence.sources.state}`
    : `${evidence.sources.state} (the branch's commits were not listed: only the steps the machine recorded)`;
  const problems =
    details.problems.length > 0
      ? markup`<section class="problems" aria-labelledby="problems"><h2 id="problems">Not shown</h2><ul class="refusals">${details.problems.map((p) => markup`<li>${p}</li>`)}</ul></section>`
      : "";
  const body = markup`<p><a href="${context.base}/">← all tracks</a></p>
<h2 class="title">${view.branch} <span class="empty">${track.repository}</span></h2>
<p>Stands at <strong>${view.stage}</strong>; waits for ${waitingCell(view, context.viewer)} since <time datetime="${view.since}">${waitedFor(view.since, context.now)}</time>.${provenanceTag(view.provenance)}</p>
${stateMark}
<figure>${laneSvg(view.lane)}<figcaption class="empty">${view.lane.map((n) => `${n.label} ${STATUS_WORD[n.status]}`).join(" · ")}</figcaption></figure>
${problems}
${view.refusals.length > 0 ? markup`<section aria-labelledby="refusals"><h2 id="refusals">Refusals</h2>${refusalList(view.refusals)}</section>` : ""}
<section aria-labelledby="gates"><h2 id="gates">Gates</h2>${stateMark}
<table><thead><tr><th>Gate</th><th>Check</th><th>Frozen hash</th><th>Approved by</th></tr></thead><tbody>${gates}</tbody></table></section>
<section aria-labelledby="tests"><h2 id="tests">Tests</h2>${sourceMark(`${evidence.sources.state}: the cycle records, each run's verdict as its result reported it`)}
${ctx.units.length === 0 ? markup`<p class="empty">No test list approved yet.</p>` : markup`<table class="cycles"><thead><tr><th>Unit</th><th>RED</th><th>GREEN</th><th>Review</th><th>Runs</th></tr></thead><tbody>${units}</tbody></table>`}</section>
${databaseSection(track, evidence, details)}
${timelineSection(timeline, timelineSource)}
<p><a id="evidence-link" href="${url}/evidence">Evidence</a> · <a href="${url}/evidence.json" download>evidence.json</a></p>`;
  return page({ ...context, title: `${view.branch} · Consort board` }, body);
}

/** The evidence of a track as a page (the JSON download holds the same). */
export function evidencePage(evidence: TrackEvidence, context: RenderContext): string {
  const url = trackUrl(context.base, evidence.repository, evidence.trackId);
  const promotion = evidence.database.promotion;
  const gates = evidence.gates.map(
    (gate) =>
      markup`<tr><td>${gateTitle(gate.gate)} <span class="tag ${gate.check}">${gate.check}</span></td><td>${gate.files.map((f) => markup`<code>${f.path}</code> <span class="hash">${short(f.sha256)}</span><br>`)}</td><td><span class="hash">${gate.manifestHash ?? "—"}</span></td><td>${gate.approvals.map((a) => markup`@${a.approver} (review ${a.reviewId}) on <code>${short(a.commit)}</code> at <time datetime="${a.at}">${a.at}</time><br>`)}</td></tr>`,
  );
  const cycles = evidence.cycles.map(
    (c) =>
      markup`<tr><td>${c.step}</td><td>${c.unit}</td><td>${c.outcome ?? "running"}${c.reasons.length ? markup` <span class="refusal">${c.reasons.join("; ")}</span>` : ""}</td><td><code>${short(c.commit)}</code></td><td>${c.runUrl ? markup`<a href="${c.runUrl}">${c.runId ?? "run"}</a>` : "—"}</td><td>${c.reportedAt ?? "—"}</td></tr>`,
  );
  const body = markup`<p><a href="${url}">← the track</a> · <a id="download" href="${url}/evidence.json" download>Download evidence.json</a></p>
<h2 class="title">Evidence of ${evidence.branch} <span class="empty">${evidence.repository}</span></h2>
<p>${evidence.finished ? markup`Merged at <code>${evidence.mergedCommit ?? ""}</code> and promoted.` : markup`<strong>Not finished</strong> (stands at ${evidence.stage}): the evidence so far.`}${provenanceTag(evidence.provenance)}</p>
${sourceMark(`${evidence.sources.state}; each cycle's verdict and run as its result reported it`)}
<section aria-labelledby="ev-gates"><h2 id="ev-gates">Approvals</h2><table><thead><tr><th>Gate</th><th>Frozen files</th><th>Manifest</th><th>Approved by</th></tr></thead><tbody>${gates}</tbody></table></section>
<section aria-labelledby="ev-cycles"><h2 id="ev-cycles">Cycles</h2><table class="cycles"><thead><tr><th>Step</th><th>Unit</th><th>Verdict</th><th>Commit</th><th>Run</th><th>Reported</th></tr></thead><tbody>${cycles}</tbody></table></section>
<section aria-labelledby="ev-db"><h2 id="ev-db">Database</h2><dl class="facts"><dt>Branch</dt><dd><code>${evidence.database.branch}</code></dd><dt>Forked from</dt><dd><code>${evidence.database.parent}</code> at ${evidence.database.forkedAt}</dd>
<dt>Promoted</dt><dd>${promotion ? `${promotion.outcome ?? "running"} at ${promotion.at ?? "—"} (commit ${short(promotion.commit)})` : "not yet"}</dd>
<dt>Deploy</dt><dd>${evidence.deploy ? `${evidence.deploy.summary} (${evidence.deploy.checks.map((c) => `${c.name} ${c.ok ? "ok" : "failed"}`).join(", ")})` : "not yet"}</dd></dl></section>
${evidence.deploy?.mutation ? mutationSection(evidence.deploy.mutation) : ""}`;
  return page({ ...context, title: `Evidence of ${evidence.branch} · Consort board` }, body);
}

/** The mutation score the release measured: the counts, each survivor as file:line and its one-line diff. */
function mutationSection(report: MutationReport): SafeHtml {
  const { killed, survived, timedOut, notCovered } = report.counts;
  const survivors = report.survivors.map(
    (s) =>
      markup`<tr><td><code>${s.file}:${s.line}</code></td><td>${s.status === "survived" ? "survived" : "not covered"}</td><td><code>${s.diff}</code></td></tr>`,
  );
  const more = report.moreSurvivors > 0 ? markup`<p>and ${report.moreSurvivors} more surviving mutant(s)</p>` : "";
  return markup`<section aria-labelledby="ev-mutation"><h2 id="ev-mutation">${mutationHeadline(report)}</h2>
${report.reason ? markup`<p class="refusal">${report.reason}</p>` : ""}
<p>${killed} killed, ${survived} survived, ${timedOut} timed out, ${notCovered} not covered, over the lines the track changed.</p>
${survivors.length ? markup`<table><thead><tr><th>Where</th><th>Mutant</th><th>Diff</th></tr></thead><tbody>${survivors}</tbody></table>` : ""}${more}</section>`;
}
