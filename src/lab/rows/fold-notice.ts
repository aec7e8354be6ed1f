// The `fold` strategy driven by budget notices: the host's notice rule (src/projection/budget.ts) tells a scripted
// budget-aware agent when usage passes 0.8 of the threshold, and the agent folds the finished requests at the next
// task boundary (a new user message). The checkpoint strategy stays the safety net at the threshold, as in the host
// with default settings. Folds, notices and compactions are facts in one simulated ledger; src/projection hides.
import { performance } from "node:perf_hooks";
import type { SessionEntry } from "../../log/entries.ts";
import { type FoldDetails, LedgerType } from "../../strategies/catalog.ts";
import { budgetNoticeDraft, DEFAULT_NOTICE_SHARE, shouldNotify, thresholdFor } from "../../projection/budget.ts";
import { isFoldable } from "../../projection/ranges.ts";
import { budgetOf, DEFAULT_STRATEGY, strategyNamed } from "../../strategies/registry.ts";
import { piCompaction } from "../pi-internals.ts";
import type { Row, RowInfo, SessionSettings } from "../row.ts";
import { chartSummarizer } from "./chart-compaction.ts";
import type { TimedAction } from "./compaction-row.ts";
import { foldSummary } from "./fold-policy.ts";
import { SimulatedLedger } from "./ledger-row.ts";

export const foldNotice = (settings: SessionSettings, info: RowInfo): Row => {
  const ledger = new SimulatedLedger("lab-fold-notice-");
  // The safety net is the strategy a user gets by default, answering Pi's compaction through its own chart.
  const fallback = strategyNamed(DEFAULT_STRATEGY);
  const net = fallback.lab?.find((spec) => spec.replay.engine === "compaction")?.replay;
  if (net?.engine !== "compaction")
    throw new Error(`the default strategy ${fallback.name} declares no compaction row for the lab`);
  const safetyNet = chartSummarizer(fallback, net, settings);
  const threshold = thresholdFor(budgetOf(DEFAULT_STRATEGY), settings.window, {
    enabled: true,
    reserveTokens: settings.reserve,
  });
  let armed = true;
  /** Told about the budget, the agent folds at the next task boundary. */
  let wantsFold = false;
  /** Folds start after the previous fold's message, so no two folds hide the same entries. */
  let foldAfter: string | null = null;
  /** Branch position just after that message (a fact is appended at the end): no search of the branch per fold. */
  let foldStart = 0;
  let pending: TimedAction | undefined;

  const fact = (body: Record<string, unknown>) => {
    const entry = ledger.appendFact(body);
    return entry;
  };
  const reproject = () => ledger.resetToProjection();

  /** Fold everything since the previous fold through the finished request into the policy's summary. */
  const fold = () => {
    const finished = ledger.branch.slice(foldStart);
    const through = finished[finished.length - 1];
    if (!through || !finished.some(isFoldable)) return;
    const tokensBefore = ledger.view.tokens;
    const started = performance.now();
    const request =
      [...finished].reverse().find((e) => e.type === "message" && e.message.role === "assistant") ?? through;
    const details: FoldDetails = {
      v: 1,
      range: { afterId: foldAfter, throughId: through.id },
      requestEntryId: request.id,
      target: foldAfter ?? "root",
    };
    foldAfter = fact({
      type: "custom_message",
      customType: LedgerType.fold,
      content: foldSummary(finished),
      display: true,
      details,
    }).id;
    foldStart = ledger.branch.length;
    reproject();
    pending = { kind: "fold", tokensBefore, sideCalls: [], latencyMs: performance.now() - started };
  };

  return {
    info,
    view: ledger.view,
    ledger: () => ledger.branch,
    append(entry: SessionEntry) {
      if (wantsFold && entry.type === "message" && entry.message.role === "user") {
        wantsFold = false;
        fold();
      }
      ledger.appendSource(entry);
    },
    async beforeRequest(): Promise<TimedAction | undefined> {
      // The step before this request has ended: the host's turn_end decides on a notice here.
      const usage = ledger.view.tokens;
      if (usage < DEFAULT_NOTICE_SHARE * threshold.tokens) armed = true;
      if (shouldNotify({ usage, threshold, share: DEFAULT_NOTICE_SHARE, armed, busy: pending !== undefined })) {
        armed = false;
        wantsFold = true;
        const { type, ...notice } = budgetNoticeDraft(usage, threshold, DEFAULT_NOTICE_SHARE, true);
        fact({ type, ...notice });
        reproject();
      }
      if (ledger.view.tokens > threshold.tokens) {
        // The safety net: the checkpoint strategy compacts as the host would at the threshold.
        const pi = await piCompaction();
        const tokensBefore = ledger.view.tokens;
        const started = performance.now();
        const prep = pi.prepareCompaction(ledger.piWindow(), {
          enabled: true,
          reserveTokens: settings.reserve,
          keepRecentTokens: settings.keepRecent,
        });
        const plan = prep && (await safetyNet(prep, ledger.branch, settings));
        if (prep && plan) {
          fact({
            type: "compaction",
            summary: plan.summary,
            firstKeptEntryId: plan.firstKeptEntryId,
            tokensBefore: prep.tokensBefore,
            details: plan.details,
            fromHook: true,
          });
          reproject();
          // A fold at this same boundary that did not get under the threshold is reported with the compaction.
          pending = {
            kind: "compaction",
            tokensBefore: pending?.tokensBefore ?? tokensBefore,
            sideCalls: plan.sideCalls,
            latencyMs: performance.now() - started,
          };
        }
      }
      const action = pending;
      pending = undefined;
      return action;
    },
  };
};
