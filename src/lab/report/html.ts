// The self-contained HTML report: data, Chart.js (inlined from node_modules) and a small renderer in one
// file that needs no network. The page records in the DOM how many charts drew, for the Chromium test.
import { readFile } from "node:fs/promises";
import type { LabResult } from "../results.ts";
import { LEGEND, TABLE_COLUMNS, tableCells } from "../table.ts";
import { totalsOf } from "../results.ts";
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
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

function htmlTable(rows: LabResult["totals"]): string {
  const head = TABLE_COLUMNS.map((c) => `<th>${escapeHtml(c)}</th>`).join("");
  const body = tableCells(rows)
    .map((cells, i) => `<tr class="${rows[i].info.family}">${cells.map((c, j) => (j === 0 ? `<td title="${escapeHtml(rows[i].info.note)}">${escapeHtml(c)}</td>` : `<td>${escapeHtml(c)}</td>`)).join("")}</tr>`)
    .join("\n");
  return `<table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:24px auto;max-width:1180px;padding:0 16px;color:#1d2330;background:#fbfbfd}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}.sub{color:#5b6475;margin:0 0 16px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums;background:#fff}
th,td{padding:4px 8px;border-bottom:1px solid #e4e7ee;text-align:right;white-space:nowrap}th:first-child,td:first-child{text-align:left}
thead th{background:#f1f3f8;font-weight:600}tr.ours td:first-child{font-weight:600}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:18px}.card{background:#fff;border:1px solid #e4e7ee;border-radius:8px;padding:12px}
.card h3{font-size:14px;margin:0 0 8px}.wide{grid-column:1/-1}canvas{width:100%!important}
.legend,.notes{color:#5b6475;font-size:12.5px}select{font:inherit;padding:2px 6px}
#errors{color:#b00020;white-space:pre-wrap}
`;

/** Render the report for a lab result. */
export async function renderReport(result: LabResult, chartJs?: string): Promise<string> {
  const library = chartJs ?? (await chartJsSource());
  const source = result.input.kind === "sample" ? `generated sample (seed ${result.input.seed})` : `${result.input.paths.length} session file(s)`;
  const simulated = result.totals.filter((t) => t.info.note.startsWith("simulated"));
  const sessions = result.sessions.map((s) => ({ name: s.name, table: htmlTable(totalsOf([s])) }));
  const notes = [
    ...result.totals.map((t) => `<li><b>${escapeHtml(t.info.label)}</b>: ${escapeHtml(t.info.note)}</li>`),
    ...result.unavailable.map((u) => `<li><b>${escapeHtml(u.id)}</b>: ${escapeHtml(u.reason)}</li>`),
  ].join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>pi-context-ledger lab report</title>
<style>${STYLE}</style>
<script>window.__labErrors=[];window.addEventListener("error",function(e){window.__labErrors.push(String(e.message||e));var el=document.getElementById("errors");if(el)el.textContent=window.__labErrors.join("\\n");document.documentElement.setAttribute("data-errors",String(window.__labErrors.length));});</script>
</head><body>
<h1>pi-context-ledger lab</h1>
<p class="sub">${escapeHtml(source)} · window ${result.settings.window} tokens (compaction above ${result.settings.window - result.settings.reserve}) · ${result.sessions.length} session(s)${simulated.length ? ` · simulated baselines: ${escapeHtml(simulated.map((s) => s.info.label).join(", "))}` : ""}</p>
<div id="errors"></div>
<h2>All sessions</h2>
${htmlTable(result.totals)}
<p class="legend">${LEGEND.map(escapeHtml).join("<br>")}</p>
<div class="grid">
<div class="card"><h3>Probe retention against tokens kept</h3><canvas id="chart-retention" height="260"></canvas></div>
<div class="card"><h3>Cache reuse against cost</h3><canvas id="chart-cache" height="260"></canvas></div>
</div>
<h2>Per session <select id="session-select">${sessions.map((s, i) => `<option value="${i}">${escapeHtml(s.name)}</option>`).join("")}</select></h2>
<div class="grid">
<div class="card wide"><h3>Context tokens per request (markers: compactions, folds, truncations, prunes)</h3><canvas id="chart-context" height="300"></canvas></div>
<div class="card wide"><h3>Probes kept at the end, by kind</h3><canvas id="chart-kinds" height="220"></canvas></div>
<div class="card wide" id="session-table"></div>
</div>
<h2>Rows</h2><ul class="notes">${notes}</ul>
${result.judge ? `<p class="notes">Judge: ${escapeHtml(result.judge.note)}</p>` : ""}
<template id="session-tables">${sessions.map((s, i) => `<div data-session="${i}">${s.table}</div>`).join("")}</template>
<script>${library.replace(/<\/script/gi, "<\\/script")}</script>
<script type="application/json" id="lab-data">${scriptJson(result)}</script>
<script>${REPORT_SCRIPT}</script>
</body></html>
`;
}
