// Options of the preserve strategy's checkpoint requests (global settings only) and their validation, shared by the
// host's settings loader and the tests. Pure: no I/O.
import type { SettingsSection } from "../contract.ts";

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
export function preserveAppliesTo(
  options: PreserveOptions,
  model: { provider: string; id: string } | undefined,
): boolean {
  if (!options.models.length) return true;
  return model !== undefined && options.models.includes(`${model.provider}/${model.id}`);
}

/** `contextLedger.preserve` and its PI_CONTEXT_LEDGER_PRESERVE_* overrides (global settings only, like every key). */
export const preserveSettings: SettingsSection<PreserveOptions> = {
  defaults: DEFAULT_PRESERVE_OPTIONS,
  resolve(target, raw, read) {
    const isModelList = (v: unknown): v is string[] => Array.isArray(v) && v.every(read.isModel);
    const summaryModel = read.pick<string | undefined>(
      "preserve.summaryModel",
      raw.summaryModel,
      read.isModel,
      undefined,
    );
    if (summaryModel) target.summaryModel = summaryModel;
    const effort = read.pick(
      "preserve.reasoningEffort",
      raw.reasoningEffort,
      isReasoningEffort,
      target.reasoningEffort,
    );
    if (effort) target.reasoningEffort = effort;
    const retention = read.pick("preserve.cacheRetention", raw.cacheRetention, isCacheRetention, target.cacheRetention);
    if (retention) target.cacheRetention = retention;
    target.models = [...read.pick("preserve.models", raw.models, isModelList, target.models)];
    const text = (v: string) => v;
    read.env("PRESERVE_SUMMARY_MODEL", text, read.isModel, "provider/model", (v) => (target.summaryModel = v));
    read.env(
      "PRESERVE_REASONING_EFFORT",
      text,
      isReasoningEffort,
      "off, minimal, low, medium, high, xhigh or max",
      (v) => (target.reasoningEffort = v),
    );
    read.env(
      "PRESERVE_CACHE_RETENTION",
      text,
      isCacheRetention,
      "none, short or long",
      (v) => (target.cacheRetention = v),
    );
    const list = (v: string) => (v.trim() ? v.split(",").map((m) => m.trim()) : []);
    read.env(
      "PRESERVE_MODELS",
      list,
      isModelList,
      "a comma-separated list of provider/model",
      (v) => (target.models = v),
    );
  },
};
