// Settings of the package: the `contextLedger` key of the GLOBAL Pi settings file, then PI_CONTEXT_LEDGER_*
// environment overrides. Project-local settings are never read: a repository must not be able to pick the
// model that sees transcripts or switch protections off.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { quoted } from "../log/display.ts";
import type { StrategySetting } from "../log/entries.ts";
import { DEFAULT_NOTICE_SHARE } from "../projection/budget.ts";
import type { RecallSettings } from "../recall/settings.ts";
import { DEFAULT_PLANNED_OPTIONS, type PlannedOptions } from "../strategies/planned/planner.ts";
import { DEFAULT_PRESERVE_OPTIONS, isCacheRetention, isReasoningEffort, type PreserveOptions } from "../strategies/preserve/settings.ts";

export interface LedgerSettings {
  /** What /compact, threshold and overflow compaction do. */
  strategy: StrategySetting;
  /** Agent-directed fold tools (context_compact, context_checkpoint, context_timeline). */
  foldTools: boolean;
  /** Recall tools (context_lookup, context_list_entries, context_grep, context_show_entry). */
  recallTools: boolean;
  recall: RecallSettings;
  checkpoint: { capPercent: number; startupReads: boolean };
  /** `provider/model` for strategies that call a model (planned, preserve); absent means the active model. */
  plannerModel?: string;
  /** The planned strategy: who ranks deletions, and how much of the compacted region it keeps. */
  planned: PlannedOptions;
  /** The preserve strategy's checkpoint requests: summary model, reasoning, cache retention, model allowlist. */
  preserve: PreserveOptions;
  /** Attach the Stately inspector to every lifecycle actor (message bodies are stripped). */
  inspect: boolean;
  /** One short hidden notice to the model when usage passes `share` of the strategy's threshold. */
  /** Budget notices; `enabled` unset means on for every strategy but `native`, which promises Pi's own requests. */
  budgetNotice: { enabled?: boolean; share: number };
}

export const DEFAULT_SETTINGS: LedgerSettings = {
  strategy: "checkpoint",
  foldTools: true,
  recallTools: true,
  recall: { grepMaxResults: 8, grepMaxChars: 12_000, lookupTurnBudget: 10 },
  checkpoint: { capPercent: 25, startupReads: true },
  planned: { ...DEFAULT_PLANNED_OPTIONS },
  preserve: { ...DEFAULT_PRESERVE_OPTIONS, models: [] },
  inspect: false,
  budgetNotice: { share: DEFAULT_NOTICE_SHARE },
};

const STRATEGIES: readonly StrategySetting[] = ["checkpoint", "planned", "preserve", "digest", "native"];

export interface LoadedSettings {
  settings: LedgerSettings;
  /** Human-readable problems; each fell back to the default. */
  warnings: string[];
}

/** Directory of Pi's global config, honouring PI_CODING_AGENT_DIR. */
export function agentDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.PI_CODING_AGENT_DIR || join(homedir(), ".pi", "agent");
}

/** Read and validate the settings. Never throws: bad values warn and use the default. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): LoadedSettings {
  const warnings: string[] = [];
  let raw: unknown;
  const file = join(agentDir(env), "settings.json");
  if (existsSync(file)) {
    try {
      raw = (JSON.parse(readFileSync(file, "utf8")) as { contextLedger?: unknown }).contextLedger;
    } catch (error) {
      warnings.push(`${file}: not valid JSON (${error instanceof Error ? error.message : error}); using defaults`);
    }
  }
  return resolveSettings(raw, env, warnings);
}

/** Pure part of {@link loadSettings}: validate a `contextLedger` value and apply environment overrides. */
export function resolveSettings(raw: unknown, env: NodeJS.ProcessEnv, warnings: string[] = []): LoadedSettings {
  const s: LedgerSettings = structuredClone(DEFAULT_SETTINGS);
  const obj = raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  if (raw !== undefined && !(raw && typeof raw === "object" && !Array.isArray(raw))) warnings.push("contextLedger must be an object; using defaults");

  const pick = <T>(name: string, value: unknown, check: (v: unknown) => v is T, fallback: T): T => {
    if (value === undefined) return fallback;
    if (check(value)) return value;
    warnings.push(`contextLedger.${name}: invalid value ${quoted(value)}; using ${quoted(fallback)}`);
    return fallback;
  };
  const isStrategy = (v: unknown): v is StrategySetting => STRATEGIES.includes(v as StrategySetting);
  const isBool = (v: unknown): v is boolean => typeof v === "boolean";
  const isCount = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v > 0 && v <= 1_000_000;
  // `provider/model`; the model id may itself hold slashes (`openrouter/anthropic/claude-x`): callers split at the first.
  const isModel = (v: unknown): v is string => typeof v === "string" && /^[\w.-]+\/[\w.:@-]+(?:\/[\w.:@-]+)*$/.test(v);
  const sub = (name: string): Record<string, unknown> => {
    const v = obj[name];
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
    if (v !== undefined) warnings.push(`contextLedger.${name}: expected an object, got ${quoted(v)}; using defaults`);
    return {};
  };

  s.strategy = pick("strategy", obj.strategy, isStrategy, s.strategy);
  s.foldTools = pick("foldTools", obj.foldTools, isBool, s.foldTools);
  s.recallTools = pick("recallTools", obj.recallTools, isBool, s.recallTools);
  s.inspect = pick("inspect", obj.inspect, isBool, s.inspect);
  const recall = sub("recall");
  s.recall.grepMaxResults = pick("recall.grepMaxResults", recall.grepMaxResults, isCount, s.recall.grepMaxResults);
  s.recall.grepMaxChars = pick("recall.grepMaxChars", recall.grepMaxChars, isCount, s.recall.grepMaxChars);
  s.recall.lookupTurnBudget = pick("recall.lookupTurnBudget", recall.lookupTurnBudget, isCount, s.recall.lookupTurnBudget);
  const model = pick<string | undefined>("recall.lookupModel", recall.lookupModel, isModel, undefined);
  if (model) s.recall.lookupModel = model;
  for (const key of ["lookupAttempts", "lookupResultChars", "lookupAnswerChars", "listPageSize"] as const) {
    const value = pick<number | undefined>(`recall.${key}`, recall[key], isCount, undefined);
    if (value !== undefined) s.recall[key] = value;
  }
  const plannerModel = pick<string | undefined>("plannerModel", obj.plannerModel, isModel, undefined);
  if (plannerModel) s.plannerModel = plannerModel;
  const planned = sub("planned");
  const isPlanner = (v: unknown): v is "heuristic" | "model" => v === "heuristic" || v === "model";
  const isRatio = (v: unknown): v is number => typeof v === "number" && v > 0 && v < 1;
  const plannerKind = pick<"heuristic" | "model" | undefined>("planned.planner", planned.planner, isPlanner, undefined);
  if (plannerKind) s.planned.planner = plannerKind;
  s.planned.retainRatio = pick("planned.retainRatio", planned.retainRatio, isRatio, s.planned.retainRatio);
  const isTokens = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 10_000_000;
  s.planned.minRetainedTokens = pick("planned.minRetainedTokens", planned.minRetainedTokens, isTokens, s.planned.minRetainedTokens);
  s.planned.minSavedTokens = pick("planned.minSavedTokens", planned.minSavedTokens, isTokens, s.planned.minSavedTokens);
  const isMillis = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 100 && v <= 3_600_000;
  s.planned.timeoutMs = pick("planned.timeoutMs", planned.timeoutMs, isMillis, s.planned.timeoutMs);
  s.planned.maxOutputTokens = pick("planned.maxOutputTokens", planned.maxOutputTokens, isCount, s.planned.maxOutputTokens);
  s.planned.speculation = pick("planned.speculation", planned.speculation, isBool, s.planned.speculation);
  s.planned.speculationRatio = pick("planned.speculationRatio", planned.speculationRatio, isRatio, s.planned.speculationRatio);
  const budget = sub("budgetNotice");
  const noticesOn = pick<boolean | undefined>("budgetNotice.enabled", budget.enabled, isBool, undefined);
  if (noticesOn !== undefined) s.budgetNotice.enabled = noticesOn;
  s.budgetNotice.share = pick("budgetNotice.share", budget.share, isRatio, s.budgetNotice.share);
  const checkpoint = sub("checkpoint");
  // 0 or "off" turns the checkpoint cap off.
  const isCap = (v: unknown): v is number | "off" => v === "off" || (typeof v === "number" && v >= 0 && v <= 100);
  const capSetting = pick("checkpoint.capPercent", checkpoint.capPercent, isCap, s.checkpoint.capPercent);
  s.checkpoint.capPercent = capSetting === "off" ? 0 : capSetting;
  s.checkpoint.startupReads = pick("checkpoint.startupReads", checkpoint.startupReads, isBool, s.checkpoint.startupReads);

  // Environment overrides, for one-off runs and CI.
  const envValue = (name: string) => env[`PI_CONTEXT_LEDGER_${name}`];
  const envBool = (name: string, current: boolean): boolean => {
    const v = envValue(name);
    if (v === undefined) return current;
    if (/^(1|true|on|yes)$/i.test(v)) return true;
    if (/^(0|false|off|no)$/i.test(v)) return false;
    warnings.push(`PI_CONTEXT_LEDGER_${name}: expected 1/0, got ${quoted(v)}; ignored`);
    return current;
  };
  const strategy = envValue("STRATEGY");
  if (strategy !== undefined) {
    if (isStrategy(strategy)) s.strategy = strategy;
    else warnings.push(`PI_CONTEXT_LEDGER_STRATEGY: unknown strategy ${quoted(strategy)} (expected ${STRATEGIES.join(", ")}); using ${s.strategy}`);
  }
  s.foldTools = envBool("FOLD_TOOLS", s.foldTools);
  s.recallTools = envBool("RECALL_TOOLS", s.recallTools);
  s.inspect = envBool("INSPECT", s.inspect);
  // Decimal digits only: Number() would also take hex, binary, exponents, blanks and the empty string.
  const decimal = (v: string, fraction: boolean): number => ((fraction ? /^\d{1,12}(\.\d{1,6})?$/ : /^\d{1,12}$/).test(v) ? Number(v) : Number.NaN);
  const envCount = (name: string, apply: (n: number) => void) => {
    const v = envValue(name);
    if (v === undefined) return;
    if (isCount(decimal(v, false))) apply(Number(v));
    else warnings.push(`PI_CONTEXT_LEDGER_${name}: expected a whole number from 1 to 1000000, got ${quoted(v)}; ignored`);
  };
  envCount("GREP_MAX_RESULTS", (n) => (s.recall.grepMaxResults = n));
  envCount("GREP_MAX_CHARS", (n) => (s.recall.grepMaxChars = n));
  envCount("LOOKUP_TURN_BUDGET", (n) => (s.recall.lookupTurnBudget = n));
  const lookupModel = envValue("LOOKUP_MODEL");
  if (lookupModel !== undefined) {
    if (isModel(lookupModel)) s.recall.lookupModel = lookupModel;
    else warnings.push(`PI_CONTEXT_LEDGER_LOOKUP_MODEL: expected provider/model, got ${quoted(lookupModel)}; ignored`);
  }
  // The planned strategy and its model, each setting with its own variable.
  const envSetting: EnvSetting = (name, parse, check, expected, apply) => {
    const raw = envValue(name);
    if (raw === undefined) return;
    const value = parse(raw);
    if (check(value)) apply(value);
    else warnings.push(`PI_CONTEXT_LEDGER_${name}: expected ${expected}, got ${quoted(raw)}; ignored`);
  };
  const text = (v: string) => v;
  const num = (v: string) => decimal(v, true);
  envSetting("PLANNER_MODEL", text, isModel, "provider/model", (v) => (s.plannerModel = v));
  envSetting("PLANNED_PLANNER", text, isPlanner, "heuristic or model", (v) => (s.planned.planner = v));
  envSetting("PLANNED_RETAIN_RATIO", num, isRatio, "a ratio between 0 and 1", (v) => (s.planned.retainRatio = v));
  envSetting("PLANNED_MIN_RETAINED_TOKENS", num, isTokens, "a token count", (v) => (s.planned.minRetainedTokens = v));
  envSetting("PLANNED_MIN_SAVED_TOKENS", num, isTokens, "a token count", (v) => (s.planned.minSavedTokens = v));
  envSetting("PLANNED_TIMEOUT_MS", num, isMillis, "milliseconds (100-3600000)", (v) => (s.planned.timeoutMs = v));
  envSetting("PLANNED_MAX_OUTPUT_TOKENS", num, isCount, "a positive integer", (v) => (s.planned.maxOutputTokens = v));
  s.planned.speculation = envBool("PLANNED_SPECULATION", s.planned.speculation ?? false);
  envSetting("PLANNED_SPECULATION_RATIO", num, isRatio, "a ratio between 0 and 1", (v) => (s.planned.speculationRatio = v));
  if (envValue("BUDGET_NOTICE") !== undefined) s.budgetNotice.enabled = envBool("BUDGET_NOTICE", s.budgetNotice.enabled ?? true);
  envSetting("BUDGET_NOTICE_SHARE", num, isRatio, "a ratio between 0 and 1", (v) => (s.budgetNotice.share = v));
  resolvePreserve(s.preserve, sub("preserve"), pick, isModel, envSetting);
  const cap = envValue("CAP_PERCENT");
  if (cap !== undefined) {
    const value = cap === "off" ? 0 : decimal(cap, true);
    if (isCap(value)) s.checkpoint.capPercent = value;
    else warnings.push(`PI_CONTEXT_LEDGER_CAP_PERCENT: expected a decimal percentage from 0 to 100 (0 or off: no cap), got ${quoted(cap)}; ignored`);
  }
  return { settings: s, warnings };
}

type Pick = <T>(name: string, value: unknown, check: (v: unknown) => v is T, fallback: T) => T;
/** Read one PI_CONTEXT_LEDGER_<name> override: parsed, checked, applied, or a bounded warning. */
type EnvSetting = <T>(name: string, parse: (v: string) => unknown, check: (v: unknown) => v is T, expected: string, apply: (v: T) => void) => void;

/** `contextLedger.preserve` and its PI_CONTEXT_LEDGER_PRESERVE_* overrides (global settings only, like every key). */
function resolvePreserve(
  target: PreserveOptions,
  raw: Record<string, unknown>,
  pick: Pick,
  isModel: (v: unknown) => v is string,
  envSetting: EnvSetting,
): void {
  const isModelList = (v: unknown): v is string[] => Array.isArray(v) && v.every(isModel);
  const summaryModel = pick<string | undefined>("preserve.summaryModel", raw.summaryModel, isModel, undefined);
  if (summaryModel) target.summaryModel = summaryModel;
  const effort = pick("preserve.reasoningEffort", raw.reasoningEffort, isReasoningEffort, target.reasoningEffort);
  if (effort) target.reasoningEffort = effort;
  const retention = pick("preserve.cacheRetention", raw.cacheRetention, isCacheRetention, target.cacheRetention);
  if (retention) target.cacheRetention = retention;
  target.models = [...pick("preserve.models", raw.models, isModelList, target.models)];
  const text = (v: string) => v;
  envSetting("PRESERVE_SUMMARY_MODEL", text, isModel, "provider/model", (v) => (target.summaryModel = v));
  envSetting("PRESERVE_REASONING_EFFORT", text, isReasoningEffort, "off, minimal, low, medium, high, xhigh or max", (v) => (target.reasoningEffort = v));
  envSetting("PRESERVE_CACHE_RETENTION", text, isCacheRetention, "none, short or long", (v) => (target.cacheRetention = v));
  const list = (v: string) => (v.trim() ? v.split(",").map((m) => m.trim()) : []);
  envSetting("PRESERVE_MODELS", list, isModelList, "a comma-separated list of provider/model", (v) => (target.models = v));
}
