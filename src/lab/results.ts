// The lab's result document (what `--json` writes and the report renders) and the totals over sessions.
import type { Prices } from "./metrics.ts";
import type { Recommendation } from "./recommendation.ts";
import type { ProbeKind } from "./probes.ts";
import type { NeededLater, RowResult, SessionResult } from "./replay.ts";
import type { LabSettings, RowInfo } from "./row.ts";
import { poolWorkingSet, type WorkingSetFigures } from "./working-set.ts";

export interface RowTotals {
  info: RowInfo;
  sessions: number;
  requests: number;
  peakTokens: number;
  meanTokens: number;
  actions: number;
  /** Mean tokens left after an action. */
  meanTokensAfter?: number;
  /** Mean and maximum measured latency of an action, in ms (model-call actions are not timed). */
  latencyMs?: { mean: number; max: number };
  modelCalls: number;
  /** Lowest retention measured right after an action. */
  minRetentionAfterAction?: number;
  retention: { share: number; kept: number; total: number; byKind: Record<ProbeKind, { kept: number; total: number }> };
  recoverability?: { share: number; found: number; dropped: number; checked: number };
  neededLater: NeededLater;
  /** The text later edits replace, shown at the edit's request (see working-set.ts). */
  workingSet: WorkingSetFigures;
  cache: { reuse: number; promptTokens: number; cachedTokens: number };
  /** Everything the row costs; `reread` is the part the working set's misses force. */
  cost: { units: number; usd: number; reread: { units: number; usd: number } };
  overWindow: number;
}

/** "Needed later" pooled over sessions: every measured (act, item) pair counts once. */
export function poolNeeded(parts: readonly NeededLater[]): NeededLater {
  const byKind = {} as NeededLater["byKind"];
  for (const part of parts) {
    for (const [kind, v] of Object.entries(part.byKind) as [
      keyof NeededLater["byKind"],
      { needed: number; visible: number },
    ][]) {
      byKind[kind] ??= { needed: 0, visible: 0 };
      byKind[kind].needed += v.needed;
      byKind[kind].visible += v.visible;
    }
  }
  const acts = parts.reduce((s, p) => s + p.acts, 0);
  const needed = parts.reduce((s, p) => s + p.needed, 0);
  const visible = parts.reduce((s, p) => s + p.visible, 0);
  const recs = parts.map((p) => p.recoverable).filter((r) => r !== undefined);
  const found = recs.reduce((s, r) => s + r.found, 0);
  const missing = recs.reduce((s, r) => s + r.missing, 0);
  return {
    acts,
    needed,
    visible,
    share: needed ? visible / needed : 1,
    byKind,
    ...(recs.length
      ? {
          recoverable: {
            share: missing ? found / missing : 1,
            found,
            missing,
            checked: recs.reduce((s, r) => s + r.checked, 0),
          },
        }
      : {}),
  };
}

export interface LabResult {
  v: 1;
  tool: "pi-context-ledger lab";
  input: { kind: "sample"; seed: number } | { kind: "files"; paths: string[] };
  settings: LabSettings;
  prices: Prices;
  /** Rows asked for that cannot run yet, with the reason. */
  unavailable: { id: string; reason: string }[];
  sessions: SessionResult[];
  totals: RowTotals[];
  /** Which settable strategy to use for these sessions, and why. */
  recommendation?: Recommendation;
  judge?: { note: string; results?: unknown };
  /** Wall time of the whole run and peak memory (informative; never asserted). */
  /** How the run went: wall and CPU seconds (user + system, from start-up), peak resident memory, V8 heap limit. */
  run?: { seconds: number; cpuSeconds?: number; maxRssBytes: number; heapLimitBytes?: number };
}

/** Totals of one row over every session it ran on. */
export function totalsFor(rows: readonly RowResult[]): RowTotals {
  const first = rows[0];
  const actions = rows.flatMap((r) => r.actions);
  const timed = actions.filter((a) => a.latencyMs !== undefined).map((a) => a.latencyMs!);
  const retentions = actions.filter((a) => a.retention !== undefined).map((a) => a.retention!);
  const requests = rows.reduce((s, r) => s + r.requests, 0);
  const promptTokens = rows.reduce((s, r) => s + r.cache.promptTokens, 0);
  const cachedTokens = rows.reduce((s, r) => s + r.cache.cachedTokens, 0);
  const kept = rows.reduce((s, r) => s + r.retention.kept, 0);
  const total = rows.reduce((s, r) => s + r.retention.total, 0);
  const byKind = {} as Record<ProbeKind, { kept: number; total: number }>;
  for (const r of rows) {
    for (const [kind, v] of Object.entries(r.retention.byKind) as [ProbeKind, { kept: number; total: number }][]) {
      byKind[kind] ??= { kept: 0, total: 0 };
      byKind[kind].kept += v.kept;
      byKind[kind].total += v.total;
    }
  }
  const recs = rows.map((r) => r.recoverability).filter((r) => r !== undefined);
  const found = recs.reduce((s, r) => s + r.found, 0);
  const dropped = recs.reduce((s, r) => s + r.dropped, 0);
  const checked = recs.reduce((s, r) => s + r.checked, 0);
  return {
    info: first.info,
    sessions: rows.length,
    requests,
    peakTokens: rows.reduce((m, r) => Math.max(m, r.peakTokens), 0),
    meanTokens: requests ? promptTokens / requests : 0,
    actions: actions.length,
    ...(actions.length ? { meanTokensAfter: actions.reduce((s, a) => s + a.tokensAfter, 0) / actions.length } : {}),
    ...(timed.length
      ? { latencyMs: { mean: timed.reduce((s, t) => s + t, 0) / timed.length, max: Math.max(...timed) } }
      : {}),
    modelCalls: actions.filter((a) => a.modelCall).length,
    ...(retentions.length ? { minRetentionAfterAction: Math.min(...retentions) } : {}),
    retention: { share: total ? kept / total : 1, kept, total, byKind },
    ...(recs.length ? { recoverability: { share: checked ? found / checked : 1, found, dropped, checked } } : {}),
    neededLater: poolNeeded(rows.map((r) => r.neededLater)),
    cache: { reuse: promptTokens ? cachedTokens / promptTokens : 0, promptTokens, cachedTokens },
    workingSet: poolWorkingSet(rows.map((r) => r.workingSet)),
    cost: {
      units: rows.reduce((s, r) => s + r.cost.units, 0),
      usd: rows.reduce((s, r) => s + r.cost.usd, 0),
      reread: {
        units: rows.reduce((s, r) => s + r.cost.reread.units, 0),
        usd: rows.reduce((s, r) => s + r.cost.reread.usd, 0),
      },
    },
    overWindow: rows.reduce((s, r) => s + r.overWindow, 0),
  };
}

/** Totals per row id over all sessions, in row order. */
export function totalsOf(sessions: readonly SessionResult[]): RowTotals[] {
  if (!sessions.length) return [];
  return sessions[0].rows.map((row) => totalsFor(sessions.map((s) => s.rows.find((r) => r.info.id === row.info.id)!)));
}

/**
 * Sessions without a request (a header alone, or only skipped lines) have nothing to compare: the terminal and the
 * report name them in this one phrase instead of a table of zeros, and a run of them alone recommends nothing.
 */
export function nothingToReplay(session: SessionResult): string {
  return `nothing to replay (${session.branchEntries} entries, no request)`;
}

/** True when some session of a run had a request to replay. */
export function replayedAny(sessions: readonly SessionResult[]): boolean {
  return sessions.some((s) => s.requests > 0);
}
