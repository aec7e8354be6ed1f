// The compaction planners one extension instance answers `session_before_compact` with. Each instance builds its
// own, bound to its own settings, so two instances in one process (two sessions, tests) never share planners.
// A configured strategy missing here falls back to Pi's native compaction with a warning, never to a no-op.
import type { CompactionStrategyName } from "../log/entries.ts";
import type { StrategyPlanner } from "../strategies/contract.ts";

export type PlannerRegistry = ReadonlyMap<CompactionStrategyName, StrategyPlanner>;

/** Index planners by the strategy name they serve. */
export function plannerRegistry(planners: readonly StrategyPlanner[]): PlannerRegistry {
  return new Map(planners.map((p) => [p.name, p]));
}
