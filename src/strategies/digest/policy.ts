// When the digest strategy acts, from the context window alone: how much recent tool work stays raw, how much new raw
// work makes a batch worth digesting, and where the window is so full that everything older than the current step
// goes. Pure: no I/O.
import type { SettingsSection } from "../contract.ts";

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
  /** Which texts the agent wrote are quoted whole in a digest (absent: none, only their names are indexed). */
  written?: WrittenQuote;
}

/** Texts the agent put in files that a digest quotes: an edit's new texts, and a write's content if `writes`. */
export interface WrittenQuote {
  /** Longest text quoted, in lines; a longer one is indexed by its names only. */
  maxLines: number;
  writes: boolean;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, Math.round(value)));
}

/** `contextLedger.digest`: how the strategy sizes its raw tail. */
export interface DigestOptions {
  /**
   * Keep the working set raw: a larger tail that reaches back to the newest read of each file the agent is working
   * on, and digests that quote what edits put in files. Costs more per request (docs/strategies/digest.md has the
   * trade-off); off by default.
   */
  workingSet: boolean;
}

export const DEFAULT_DIGEST_OPTIONS: DigestOptions = { workingSet: false };

/** `contextLedger.digest.workingSet` and PI_CONTEXT_LEDGER_DIGEST_WORKING_SET (global settings only, like every key). */
export const digestSettings: SettingsSection<DigestOptions> = {
  defaults: DEFAULT_DIGEST_OPTIONS,
  resolve(target, raw, read) {
    target.workingSet = read.envBool(
      "DIGEST_WORKING_SET",
      read.pick("digest.workingSet", raw.workingSet, read.isBool, target.workingSet),
    );
  },
};

/**
 * Sizes for a window. Acting in batches keeps the provider's cached prefix intact between digests; each digest breaks
 * it only from the previous digest onwards, so the batch is a multiple of what that break costs (the kept raw tail).
 * The shares are fixed, with floors for small windows and caps so a very large window does not carry a very large
 * raw tail on every request. With `workingSet` the tail is larger and may reach back further for the files in use
 * (the shares are the lab's best point for it; docs/strategies/digest.md has the sweep).
 */
export function digestPolicy(contextWindow: number, options: Partial<DigestOptions> = {}): DigestPolicy {
  const window = contextWindow > 0 ? contextWindow : 128_000;
  const base = {
    keepRaw: clamp(window * 0.03, 2_000, 12_000),
    batch: clamp(window * 0.05, 3_000, 20_000),
    full: Math.round(window * 0.8),
    minFull: 1_000,
  };
  if (!options.workingSet) return base;
  return {
    ...base,
    // A 7.5% tail and 12% batches: fewer digests, so fewer cache breaks, with the same working set on the lab's
    // inputs as the 10% / 10% sizes first shipped (docs/strategies/digest.md has the sweep).
    keepRaw: clamp(window * 0.075, 2_000, 40_000),
    batch: clamp(window * 0.12, 3_000, 40_000),
    maxRaw: clamp(window * 0.3, 6_000, 120_000),
    hotSteps: 24,
    written: { maxLines: 60, writes: false },
  };
}

export type DigestDecision =
  | { act: true; why: "batch" | "window"; keepRaw: number; maxRaw: number }
  | { act: false; why: "below batch" | "nothing to digest" };

/**
 * Decide at a step boundary. `rawTokens` is the raw technical state a digest could cover now (the current step is
 * never part of it); `usageTokens` the context size, when known.
 */
export function decideDigest(input: {
  rawTokens: number;
  usageTokens: number | null;
  policy: DigestPolicy;
}): DigestDecision {
  const { rawTokens, usageTokens, policy } = input;
  if (rawTokens <= 0) return { act: false, why: "nothing to digest" };
  // Near the window's end the working set keeps only what the usual tail holds: room matters more than re-reads.
  if (usageTokens !== null && usageTokens >= policy.full && rawTokens >= policy.minFull)
    return { act: true, why: "window", keepRaw: 0, maxRaw: policy.maxRaw ? policy.keepRaw : 0 };
  if (rawTokens >= policy.keepRaw + policy.batch)
    return { act: true, why: "batch", keepRaw: policy.keepRaw, maxRaw: policy.maxRaw ?? policy.keepRaw };
  return { act: false, why: "below batch" };
}
