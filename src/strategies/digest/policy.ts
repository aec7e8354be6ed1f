// When the digest strategy acts, from the context window alone: how much recent tool work stays raw, how much new raw
// work makes a batch worth digesting, and where the window is so full that everything older than the current step
// goes. Pure: no I/O.

/** The three sizes the strategy works with, in estimated tokens. */
export interface DigestPolicy {
  /** Newest raw technical state kept as it is after a digest (the work the agent is in the middle of). */
  keepRaw: number;
  /** Raw technical state beyond `keepRaw` that makes one digest worth its cache break. */
  batch: number;
  /** Context usage from which a digest covers everything but the current step, whatever the batch. */
  full: number;
  /** Smallest raw state a digest is written for when the window is nearly full: less is not worth a cache break. */
  minFull: number;
  /**
   * Most raw tokens the tail may hold to keep the working set raw (the newest read of each file the agent touched in
   * its recent steps). Absent: the tail is `keepRaw` alone, whatever the agent works on.
   */
  maxRaw?: number;
  /** A file is in the working set when the current step or one of this many newest steps read, edited or wrote it. */
  hotSteps?: number;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, Math.round(value)));
}

/**
 * Sizes for a window. Acting in batches keeps the provider's cached prefix intact between digests; each digest breaks
 * it only from the previous digest onwards, so the batch is a multiple of what that break costs (the kept raw tail).
 * The shares are fixed, with floors for small windows and caps so a very large window does not carry a very large
 * raw tail on every request.
 */
export function digestPolicy(contextWindow: number): DigestPolicy {
  const window = contextWindow > 0 ? contextWindow : 128_000;
  return {
    keepRaw: clamp(window * 0.03, 2_000, 12_000),
    batch: clamp(window * 0.05, 3_000, 20_000),
    full: Math.round(window * 0.8),
    minFull: 1_000,
  };
}

export type DigestDecision =
  | { act: true; why: "batch" | "window"; keepRaw: number; maxRaw: number }
  | { act: false; why: "below batch" | "nothing to digest" };

/**
 * Decide at a step boundary. `rawTokens` is the raw technical state a digest could cover now (the current step is
 * never part of it); `usageTokens` the context size, when known.
 */
export function decideDigest(input: { rawTokens: number; usageTokens: number | null; policy: DigestPolicy }): DigestDecision {
  const { rawTokens, usageTokens, policy } = input;
  if (rawTokens <= 0) return { act: false, why: "nothing to digest" };
  // Near the window's end the working set keeps only what the usual tail holds: room matters more than re-reads.
  if (usageTokens !== null && usageTokens >= policy.full && rawTokens >= policy.minFull) return { act: true, why: "window", keepRaw: 0, maxRaw: policy.maxRaw ? policy.keepRaw : 0 };
  if (rawTokens >= policy.keepRaw + policy.batch) return { act: true, why: "batch", keepRaw: policy.keepRaw, maxRaw: policy.maxRaw ?? policy.keepRaw };
  return { act: false, why: "below batch" };
}
