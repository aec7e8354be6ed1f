// The one list of strategies. Setting values, their validation, the lifecycle charts and the host's dispatch all
// derive from it: a new strategy is one folder and one line here.
import type { StrategyDefinition } from "./contract.ts";
import { checkpointStrategy } from "./checkpoint/strategy.ts";
import { digestStrategy } from "./digest/strategy.ts";
import { foldStrategy } from "./fold/strategy.ts";
import { nativeStrategy } from "./native/strategy.ts";
import { plannedStrategy } from "./planned/strategy.ts";
import { preserveStrategy } from "./preserve/strategy.ts";

export const STRATEGIES = [foldStrategy, checkpointStrategy, plannedStrategy, preserveStrategy, digestStrategy, nativeStrategy] as const satisfies readonly StrategyDefinition[];

/** The strategy registered under `name`. */
export function strategyNamed(name: StrategyDefinition["name"]): StrategyDefinition {
  const found = STRATEGIES.find((s) => s.name === name);
  if (!found) throw new Error(`no strategy named ${name}`);
  return found;
}
