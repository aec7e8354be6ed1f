// Budget awareness, host side: the threshold the configured strategy acts at (from Pi's own compaction settings for
// the active model), and the one hidden notice appended at `turn_end` when usage passes a share of it.
import type {
  ExtensionAPI,
  ExtensionContext,
  SessionBoundaryDraft,
  TurnEndEvent,
  TurnEndEventResult,
} from "@earendil-works/pi-coding-agent";
import {
  budgetNoticeDraft,
  isArmed,
  type PiCompactionSettings,
  shouldNotify,
  type Threshold,
  thresholdFor,
} from "../projection/budget.ts";
import { budgetOf, strategyNamed } from "../strategies/registry.ts";
import type { LedgerSession } from "./ledger-session.ts";

/** Pi's reserve before its compaction triggers, as Pi resolves it (model override, then the setting, then 16384). */
const PI_DEFAULT_RESERVE = 16_384;

/** Pi's effective compaction settings for `model`, read from Pi's merged settings. */
export function piCompaction(pi: ExtensionAPI, model: ExtensionContext["model"]): PiCompactionSettings {
  const compaction = pi.getSettings().compaction;
  const override = model ? compaction?.modelOverrides?.[`${model.provider}/${model.id}`]?.reserveTokens : undefined;
  return {
    enabled: compaction?.enabled ?? true,
    reserveTokens: override ?? compaction?.reserveTokens ?? PI_DEFAULT_RESERVE,
  };
}

/** The threshold for the active model and configured strategy; undefined when the window is unknown. */
export function currentThreshold(
  pi: ExtensionAPI,
  session: LedgerSession,
  ctx: ExtensionContext,
): Threshold | undefined {
  const contextWindow = ctx.getContextUsage()?.contextWindow ?? ctx.model?.contextWindow;
  if (!contextWindow) return undefined;
  return thresholdFor(budgetOf(session.settings.strategy), contextWindow, piCompaction(pi, ctx.model));
}

export class BudgetNotices {
  private readonly pi: ExtensionAPI;
  private readonly session: () => LedgerSession;

  constructor(pi: ExtensionAPI, session: () => LedgerSession) {
    this.pi = pi;
    this.session = session;
  }

  /**
   * turn_end: append one hidden notice when usage crossed the share of the threshold since the last one. `busy` is
   * true when this boundary already changes the context (a fold, a restore, a checkpoint), which rules a notice out.
   */
  onTurnEnd(
    event: TurnEndEvent,
    ctx: ExtensionContext,
    entries: SessionBoundaryDraft[],
    busy: boolean,
  ): TurnEndEventResult | undefined {
    const session = this.session();
    const { share } = session.settings.budgetNotice;
    const enabled =
      session.settings.budgetNotice.enabled ?? strategyNamed(session.settings.strategy).quietByDefault !== true;
    if (!enabled || event.outcome !== "completed") return undefined;
    const threshold = currentThreshold(this.pi, session, ctx);
    if (!threshold) return undefined;
    const usage = ctx.getContextUsage()?.tokens ?? null;
    session.sync(ctx.sessionManager);
    const armed =
      usage !== null && usage >= share * threshold.tokens && isArmed(session.live.entries, share * threshold.tokens);
    if (!shouldNotify({ usage, threshold, share, armed, busy })) return undefined;
    // Appended after everything else at this boundary, so it lands at the end of the next request.
    return { entries: [...entries, budgetNoticeDraft(usage!, threshold, share, session.settings.foldTools)] };
  }
}
