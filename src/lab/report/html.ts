// The self-contained HTML report: the answer first (which strategy, and why), then the results with every
// column explained, the trade-off charts, each session in detail, the settings and prices used, and how to
// run the lab on your own sessions. Data, Chart.js (inlined from node_modules) and a small renderer in one
// file that needs no network. The page records in the DOM what it drew, for the Chromium test.
import { readFile } from "node:fs/promises";
import { PROBE_KINDS } from "../probes.ts";
import { NEEDED_KINDS } from "../needed.ts";
import { MAX_MEASURED, type SessionResult } from "../replay.ts";
import type { LabResult, RowTotals } from "../results.ts";
import { choiceNote } from "../recommend.ts";
import { nothingToReplay, replayedAny, totalsOf } from "../results.ts";
import { COLUMNS, tableCells } from "../table.ts";
import { REPORT_SCRIPT } from "./page-script.ts";

/** Chart.js's UMD build, read from the installed package. */
export async function chartJsSource(): Promise<string> {
  const entry = import.meta.resolve("chart.js");
  return readFile(new URL("./chart.umd.min.js", entry), "utf8");
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
}

/** JSON safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** The results table; headers carry their explanation as a tooltip too, and the explanations follow the table. */
function htmlTable(rows: readonly RowTotals[]): string {
  const head = COLUMNS.map((c) => `<th title="${escapeHtml(c.help)}">${escapeHtml(c.title)}</th>`).join("");
  const body = tableCells(rows)
    .map(
      (cells, i) =>
        `<tr class="${rows[i].info.family}">${cells.map((c, j) => (j === 0 ? `<td title="${escapeHtml(rows[i].info.note)}">${escapeHtml(c)}</td>` : `<td>${escapeHtml(c)}</td>`)).join("")}</tr>`,
    )
    .join("\n");
  return `<table class="results"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

function columnHelp(): string {
  return `<dl class="columns">${COLUMNS.slice(1)
    .map((c) => `<dt>${escapeHtml(c.title)}</dt><dd>${escapeHtml(c.help)}</dd>`)
    .join("")}</dl>`;
}

const pct = (kept: number, total: number) => (total ? `${Math.round((kept / total) * 100)}%` : "—");

/** Shading for a share: white at 100%, red towards 0%. */
function shade(kept: number, total: number): string {
  if (!total) return "";
  const lost = 1 - kept / total;
  return ` style="background:rgba(225,87,89,${(lost * 0.55).toFixed(2)})"`;
}

/** Per kind, for one session: probes kept at the end and needed items shown after acts. */
function kindTable(session: SessionResult): string {
  const head = `<tr><th>Strategy</th>${PROBE_KINDS.map((k) => `<th title="probes of this kind still in the final view">facts: ${k}</th>`).join("")}${NEEDED_KINDS.map((k) => `<th title="needed items of this kind shown right after acts">needed: ${k}</th>`).join("")}</tr>`;
  const body = session.rows
    .map((row) => {
      const probes = PROBE_KINDS.map((k) => {
        const v = row.retention.byKind[k];
        return `<td${shade(v.kept, v.total)}>${pct(v.kept, v.total)} <span class="muted">of ${v.total}</span></td>`;
      }).join("");
      const needed = NEEDED_KINDS.map((k) => {
        const v = row.neededLater.byKind[k];
        return `<td${shade(v.visible, v.needed)}>${pct(v.visible, v.needed)}${v.needed ? ` <span class="muted">of ${v.needed}</span>` : ""}</td>`;
      }).join("");
      return `<tr class="${row.info.family}"><td>${escapeHtml(row.info.label)}</td>${probes}${needed}</tr>`;
    })
    .join("\n");
  return `<table class="kinds"><thead>${head}</thead><tbody>${body}</tbody></table>`;
}

function sessionBlock(session: SessionResult, weightsNote: string): string {
  // As in the terminal: a session without a request would be tables of zeros.
  if (session.requests === 0) return `<h3>${escapeHtml(session.name)}: ${nothingToReplay(session)}</h3>`;
  const own = session.recommendation;
  const verdict = own?.choice
    ? `<p class="verdict">For this session alone: <b>${escapeHtml(own.choice.label)}</b>${choiceNote(own)}. ${escapeHtml(weightsNote)}</p>`
    : "";
  const ws = session.workingSet;
  return `<h3>${escapeHtml(session.name)}: ${session.requests} requests, ${session.probes.total} probes, ${session.neededItems} items needed later, ${ws.texts} replaced texts (${ws.seen} seen before their edit: the ceiling)</h3>
${verdict}${htmlTable(totalsOf([session]))}
<h4>By kind</h4>
<p class="muted">Left: probes kept at the end, per kind. Right: needed-later items shown right after acts, per kind (pairs of act and item). Redder is worse.</p>
${kindTable(session)}`;
}

function settingsTable(result: LabResult): string {
  const s = result.settings;
  const p = result.prices;
  const w = result.recommendation?.weights;
  const rows: [string, string][] = [
    ["context window", `${s.window} tokens`],
    ["reply reserve (Pi)", `${s.reserve} tokens; rows that compact act above ${s.window - s.reserve}`],
    ["kept verbatim when Pi compacts", `${s.keepRecent} tokens`],
    ["masking baseline", `keeps the last ${s.maskKeep} tool outputs`],
    [
      "clearing baseline",
      `trigger ${s.clearing.trigger} input tokens, keeps ${s.clearing.keep} tool results, clears at least ${s.clearing.clearAtLeast}`,
    ],
    [
      "prune baseline",
      `protects the newest ${s.prune.protect} tool-output tokens, prunes only if more than ${s.prune.minimum} are saved`,
    ],
    ["price of an input token", `$${p.usdPerMTok} per million`],
    ["cache read / cache write", `${p.cacheRead}× / ${p.cacheWrite}× the input price`],
    ["uncached input / output (summary calls)", `${p.input}× / ${p.output}× the input price`],
    ["measured acts per row", `at most one in each of ${MAX_MEASURED} equal slices of a session's requests`],
  ];
  if (w)
    rows.push(["recommendation weights", `quality ${Math.round(w.quality * 100)}%, cost ${Math.round(w.cost * 100)}%`]);
  return `<table class="settings"><tbody>${rows.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join("")}</tbody></table>`;
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px auto;max-width:1180px;padding:0 16px;color:#1d2330;background:#fbfbfd}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:0 0 10px}h3{font-size:15px;margin:18px 0 6px}h4{font-size:13px;margin:12px 0 4px}
.sub,.muted{color:#5b6475}.sub{margin:0 0 12px}nav{margin:0 0 16px;font-size:13px}nav a{margin-right:14px}
section{background:#fff;border:1px solid #e4e7ee;border-radius:8px;padding:14px 16px;margin:0 0 18px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums;background:#fff;font-size:13px}
th,td{padding:4px 7px;border-bottom:1px solid #e4e7ee;text-align:right;white-space:nowrap}th:first-child,td:first-child{text-align:left}
thead th{background:#f1f3f8;font-weight:600;white-space:normal;vertical-align:bottom}tr.ours td:first-child{font-weight:600}
tr.baseline td:first-child::after{content:" (baseline)";color:#8a92a3;font-weight:400}
table.settings th{text-align:left;font-weight:500;width:32%}table.settings td{text-align:left;white-space:normal}
dl.columns{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:12.5px;margin:10px 0 0}dl.columns dt{font-weight:600}dl.columns dd{margin:0;color:#3d4454}
.answer{font-size:16px;margin:0 0 6px}.answer b{font-size:17px}.why li{margin:2px 0}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:16px}.chart{position:relative;height:330px}.chart.scores{height:190px}
.panels{display:grid;grid-template-columns:repeat(2,1fr);gap:10px 16px}.panel h4{margin:4px 0}.panel .box{position:relative;height:170px}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
pre{background:#f4f5f9;padding:10px 12px;border-radius:6px;overflow:auto;font-size:12.5px}select{font:inherit;padding:2px 6px}
#errors{color:#b00020;white-space:pre-wrap}.verdict{margin:4px 0 8px}
`;

/** Render the report for a lab result. */
export async function renderReport(result: LabResult, chartJs?: string): Promise<string> {
  const library = chartJs ?? (await chartJsSource());
  const count = result.sessions.length;
  const source =
    result.input.kind === "sample"
      ? `the generated sample (seed ${result.input.seed}, ${count} sessions)`
      : `${count} session file${count === 1 ? "" : "s"}`;
  const rec = result.recommendation;
  const weights = rec
    ? `Weights: quality ${Math.round(rec.weights.quality * 100)}%, cost ${Math.round(rec.weights.cost * 100)}%.`
    : "";
  const answer = rec?.lines.length
    ? `<p class="answer" id="answer">${escapeHtml(rec.lines[0])}</p><ul class="why">${rec.lines
        .slice(1)
        .map((l) => `<li>${escapeHtml(l)}</li>`)
        .join("")}</ul>`
    : `<p class="answer" id="answer">${replayedAny(result.sessions) ? "No strategy a user can set was part of this run." : "Nothing to recommend: none of these session files holds a request."}</p>`;
  const perSession =
    count > 1
      ? `<p>Per session: ${result.sessions.map((s) => `${escapeHtml(s.name)}: ${s.requests > 0 ? `<b>${escapeHtml(s.recommendation?.choice?.label ?? "—")}</b>${choiceNote(s.recommendation)}` : "nothing to replay"}`).join(" · ")}</p>`
      : "";
  const simulated = result.totals.filter((t) => t.info.note.startsWith("simulated"));
  const notes = [
    ...result.totals.map((t) => `<li><b>${escapeHtml(t.info.label)}</b>: ${escapeHtml(t.info.note)}</li>`),
    ...result.unavailable.map((u) => `<li><b>${escapeHtml(u.id)}</b>: not in this run (${escapeHtml(u.reason)})</li>`),
  ].join("\n");
  const unmeasured = result.totals.filter((t) => t.neededLater.needed === 0).map((t) => t.info.label);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>pi-context-ledger lab: which context strategy?</title>
<style>${STYLE}</style>
<script>window.__labErrors=[];window.addEventListener("error",function(e){window.__labErrors.push(String(e.message||e));var el=document.getElementById("errors");if(el)el.textContent=window.__labErrors.join("\\n");document.documentElement.setAttribute("data-errors",String(window.__labErrors.length));});</script>
</head><body>
<h1>Which context strategy for these sessions?</h1>
<p class="sub">pi-context-ledger lab on ${escapeHtml(source)} · window ${result.settings.window} tokens · every row replays the same history request by request</p>
<nav><a href="#recommendation">Recommendation</a><a href="#results">Results</a><a href="#tradeoff">Quality and cost</a><a href="#sessions">Per session</a><a href="#settings">Settings and prices</a><a href="#run">Run it on your sessions</a><a href="#rows">Rows and measures</a></nav>
<div id="errors"></div>
<section id="recommendation"><h2>Recommendation</h2>
${answer}
<div class="chart scores"><canvas id="chart-scores"></canvas></div>
<p class="muted">Score = quality × its weight + cost × its weight, out of 100. Quality: the lower of two shares, what the agent used later that the view still showed right after an act (needed later), and the text its later edits replace that the view showed at the edit (the working set); the answer names the one that decided. Cost (re-reads included): the cheapest eligible strategy's cost divided by this one's. Strategies that sent a request larger than the window are not eligible. ${escapeHtml(weights)} Change them with <code>--weights quality=…,cost=…</code>.</p>
${perSession}
</section>
<section id="results"><h2>Results over all sessions</h2>
${htmlTable(result.totals)}
${columnHelp()}
${simulated.length ? `<p class="muted">Baselines are simulations of published behaviour, not the products themselves: ${escapeHtml(simulated.map((s) => s.info.label).join(", "))}.</p>` : ""}
</section>
<section id="tradeoff"><h2>Quality against cost</h2>
<div class="grid">
<div><h3>Quality: the lower of needed later and the working set</h3><div class="chart"><canvas id="chart-needed"></canvas></div>${unmeasured.length ? `<p class="muted">Not plotted (never acted, so nothing to measure): ${escapeHtml(unmeasured.join(", "))}.</p>` : ""}</div>
<div><h3>Cache reuse</h3><div class="chart"><canvas id="chart-cache"></canvas></div><p class="muted">Filled circles: our strategies. Hollow diamonds: baselines. Axes fit the data; they do not start at zero.</p></div>
</div>
</section>
<section id="sessions"><h2>Per session <select id="session-select" aria-label="session">${result.sessions.map((s, i) => `<option value="${i}">${escapeHtml(s.name)}</option>`).join("")}</select></h2>
<p class="muted">Context tokens of every request, one panel per row; triangles mark compactions, folds, truncations and prunes (masking and clearing act on almost every request). Each panel's axis fits its own peak.</p>
<div class="panels" id="context-panels"></div>
<div id="session-table"></div>
</section>
<section id="settings"><h2>Settings and prices</h2>
${settingsTable(result)}
</section>
<section id="run"><h2>Run it on your own sessions</h2>
<pre>npx pi-context-ledger lab --sessions                 # your sessions: $PI_CODING_AGENT_DIR/sessions, else ~/.pi/agent/sessions
npx pi-context-ledger lab ~/path/to/sessions          # files or directories of Pi session files (*.jsonl)
npx pi-context-ledger lab --sessions --window 200k --weights quality=0.5,cost=0.5
npx pi-context-ledger lab --sessions --dump views/    # the model view after every act, as the provider would receive it
npx pi-context-ledger lab --sessions --json out.json  # every figure, for scripts</pre>
<p class="muted">Nothing leaves your machine: the lab calls no model unless you ask for <code>--judge</code>.</p>
</section>
<section id="rows"><h2>Rows and measures</h2>
<ul class="notes">${notes}</ul>
<h3>Probes (facts)</h3>
<p>Short verbatim facts taken from the raw session: user sentences stating a constraint or correction, file paths read or changed, the error line of each failed tool, test and command result lines, and the commands run. A path under the session's working directory also counts in its relative spelling.</p>
<h3>Needed later</h3>
<p>After each measured act, the lab looks at what the agent actually did afterwards. One extractor, the same for every row, finds items in every message: paths (absolute, relative with a slash, or a file name with a known extension; URLs), identifiers with inner structure (camelCase, PascalCase with a second capital, snake_case, hex ids of 7 to 40 digits), error names and codes (TypeError, ENOENT, ERR_…, TS2345), numbers of three or more digits or with a dot, and the commands the agent or the user ran. An item is needed at an act when it first appeared before the act and the agent uses it again after it, in its text or its tool-call arguments. It is shown when its text occurs anywhere in the view right after the act, and recoverable when <code>context_grep</code> finds it in the entry where it first appeared.</p>
<h3>Working set</h3>
<p>Names are not content: an agent that edits a file needs the file's text. Pi's <code>edit</code> states the exact text it replaces (<code>oldText</code>, or each entry of <code>edits[]</code>), so at every request that makes an edit the lab asks whether each replaced text of 8 characters or more is in the view that row sends there. Only texts the agent had in view before the call, in the uncompacted session, count, the same for every row; no compaction therefore shows the ceiling. A line a strategy quotes (a digest's <code>  | </code> lines, a checkpoint's copied lines) counts as the text it quotes; a list of names, counts or signatures does not. Line endings and trailing spaces do not matter (Pi's edit forgives them); indentation does. Each miss is priced as the re-read it forces: the newest read of that file sent again at the input price, plus one more request that re-sends the row's context at the cached price.</p>
${result.judge ? `<p>Judge: ${escapeHtml(result.judge.note)}</p>` : ""}
</section>
<template id="session-tables">${result.sessions.map((s, i) => `<div data-session="${i}">${sessionBlock(s, weights)}</div>`).join("")}</template>
<script>${library.replace(/<\/script/gi, "<\\/script")}</script>
<script type="application/json" id="lab-data">${scriptJson(result)}</script>
<script>${REPORT_SCRIPT}</script>
</body></html>
`;
}
