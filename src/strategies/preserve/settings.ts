// Options of the preserve strategy's checkpoint requests (global settings only) and their validation, shared by the
// host's settings loader and the tests. Pure: no I/O.

/** Reasoning levels a checkpoint request may ask for ("off" sends none). */
export const REASONING_EFFORTS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** Prompt-cache retention a checkpoint request may ask for. */
export const CACHE_RETENTIONS = ["none", "short", "long"] as const;
export type CacheRetentionSetting = (typeof CACHE_RETENTIONS)[number];

export interface PreserveOptions {
  /** `provider/model` that writes checkpoints; unset: `plannerModel`, then the active model. */
  summaryModel?: string;
  /** Reasoning level of checkpoint requests; unset: the level of the live request they continue. */
  reasoningEffort?: ReasoningEffort;
  /** Prompt-cache retention of checkpoint requests; unset: the live request's (Pi leaves it to the provider). */
  cacheRetention?: CacheRetentionSetting;
  /** `provider/model` ids preserve acts for; empty: every model. Other models get Pi's native compaction. */
  models: string[];
}

export const DEFAULT_PRESERVE_OPTIONS: PreserveOptions = { models: [] };

export function isReasoningEffort(value: unknown): value is ReasoningEffort {
  return (REASONING_EFFORTS as readonly unknown[]).includes(value);
}

export function isCacheRetention(value: unknown): value is CacheRetentionSetting {
  return (CACHE_RETENTIONS as readonly unknown[]).includes(value);
}

/** True when preserve acts for this model (`provider/id`): the allowlist is empty or names it. */
export function preserveAppliesTo(options: PreserveOptions, model: { provider: string; id: string } | undefined): boolean {
  if (!options.models.length) return true;
  return model !== undefined && options.models.includes(`${model.provider}/${model.id}`);
}
