// When the preserve strategy checkpoints: the reserve kept free for the summary and the next turns, from a smooth
// curve over the context window, and the trigger decision at a turn boundary. Pure: no I/O.

/** Parameters of the fitted logistic curve reserve(window) (taken from the preserve seed). */
const CURVE = { top: 88319.65, bottom: 1468.926, midpoint: 1413076, slope: 0.7096055 } as const;

/**
 * Tokens kept free below the context window. Small windows keep a few thousand, large ones tens of thousands;
 * the curve grows smoothly, so a model switch never makes the threshold jump.
 */
export function reserveTokens(contextWindow: number): number {
  if (!(contextWindow > 0)) return Math.round(CURVE.bottom);
  return Math.round(CURVE.top + (CURVE.bottom - CURVE.top) / (1 + (contextWindow / CURVE.midpoint) ** CURVE.slope));
}

/** Usage at which a checkpoint starts: the window minus its reserve (never below zero). */
export function triggerTokens(contextWindow: number): number {
  return Math.max(0, contextWindow - reserveTokens(contextWindow));
}

export interface TriggerInput {
  /** Pi's current context usage; null when unknown (right after a compaction, before the next response). */
  usageTokens: number | null;
  contextWindow: number;
  /** Estimated tokens of older raw technical state that a checkpoint could hide now. */
  compactableTokens: number;
}

export type TriggerDecision =
  | { checkpoint: true; threshold: number }
  | { checkpoint: false; threshold: number; reason: "usage unknown" | "below threshold" | "nothing to compact" };

/**
 * Decide at turn_end. Usage already includes the current batch, so it is compared as is; a checkpoint needs older
 * technical state, because an empty one would cost tokens and change nothing.
 */
export function decideTrigger(input: TriggerInput): TriggerDecision {
  const threshold = triggerTokens(input.contextWindow);
  if (input.usageTokens === null) return { checkpoint: false, threshold, reason: "usage unknown" };
  if (input.usageTokens < threshold) return { checkpoint: false, threshold, reason: "below threshold" };
  if (input.compactableTokens <= 0) return { checkpoint: false, threshold, reason: "nothing to compact" };
  return { checkpoint: true, threshold };
}
