// `session_before_compact`: Pi prepared a compaction (manual /compact, threshold or overflow). The request runs
// through the lifecycle machine with the configured strategy; anything unexpected falls back to Pi's native path.
import type {
  ExtensionContext,
  SessionBeforeCompactEvent,
  SessionBeforeCompactResult,
} from "@earendil-works/pi-coding-agent";
import { filterPreparation } from "../strategies/shared/compaction-effects.ts";
import type { LifecycleRequest, MessageFact } from "../strategies/contract.ts";
import { failureDetails, type PlannerFailureDetails } from "../strategies/shared/fallback.ts";
import type { LedgerSession } from "./ledger-session.ts";
import type { StrategyLifecycle } from "./lifecycle.ts";
import { forTerminal } from "../log/display.ts";

/**
 * `session_before_compact` for every strategy: the strategy's chart routes the trigger (plan, decline, or Pi's own
 * compaction) and validates the plan; its facts become Pi's answer, and the chart commits when Pi stores them.
 */
export async function answerCompaction(
  event: SessionBeforeCompactEvent,
  ctx: ExtensionContext,
  session: LedgerSession,
  lifecycle: StrategyLifecycle,
  host: {
    recordFallback(details: PlannerFailureDetails): void;
    sendMessage(message: MessageFact): void;
    now(): number;
  },
  applies = true,
): Promise<SessionBeforeCompactResult | undefined> {
  session.sync(ctx.sessionManager);
  filterPreparation(event, session);
  const request: LifecycleRequest = {
    moment: { type: "session_before_compact", event },
    ctx,
    trace: { startedAt: host.now() },
  };
  // The session awaits validated facts until Pi stores them; the chart's output says whether planning was tried.
  const decision = await lifecycle.run(event.reason, request, {
    signal: event.signal,
    abortReason: "compaction aborted",
    applies,
  }).decision;
  switch (decision.state) {
    case "validated": {
      const facts = decision.facts;
      for (const message of facts.messages ?? []) host.sendMessage(message);
      if (facts.compaction) return { compaction: { ...facts.compaction } };
      return facts.declineCompaction ? { cancel: true } : undefined;
    }
    case "cancelled":
      return { cancel: true };
    case "nativeFallback": {
      // A trigger the strategy leaves to Pi is not a failure; only a planning attempt that failed is reported.
      if (!decision.attempted) return undefined;
      // Only our own reasons (PlanError messages, validation problems) are shown and kept; a provider's error text
      // is neither persisted nor shown beyond its category. The error is the planner's own, when it threw.
      const failure = decision.failure === "error" ? request.trace.failure : undefined;
      const details = failureDetails(failure, {
        strategy: lifecycle.strategy,
        trigger: event.reason,
        durationMs: host.now() - (request.trace.startedAt ?? host.now()),
        model: request.trace.model,
        usage: request.trace.usage,
        reason: failure === undefined ? decision.reason : undefined,
      });
      ctx.ui.notify(
        forTerminal(
          `context-ledger: ${lifecycle.strategy} compaction fell back to Pi's native compaction (${details.category}: ${details.reason}).`,
        ),
        "warning",
      );
      host.recordFallback(details);
      return undefined;
    }
  }
}
