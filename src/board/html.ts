/**
 * HTML plumbing for the board: escaping (everything that comes from a repository goes through
 * `markup`), the page frame with its stylesheet, and the few lines of plain JS that keep a page live.
 * No frontend build: the server writes whole pages and the same page again on each update.
 */

import MarkdownIt from "markdown-it";

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text made safe for HTML content and attribute values. */
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);

/** HTML already escaped or written by us; `markup` never escapes it twice. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = SafeHtml | string | number | null | undefined | false | Part[];

function render(part: Part): string {
  if (part === null || part === undefined || part === false) return "";
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(render).join("");
  return escapeHtml(String(part));
}

/**
 * A template tag: every interpolated value is escaped unless it is SafeHtml. (Not named `html`, so
 * the formatter leaves the markup as written.)
 */
export function markup(strings: TemplateStringsArray, ...values: Part[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, index) => (out += render(value) + strings[index + 1]!));
  return new SafeHtml(out);
}

/** Markdown as consort/schema's check writes it: raw HTML in it is escaped, links only http(s) and relative. */
const MARKDOWN = new MarkdownIt({ html: false, linkify: false, typographer: false });

/** Markdown (a check run's summary) as HTML the board can show: nothing in it runs or styles the page. */
export function markdownHtml(text: string): SafeHtml {
  return new SafeHtml(MARKDOWN.render(text));
}

/** How long ago `since` was, in the largest sensible unit ("3 h 12 min"). */
export function waitedFor(since: string, now: Date): string {
  const minutes = Math.max(0, Math.floor((now.getTime() - Date.parse(since)) / 60_000));
  if (Number.isNaN(minutes)) return "unknown";
  if (minutes < 1) return "under a minute";
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
}

const STYLE = `
:root{--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--ok:#1a7f37;--now:#0969da;--bad:#cf222e;--ahead:#8c959f;--focus:#bf8700}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.6rem 1rem;border-bottom:1px solid var(--line)}
header h1{font-size:1.1rem;margin:0}
header nav{display:flex;gap:1rem;flex-wrap:wrap}
header .who{margin-left:auto;color:var(--muted)}
form.out{display:inline;margin-left:.5rem}
#live{display:inline-block;min-width:11rem;color:var(--muted);font-size:.85rem}
main{padding:1rem;max-width:72rem;margin:0 auto}
a{color:var(--now)}
a:focus-visible,button:focus-visible,input:focus-visible,summary:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:.5rem;background:#fff;padding:.25rem .5rem;z-index:1}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:.45rem .5rem;border-bottom:1px solid var(--line)}
th{font-size:.8rem;text-transform:uppercase;letter-spacing:.03em;color:var(--muted)}
.mine{background:#fff8c5}
.tag{display:inline-block;padding:0 .4rem;border-radius:.6rem;font-size:.8rem;border:1px solid var(--line)}
.tag.failure,.refusal{color:var(--bad)}.tag.success{color:var(--ok)}.tag.pending{color:var(--now)}
.refusals{margin:.25rem 0 0;padding-left:1.1rem;color:var(--bad);font-size:.9rem}
svg.lane{display:block;width:auto;max-width:100%;height:auto}
svg.lane .done{fill:var(--ok)}svg.lane .current{fill:var(--now)}svg.lane .failed{fill:var(--bad)}svg.lane .waiting{fill:#fff;stroke:var(--focus);stroke-width:3}svg.lane .ahead{fill:#fff;stroke:var(--ahead);stroke-width:2}
svg.lane text{font:12px system-ui,sans-serif;fill:var(--fg)}
svg.lane line{stroke:var(--line);stroke-width:3}
code,.hash{font:12.5px ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}
section{margin:1.25rem 0}
section h2{font-size:1rem;margin:0 0 .5rem}
h2.title{font-size:1.25rem;margin:.25rem 0}h3{font-size:.95rem}figure{margin:0}
.filter{display:flex;flex-wrap:wrap;gap:.25rem .5rem;align-items:center;margin:0 0 .75rem}.filter a{white-space:nowrap}
.empty{color:var(--muted)}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;margin:0}
dl.facts dt{color:var(--muted)}dl.facts dd{margin:0}
.src{margin:-.3rem 0 .5rem;color:var(--muted);font-size:.78rem}
.src-tag{display:inline-block;padding:0 .3rem;margin-right:.25rem;border:1px solid var(--line);border-radius:.25rem;font-size:.7rem;text-transform:uppercase;letter-spacing:.04em}
details.steps{border:1px solid var(--line);border-radius:.3rem;margin:.4rem 0}
details.steps summary{cursor:pointer;padding:.35rem .6rem;min-height:2rem}
details.steps ol{margin:0;padding:.2rem .6rem .5rem 2.6rem}
details.steps li{padding:.2rem 0;border-top:1px solid #eaeef2}
details.steps li.refused{background:#fff5f5}
.md table{width:auto;max-width:100%;font-size:.9rem}.md h3{font-size:.9rem;margin:.6rem 0 .3rem}.md h4{font-size:.85rem;margin:.6rem 0 .3rem}
.md code{background:#f6f8fa;padding:0 .2rem;border-radius:.2rem}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:.6rem;border-radius:.3rem;font-size:12.5px}
@media (max-width:640px){
  main{padding:.6rem}
  table.board thead{display:none}
  table.board tr{display:block;border-bottom:1px solid var(--line);padding:.4rem 0}
  table.board td{display:block;border:0;padding:.15rem .25rem}
  table.board td[data-label]::before{content:attr(data-label) ": ";color:var(--muted);font-size:.8rem}
  table:not(.board){display:block;overflow-x:auto;max-width:100%}
  details.steps ol{padding-left:1.8rem}
  figure{overflow-x:auto}figure svg.lane{max-width:none}
}
`;

/**
 * The live script: on each server-sent "change" it fetches this page again and swaps <main> in
 * place (the same structure, so nothing moves that did not change); focus stays where it was.
 */
export const LIVE_SCRIPT = `
(function(){
  var src=document.body.dataset.events; if(!src||!window.EventSource) return;
  var live=document.getElementById("live"), busy=false, again=false;
  function refresh(){
    if(busy){again=true;return;} busy=true;
    fetch(location.href,{headers:{"Accept":"text/html"},credentials:"same-origin"}).then(function(r){
      if(!r.ok) throw new Error(r.status); return r.text();
    }).then(function(text){
      var doc=new DOMParser().parseFromString(text,"text/html"), next=doc.querySelector("main"), main=document.querySelector("main");
      var focused=document.activeElement&&document.activeElement.id;
      // A group the reader opened or closed stays so: the new page keeps the same ids.
      var opened={}; Array.prototype.forEach.call(document.querySelectorAll("main details[id]"),function(d){opened[d.id]=d.open;});
      if(next&&main){
        Array.prototype.forEach.call(next.querySelectorAll("details[id]"),function(d){ if(d.id in opened) d.open=opened[d.id]; });
        main.innerHTML=next.innerHTML; document.title=doc.title;
      }
      if(focused){ var el=document.getElementById(focused); if(el) el.focus(); }
      live.textContent="live · updated "+new Date().toLocaleTimeString();
      document.body.dataset.version=String(Number(document.body.dataset.version||0)+1);
    }).catch(function(){ live.textContent="live · update failed, retrying"; })
      .finally(function(){ busy=false; if(again){again=false;refresh();} });
  }
  var es=new EventSource(src,{withCredentials:true});
  es.addEventListener("change",refresh);
  es.addEventListener("open",function(){ live.textContent="live"; });
  es.addEventListener("error",function(){ live.textContent="live · reconnecting"; });
})();
`;

export interface PageFrame {
  title: string;
  /** Where the app or the CLI serves the board ("" or "/consort"). */
  base: string;
  /** The signed-in login, or null (`consort board` has no sign-in). */
  viewer: string | null;
  /** Show sign-out (the app). */
  signOut: boolean;
  /** The server-sent events URL that keeps this page live; omitted for pages that never change. */
  events?: string;
}

/** The board's icon: the lane's own shapes (a station, a gate), served at /favicon.svg. */
export const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0969da"/><line x1="5" y1="16" x2="27" y2="16" stroke="#fff" stroke-width="2"/><circle cx="9" cy="16" r="4" fill="#fff"/><rect x="18" y="11" width="10" height="10" fill="#bf8700" transform="rotate(45 23 16)"/></svg>\n';

export function page(frame: PageFrame, body: SafeHtml): string {
  const who = frame.viewer
    ? markup`<span class="who">Signed in as <strong>@${frame.viewer}</strong>${frame.signOut ? markup` <form class="out" method="post" action="${frame.base}/logout"><button id="sign-out" type="submit">Sign out</button></form>` : ""}</span>`
    : "";
  return markup`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${frame.title}</title>
<link rel="icon" type="image/svg+xml" href="${frame.base}/favicon.svg">
<style>${new SafeHtml(STYLE)}</style>
</head>
<body data-events="${frame.events ?? ""}">
<a class="skip" href="#main">Skip to content</a>
<header>
<h1><a href="${frame.base}/">Consort board</a></h1>
<span id="live" aria-live="polite">${frame.events ? "live" : ""}</span>
${who}
</header>
<main id="main" tabindex="-1">
${body}
</main>
${frame.events ? markup`<script>${new SafeHtml(LIVE_SCRIPT)}</script>` : ""}
</body>
</html>
`.value;
}
