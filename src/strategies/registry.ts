// The one list of strategies. Setting values, their validation, the lifecycle charts and the host's dispatch all
// derive from it: a new strategy is one folder and one line here.
import type { LabRows } from "../lab/row-spec.ts";
import type { BudgetRule } from "../projection/budget.ts";
import { LEDGER_FACTS } from "./catalog.ts";
import type { SettingsSection, Strategy } from "./contract.ts";
import { checkpointStrategy } from "./checkpoint/strategy.ts";
import { digestStrategy } from "./digest/strategy.ts";
import { foldStrategy } from "./fold/strategy.ts";
import { nativeStrategy } from "./native/strategy.ts";
import { plannedStrategy } from "./planned/strategy.ts";
import { preserveStrategy } from "./preserve/strategy.ts";

/** Registry order is dispatch order: fold first, so a fold at a boundary is seen by every later strategy. */
export const STRATEGIES = [
  foldStrategy,
  checkpointStrategy,
  plannedStrategy,
  preserveStrategy,
  digestStrategy,
  nativeStrategy,
] as const;

type Registered = (typeof STRATEGIES)[number];

/** Every strategy name, from the list above. */
export type StrategyName = Registered["name"];

/** A registered strategy (with its lab rows), its options type left open, for code that treats every strategy alike. */
export type RegisteredStrategy = Strategy<unknown> & LabRows & { name: StrategyName };

/** The same list, each strategy's options type left open, for code that treats every strategy alike. */
export const PLUGINS: readonly RegisteredStrategy[] = STRATEGIES;

/** Names `contextLedger.strategy` accepts: every strategy that answers Pi's compaction (not the model's tool). */
export type ConfigurableName = Exclude<Registered, { selectable: false }>["name"];

/** The strategies `contextLedger.strategy` may name, in registry order. */
export const CONFIGURABLE: readonly RegisteredStrategy[] = PLUGINS.filter((s) => s.selectable !== false);

/** What `contextLedger.strategy` is when unset. */
export const DEFAULT_STRATEGY: ConfigurableName = checkpointStrategy.name;

/** True when `name` is a value `contextLedger.strategy` accepts. */
export function isConfigurable(name: unknown): name is ConfigurableName {
  return CONFIGURABLE.some((s) => s.name === name);
}

/** Each strategy's settings section under its name, typed from the registry. */
export type StrategyOptions = {
  [S in Registered as S extends { settings: SettingsSection<unknown> } ? S["name"] : never]: S extends {
    settings: SettingsSection<infer O>;
  }
    ? O
    : never;
};

/** True for a custom message a strategy writes to change the view (a range fact). */
export function isStrategyFact(customType: string): boolean {
  return PLUGINS.some((s) => s.facts?.[customType] !== undefined);
}

/** The strategy registered under `name`. */
export function strategyNamed(name: string): RegisteredStrategy {
  const found = PLUGINS.find((s) => s.name === name);
  if (!found) throw new Error(`no strategy named ${name}`);
  return found;
}

/** Where the strategy named `name` steps in, for the budget notice; one without its own rule acts when Pi compacts. */
export function budgetOf(name: string): BudgetRule {
  return (
    strategyNamed(name).budget ?? {
      action: "Pi summarizes older history with the model and recent turns stay as they are",
    }
  );
}

/**
 * The fact reader over every strategy's declared records, handed to the live ledger and every projection (built in
 * `catalog.ts` from the same declarations each strategy lists as `records`, so strategies can use it without a cycle).
 */
export { LEDGER_FACTS };
