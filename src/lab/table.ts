// The lab's results table: one column list with a short name for the terminal, a readable title for the
// report and one sentence on what it means, so both outputs explain each column where it appears.
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
  if (row.latencyMs)
    return row.latencyMs.mean < 10 ? `${row.latencyMs.mean.toFixed(1)}ms` : `${Math.round(row.latencyMs.mean)}ms`;
  if (row.modelCalls) return "LLM call";
  return "—";
}

/** One column: terminal name, report title, meaning, and its cell. */
export interface Column {
  short: string;
  title: string;
  help: string;
  cell: (row: RowTotals) => string;
}

export const COLUMNS: readonly Column[] = [
  {
    short: "strategy",
    title: "Strategy",
    help: "our strategies first, then reference baselines (simulations of published behaviour)",
    cell: (r) => r.info.label,
  },
  {
    short: "peak",
    title: "Peak tokens",
    help: "the largest context sent in one request",
    cell: (r) => kTokens(r.peakTokens),
  },
  {
    short: "mean",
    title: "Mean tokens",
    help: "context tokens per request, on average",
    cell: (r) => kTokens(r.meanTokens),
  },
  {
    short: "acts",
    title: "Acts",
    help: "how often the row changed the context: compactions, folds, truncations, maskings, clearings, prunes",
    cell: (r) => String(r.actions),
  },
  {
    short: "after",
    title: "Tokens after an act",
    help: "context tokens right after an act, on average",
    cell: (r) => (r.meanTokensAfter === undefined ? "—" : kTokens(r.meanTokensAfter)),
  },
  {
    short: "latency",
    title: "Time per act",
    help: 'measured for our deterministic planners; "LLM call" where a real run waits on a model',
    cell: latency,
  },
  {
    short: "probes",
    title: "Facts kept at the end",
    help: "share of probes (user constraints, file paths, error lines, test results, commands) still verbatim in the final view",
    // A session without probes keeps no share of them: 100% of none would read as a perfect score.
    cell: (r) => (r.retention.total ? pct(r.retention.share) : "—"),
  },
  {
    short: "min@act",
    title: "Facts, worst act",
    help: "the lowest share of the probes seen so far still in the view right after an act (measured acts)",
    cell: (r) => (r.retention.total ? pct(r.minRetentionAfterAction) : "—"),
  },
  {
    short: "recover",
    title: "Facts recoverable",
    help: "of the probes the final view lost, the share context_grep finds in the entry they came from",
    cell: (r) => pct(r.recoverability?.share),
  },
  {
    short: "needed",
    title: "Needed later, shown",
    help: "of the items (paths, identifiers, errors, numbers, commands) the agent used after an act that had appeared before it, the share the view showed right after the act",
    cell: (r) => (r.neededLater.needed ? pct(r.neededLater.share) : "—"),
  },
  {
    short: "n.grep",
    title: "Needed later, recoverable",
    help: "of the needed items the view did not show, the share context_grep finds in the entry where they first appeared",
    cell: (r) => (r.neededLater.recoverable?.missing ? pct(r.neededLater.recoverable.share) : "—"),
  },
  {
    short: "w.set",
    title: "Working set, shown",
    help: "of all the texts the agent's later edits replace (8+ characters), the share the view showed verbatim at the edit's request; a text the agent never saw is a miss for every row, so no compaction, the ceiling, is below 100%",
    cell: (r) =>
      !r.workingSet.total
        ? "—"
        : r.info.id === "none"
          ? `${pct(r.workingSet.share)} (ceiling)`
          : pct(r.workingSet.share),
  },
  {
    short: "w@act",
    title: "Working set, worst act",
    help: "the lowest share of the next 10 replaced texts shown (never-seen ones are misses), over the row's acts",
    cell: (r) => pct(r.workingSet.minAfterAct),
  },
  {
    short: "cache",
    title: "Cache reuse",
    help: "share of prompt tokens that repeat the previous request's prefix byte for byte",
    cell: (r) => pct(r.cache.reuse),
  },
  {
    short: "re-read $",
    title: "Re-reads ($)",
    help: "what the working set's misses cost: per missed file and request, the newest read of it again at the input price and the row's context once more at the cached price",
    cell: (r) => r.cost.reread.usd.toFixed(2),
  },
  {
    short: "cost $",
    title: "Cost ($)",
    help: "cached reads, cache writes, summary calls and re-reads at the configured prices",
    cell: (r) => r.cost.usd.toFixed(2),
  },
  {
    short: ">window",
    title: "Over the window",
    help: "requests larger than the window: a provider would reject them",
    cell: (r) => String(r.overWindow),
  },
];

export const TABLE_COLUMNS = COLUMNS.map((c) => c.short);

/** Rows of cells for one table. */
export function tableCells(rows: readonly RowTotals[]): string[][] {
  return rows.map((r) => COLUMNS.map((c) => c.cell(r)));
}

/** Render a plain-text table with aligned columns (first column left, numbers right). */
export function renderTable(rows: readonly RowTotals[]): string {
  const cells = [TABLE_COLUMNS.slice(), ...tableCells(rows)];
  const widths = TABLE_COLUMNS.map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  const line = (row: string[]) =>
    row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  ");
  const out = [line(cells[0]), widths.map((w) => "─".repeat(w)).join("  ")];
  for (const row of cells.slice(1)) out.push(line(row));
  return out.join("\n");
}

/** What the columns mean, printed under the terminal tables. */
export const LEGEND = COLUMNS.slice(1).map((c) => `${c.short.padStart(9)}: ${c.help}`);
