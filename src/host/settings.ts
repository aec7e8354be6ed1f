// Settings of the package: the `contextLedger` key of the GLOBAL Pi settings file, then PI_CONTEXT_LEDGER_*
// environment overrides. Project-local settings are never read: a repository must not be able to pick the
// model that sees transcripts or switch protections off.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { quoted } from "../log/display.ts";
import { DEFAULT_NOTICE_SHARE } from "../projection/budget.ts";
import { DEFAULT_PIN_SHARE } from "../projection/pins.ts";
import type { RecallSettings } from "../recall/settings.ts";
import type { SettingsReader, SharedSettings } from "../strategies/contract.ts";
import {
  CONFIGURABLE,
  DEFAULT_STRATEGY,
  isConfigurable,
  PLUGINS,
  type ConfigurableName,
  type StrategyOptions,
} from "../strategies/registry.ts";

/** Settings of the package itself; each strategy's own section is declared by the strategy (see the registry). */
export interface CoreSettings extends SharedSettings {
  /** What /compact, threshold and overflow compaction do. */
  strategy: ConfigurableName;
  /** Recall tools (context_lookup, context_list_entries, context_grep, context_show_entry). */
  recallTools: boolean;
  recall: RecallSettings;
  /** Attach the Stately inspector to every lifecycle actor (message bodies are stripped). */
  inspect: boolean;
  /** One short hidden notice to the model when usage passes `share` of the strategy's threshold; `enabled` unset
   * means on, except for a strategy that is quiet by default. */
  budgetNotice: { enabled?: boolean; share: number };
  /** Pins: the pinned entries' tokens stay within `maxShare` of the model's context window. */
  pins: { maxShare: number };
}

/** The package's settings and every strategy's section, under the strategy's name. */
export type LedgerSettings = CoreSettings & StrategyOptions;

/** Every strategy's defaults, under its name (the mapped type is the registry's, so the shape is right by construction). */
function strategyDefaults(): StrategyOptions {
  return Object.fromEntries(
    PLUGINS.flatMap((s) => (s.settings ? [[s.name, structuredClone(s.settings.defaults)]] : [])),
  ) as StrategyOptions;
}

export const DEFAULT_SETTINGS: LedgerSettings = {
  strategy: DEFAULT_STRATEGY,
  foldTools: true,
  recallTools: true,
  recall: { grepMaxResults: 8, grepMaxChars: 12_000, lookupTurnBudget: 10 },
  ...strategyDefaults(),
  inspect: false,
  budgetNotice: { share: DEFAULT_NOTICE_SHARE },
  pins: { maxShare: DEFAULT_PIN_SHARE },
};

/** Values `contextLedger.strategy` accepts, from the registry. */
export const STRATEGY_VALUES: readonly string[] = CONFIGURABLE.map((s) => s.name);

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
      // V8's message quotes the bytes around the error: a binary file would put them raw into the warning.
      const reason = error instanceof Error ? error.message : String(error);
      warnings.push(`${file}: not valid JSON: ${quoted(reason, 160)}; using defaults`);
    }
  }
  return resolveSettings(raw, env, warnings);
}

/** Pure part of {@link loadSettings}: validate a `contextLedger` value and apply environment overrides. */
export function resolveSettings(raw: unknown, env: NodeJS.ProcessEnv, warnings: string[] = []): LoadedSettings {
  const s: LedgerSettings = structuredClone(DEFAULT_SETTINGS);
  const obj = raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  if (raw !== undefined && !(raw && typeof raw === "object" && !Array.isArray(raw)))
    warnings.push("contextLedger must be an object; using defaults");

  const pick = <T>(name: string, value: unknown, check: (v: unknown) => v is T, fallback: T): T => {
    if (value === undefined) return fallback;
    if (check(value)) return value;
    warnings.push(`contextLedger.${name}: invalid value ${quoted(value)}; using ${quoted(fallback)}`);
    return fallback;
  };
  const isStrategy = isConfigurable;
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

  if (obj.strategy !== undefined && !isStrategy(obj.strategy))
    warnings.push(
      `contextLedger.strategy: unknown strategy ${quoted(obj.strategy)} (expected ${STRATEGY_VALUES.join(", ")}); using ${s.strategy}`,
    );
  else s.strategy = pick("strategy", obj.strategy, isStrategy, s.strategy);
  s.foldTools = pick("foldTools", obj.foldTools, isBool, s.foldTools);
  s.recallTools = pick("recallTools", obj.recallTools, isBool, s.recallTools);
  s.inspect = pick("inspect", obj.inspect, isBool, s.inspect);
  const recall = sub("recall");
  s.recall.grepMaxResults = pick("recall.grepMaxResults", recall.grepMaxResults, isCount, s.recall.grepMaxResults);
  s.recall.grepMaxChars = pick("recall.grepMaxChars", recall.grepMaxChars, isCount, s.recall.grepMaxChars);
  s.recall.lookupTurnBudget = pick(
    "recall.lookupTurnBudget",
    recall.lookupTurnBudget,
    isCount,
    s.recall.lookupTurnBudget,
  );
  const model = pick<string | undefined>("recall.lookupModel", recall.lookupModel, isModel, undefined);
  if (model) s.recall.lookupModel = model;
  for (const key of ["lookupAttempts", "lookupResultChars", "lookupAnswerChars", "listPageSize"] as const) {
    const value = pick<number | undefined>(`recall.${key}`, recall[key], isCount, undefined);
    if (value !== undefined) s.recall[key] = value;
  }
  const crossSession = pick<boolean | undefined>("recall.crossSession", recall.crossSession, isBool, undefined);
  if (crossSession !== undefined) s.recall.crossSession = crossSession;
  const plannerModel = pick<string | undefined>("plannerModel", obj.plannerModel, isModel, undefined);
  if (plannerModel) s.plannerModel = plannerModel;
  const isRatio = (v: unknown): v is number => typeof v === "number" && v > 0 && v < 1;
  const budget = sub("budgetNotice");
  const noticesOn = pick<boolean | undefined>("budgetNotice.enabled", budget.enabled, isBool, undefined);
  if (noticesOn !== undefined) s.budgetNotice.enabled = noticesOn;
  s.budgetNotice.share = pick("budgetNotice.share", budget.share, isRatio, s.budgetNotice.share);
  // A share of the window up to all of it; 0 would refuse every pin, which switching the tools off says better.
  const isShare = (v: unknown): v is number => typeof v === "number" && v > 0 && v <= 1;
  s.pins.maxShare = pick("pins.maxShare", sub("pins").maxShare, isShare, s.pins.maxShare);

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
    else
      warnings.push(
        `PI_CONTEXT_LEDGER_STRATEGY: unknown strategy ${quoted(strategy)} (expected ${STRATEGY_VALUES.join(", ")}); using ${s.strategy}`,
      );
  }
  s.foldTools = envBool("FOLD_TOOLS", s.foldTools);
  s.recallTools = envBool("RECALL_TOOLS", s.recallTools);
  s.inspect = envBool("INSPECT", s.inspect);
  // Decimal digits only: Number() would also take hex, binary, exponents, blanks and the empty string.
  const decimal = (v: string, fraction: boolean): number =>
    (fraction ? /^\d{1,12}(\.\d{1,6})?$/ : /^\d{1,12}$/).test(v) ? Number(v) : Number.NaN;
  const envCount = (name: string, apply: (n: number) => void) => {
    const v = envValue(name);
    if (v === undefined) return;
    if (isCount(decimal(v, false))) apply(Number(v));
    else
      warnings.push(`PI_CONTEXT_LEDGER_${name}: expected a whole number from 1 to 1000000, got ${quoted(v)}; ignored`);
  };
  if (envValue("RECALL_CROSS_SESSION") !== undefined)
    s.recall.crossSession = envBool("RECALL_CROSS_SESSION", s.recall.crossSession ?? true);
  envCount("GREP_MAX_RESULTS", (n) => (s.recall.grepMaxResults = n));
  envCount("GREP_MAX_CHARS", (n) => (s.recall.grepMaxChars = n));
  envCount("LOOKUP_TURN_BUDGET", (n) => (s.recall.lookupTurnBudget = n));
  const lookupModel = envValue("LOOKUP_MODEL");
  if (lookupModel !== undefined) {
    if (isModel(lookupModel)) s.recall.lookupModel = lookupModel;
    else warnings.push(`PI_CONTEXT_LEDGER_LOOKUP_MODEL: expected provider/model, got ${quoted(lookupModel)}; ignored`);
  }
  // Each setting with its own variable.
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
  if (envValue("BUDGET_NOTICE") !== undefined)
    s.budgetNotice.enabled = envBool("BUDGET_NOTICE", s.budgetNotice.enabled ?? true);
  envSetting("BUDGET_NOTICE_SHARE", num, isRatio, "a ratio between 0 and 1", (v) => (s.budgetNotice.share = v));
  envSetting("PINS_MAX_SHARE", num, isShare, "a share above 0, at most 1", (v) => (s.pins.maxShare = v));
  // Each strategy's own section, as the strategy declares it.
  const read: SettingsReader = {
    pick,
    env: envSetting,
    envBool,
    envValue,
    decimal,
    quote: quoted,
    warn: (message) => warnings.push(message),
    isModel,
    isBool,
    isCount,
    isRatio,
  };
  for (const strategy of PLUGINS)
    if (strategy.settings)
      strategy.settings.resolve(Reflect.get(s, strategy.name) as unknown, sub(strategy.name), read);
  return { settings: s, warnings };
}

/** Read one PI_CONTEXT_LEDGER_<name> override: parsed, checked, applied, or a bounded warning. */
type EnvSetting = <T>(
  name: string,
  parse: (v: string) => unknown,
  check: (v: unknown) => v is T,
  expected: string,
  apply: (v: T) => void,
) => void;
