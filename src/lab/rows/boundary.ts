// Rows of strategies that act at step boundaries (preserve, digest). Before each request the previous step has ended
// (Pi's turn_end): the strategy's own decision and deterministic writer (`replay.step`) may append one fact, and the
// view is projected again. When the view still exceeds the window the request would overflow; where the strategy
// routes overflow to Pi, the row lets Pi compact natively (the native stand-in, counted as a model call).
import { performance } from "node:perf_hooks";
import type { SessionEntry } from "../../log/entries.ts";
import type { Strategy } from "../../strategies/contract.ts";
import type { LabReplay } from "../row-spec.ts";
import type { Row, RowInfo, SessionSettings } from "../row.ts";
import { compactNow, type TimedAction } from "./compaction-row.ts";
import { SimulatedLedger } from "./ledger-row.ts";
import { nativeSummary } from "./native.ts";

type BoundaryReplay = Extract<LabReplay, { engine: "boundary" }>;

export function boundaryRow(
  strategy: Strategy<unknown>,
  info: RowInfo,
  replay: BoundaryReplay,
  settings: SessionSettings,
): Row {
  const ledger = new SimulatedLedger(`lab-${info.id}-`);
  /** The step that ended before the next request: its message and how it stopped. */
  let lastStep: { id: string; stopReason: string } | undefined;
  /** The step last found with nothing to write at its boundary: asking again would only repeat the work. */
  let settledAt: string | undefined;
  /** What the strategy's step asked to be handed to its next boundary. */
  let carry: unknown;
  return {
    info,
    view: ledger.view,
    ledger: () => ledger.branch,
    append(entry: SessionEntry) {
      ledger.appendSource(entry);
      if (entry.type === "message" && entry.message.role === "assistant")
        lastStep = { id: entry.id, stopReason: entry.message.stopReason };
    },
    async beforeRequest(): Promise<TimedAction | undefined> {
      const action = act();
      if (strategy.routes.overflow !== "pi" || ledger.view.tokens <= settings.window) return action;
      const overflow = await compactNow(ledger, settings, nativeSummary, "ours");
      // One act per request: a fact that did not prevent the overflow is reported with it.
      return overflow && action
        ? { ...overflow, tokensBefore: action.tokensBefore, sideCalls: [...action.sideCalls, ...overflow.sideCalls] }
        : (overflow ?? action);
    },
  };

  function act(): TimedAction | undefined {
    if (!lastStep || lastStep.id === settledAt) return undefined;
    const usageTokens = ledger.view.tokens;
    const started = performance.now();
    const result = replay.step({
      branch: ledger.branch,
      stepEntryId: lastStep.id,
      stopReason: lastStep.stopReason,
      usageTokens,
      contextWindow: settings.window,
      cwd: settings.cwd,
      view: () => ledger.projected(),
      carry,
    });
    carry = result.carry;
    if (!result.ok) {
      if (result.settled) settledAt = lastStep.id;
      return undefined;
    }
    ledger.appendFact({ type: "custom_message", ...result.fact });
    ledger.resetToProjection();
    return { kind: result.kind, tokensBefore: usageTokens, sideCalls: [], latencyMs: performance.now() - started };
  }
}
