// The `preserve` strategy as a lab row, written by the extractive writer (no model call). Before each request, the
// previous step's boundary is a turn_end: when the host's own decider (`checkpointDue`) says a checkpoint is due, one
// checkpoint with a keepDialogue range rule is appended and the view is projected again. When
// the view still exceeds the window, the request would overflow: the host lets Pi compact natively, and so does
// the row (with the native row's stand-in summary, counted as a model call).
import { performance } from "node:perf_hooks";
import type { SessionEntry } from "../../log/entries.ts";
import { evolve, foldBranch, initialLedgerState, type LedgerState } from "../../projection/ledger-state.ts";
import { projectBranch } from "../../projection/project.ts";
import { extractiveFromDelta } from "../../strategies/preserve/checkpoint.ts";
import { entryBefore } from "../../strategies/preserve/delta.ts";
import { checkpointDue } from "../../strategies/preserve/due.ts";
import type { LabSettings, Row } from "../row.ts";
import { compactNow, type TimedAction } from "./compaction-row.ts";
import { nativeSummary } from "./native.ts";
import { SimulatedLedger } from "./ledger-row.ts";

export const preserveRow = (settings: LabSettings): Row => {
  const ledger = new SimulatedLedger("lab-preserve-");
  let state: LedgerState = initialLedgerState();
  /** The step that ended before the next request: its message and how it stopped. */
  let lastAssistant: { id: string; stopReason: string } | undefined;
  /** The boundary last found with nothing to checkpoint: re-checking it would only repeat the projection. */
  let emptyAt: string | undefined;
  return {
    info: {
      id: "preserve",
      label: "preserve (extractive)",
      family: "ours",
      note: "preserve strategy: dialogue verbatim, older tool traffic replaced by append-only Tool Context checkpoints (extractive writer, no model call)",
    },
    view: ledger.view,
    ledger: () => ledger.branch,
    append(entry: SessionEntry) {
      ledger.appendSource(entry);
      state = evolve(state, entry);
      if (entry.type === "message" && entry.message.role === "assistant") lastAssistant = { id: entry.id, stopReason: entry.message.stopReason };
    },
    async beforeRequest(): Promise<TimedAction | undefined> {
      const action = checkpoint();
      if (ledger.view.tokens <= settings.window) return action;
      const overflow = await compactNow(ledger, settings, nativeSummary, "ours");
      if (overflow) state = foldBranch(ledger.branch);
      // One act per request: a checkpoint that did not prevent the overflow is reported with it.
      return overflow && action ? { ...overflow, tokensBefore: action.tokensBefore, sideCalls: [...action.sideCalls, ...overflow.sideCalls] } : (overflow ?? action);
    },
  };

  /** The strategy's own act: one extractive Tool Context checkpoint when the host's turn_end would write one. */
  function checkpoint(): TimedAction | undefined {
    if (!lastAssistant) return undefined;
    const tokensBefore = ledger.view.tokens;
    const limitId = entryBefore(ledger.branch, lastAssistant.id);
    if (!limitId || limitId === emptyAt) return undefined;
    const started = performance.now();
    const decision = checkpointDue({
      branch: ledger.branch,
      stepEntryId: lastAssistant.id,
      stopReason: lastAssistant.stopReason,
      drafts: [],
      usageTokens: tokensBefore,
      contextWindow: settings.window,
    });
    if (!decision.due) {
      if (decision.why === "nothing to compact") emptyAt = limitId;
      return undefined;
    }
    const { delta } = decision;
    // The extractive writer sends no request, so no request budget limits the delta: it covers what the host's
    // continuation request covers, the whole delta.
    const result = extractiveFromDelta(delta, Number.POSITIVE_INFINITY, tokensBefore);
    if (!result.ok) {
      emptyAt = limitId;
      return undefined;
    }
    const { customType, content, display, details } = result.draft;
    const fact = ledger.appendFact({ type: "custom_message", customType, content, display, details });
    state = evolve(state, fact);
    ledger.reset(projectBranch(ledger.branch, state).messages);
    return { kind: "checkpoint", tokensBefore, sideCalls: [], latencyMs: performance.now() - started };
  }
};
