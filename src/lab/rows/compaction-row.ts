// Rows that compact like Pi: when the context passes window - reserve before a request, Pi's own preparation
// picks the cut; a summarizer (our strategy's planner, or the native stand-in) writes the compaction entry;
// the view is projected again from the branch.
import { performance } from "node:perf_hooks";
import type { CompactionEntry, SessionEntry } from "../../log/entries.ts";
import type { SideCall } from "../metrics.ts";
import { piCompaction, piCore, type PiPreparation } from "../pi-internals.ts";
import { type ContextAction, type LabSettings, type Row, type RowInfo, thresholdOf } from "../row.ts";
import { SimulatedLedger } from "./ledger-row.ts";

/** What a summarizer returns for one compaction. */
export interface Summarized {
  summary: string;
  firstKeptEntryId: string;
  details?: unknown;
  /** Extra model calls this summary cost (none for deterministic strategies). */
  sideCalls: SideCall[];
  modelCall: boolean;
}

/** A summarizer may decline (undefined): the strategy's chart cancelled Pi's compaction. */
export type Summarizer = (
  prep: PiPreparation,
  branch: readonly SessionEntry[],
  settings: LabSettings,
) => Promise<Summarized | undefined> | Summarized | undefined;

/** Per-compaction timing the lab reports as latency (our planners only; model calls are not timed). */
export interface TimedAction extends ContextAction {
  latencyMs?: number;
}

export function compactionRow(
  info: RowInfo,
  settings: LabSettings,
  summarize: Summarizer,
  project: "pi" | "ours" = "ours",
): Row {
  const ledger = new SimulatedLedger(`lab-${info.id}-`);
  const threshold = thresholdOf(settings);
  return {
    info,
    view: ledger.view,
    append: (entry) => ledger.appendSource(entry),
    ledger: () => ledger.branch,
    beforeRequest: async () =>
      ledger.view.tokens <= threshold ? undefined : compactNow(ledger, settings, summarize, project),
  };
}

/** One compaction of a simulated ledger, as Pi runs it: Pi's preparation, the summarizer, the fact, the view projected again. */
export async function compactNow(
  ledger: SimulatedLedger,
  settings: LabSettings,
  summarize: Summarizer,
  project: "pi" | "ours",
): Promise<TimedAction | undefined> {
  const pi = await piCompaction();
  const tokensBefore = ledger.view.tokens;
  const started = performance.now();
  // Pi reads only the branch from the newest compaction's kept entries on; the window is that part (see piWindow).
  const prep = pi.prepareCompaction(ledger.piWindow(), {
    enabled: true,
    reserveTokens: settings.reserve,
    keepRecentTokens: settings.keepRecent,
  });
  if (!prep) return undefined;
  const result = await summarize(prep, ledger.branch, settings);
  if (!result) return undefined;
  const latencyMs = performance.now() - started;
  const entry: Partial<CompactionEntry> = {
    type: "compaction",
    summary: result.summary,
    firstKeptEntryId: result.firstKeptEntryId,
    tokensBefore: prep.tokensBefore,
    details: result.details,
  };
  entry.fromHook = project !== "pi";
  ledger.appendFact(entry as Record<string, unknown>);
  if (project === "ours") ledger.reproject();
  else ledger.reset((await piCore()).buildSessionProjection(ledger.piWindow()).messages);
  return {
    kind: "compaction",
    tokensBefore,
    sideCalls: result.sideCalls,
    modelCall: result.modelCall,
    latencyMs: result.modelCall ? undefined : latencyMs,
  };
}
