// The compact terminal table of a lab run.
import type { RowTotals } from "./results.ts";

/** 123456 -> "123.5k". */
export function kTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(2)}M`;
}

function pct(share: number | undefined): string {
  return share === undefined ? "—" : `${Math.round(share * 100)}%`;
}

function latency(row: RowTotals): string {
  if (row.latencyMs) return row.latencyMs.mean < 10 ? `${row.latencyMs.mean.toFixed(1)}ms` : `${Math.round(row.latencyMs.mean)}ms`;
  if (row.modelCalls) return "LLM call";
  return "—";
}

export const TABLE_COLUMNS = ["strategy", "peak", "mean", "acts", "after", "latency", "probes", "min@act", "recover", "needed", "n.grep", "cache", "cost $", ">window"] as const;

/** Rows of cells for one table. */
export function tableCells(rows: readonly RowTotals[]): string[][] {
  return rows.map((r) => [
    r.info.label,
    kTokens(r.peakTokens),
    kTokens(r.meanTokens),
    String(r.actions),
    r.meanTokensAfter === undefined ? "—" : kTokens(r.meanTokensAfter),
    latency(r),
    pct(r.retention.share),
    pct(r.minRetentionAfterAction),
    pct(r.recoverability?.share),
    r.neededLater.needed ? pct(r.neededLater.share) : "—",
    r.neededLater.recoverable?.missing ? pct(r.neededLater.recoverable.share) : "—",
    pct(r.cache.reuse),
    r.cost.usd.toFixed(2),
    String(r.overWindow),
  ]);
}

/** Render a plain-text table with aligned columns (first column left, numbers right). */
export function renderTable(rows: readonly RowTotals[]): string {
  const cells = [TABLE_COLUMNS.slice() as string[], ...tableCells(rows)];
  const widths = TABLE_COLUMNS.map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  const line = (row: string[]) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  ");
  const out = [line(cells[0]), widths.map((w) => "─".repeat(w)).join("  ")];
  for (const row of cells.slice(1)) out.push(line(row));
  return out.join("\n");
}

/** What the columns mean, printed under the tables. */
export const LEGEND = [
  "peak/mean: context tokens per request · acts: compactions, folds, truncations, maskings, clearings or prunes · after: mean tokens left after an act",
  "probes: verbatim probes still in the final view · min@act: lowest retention right after an act · recover: dropped probes that context_grep finds in their source entry",
  "needed: of the items (paths, identifiers, errors, numbers, commands) the agent used after an act that had appeared before it, the share the view showed right after the act · n.grep: of those it did not show, the share context_grep finds",
  "cache: prompt tokens that repeat the previous request's prefix · cost: at the configured prices · >window: requests larger than the window",
];
