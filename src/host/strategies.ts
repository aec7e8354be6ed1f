// Registry of compaction strategies that answer `session_before_compact`. A strategy missing here falls back
// to Pi's native compaction with a warning, never to a silent no-op.
import type { CompactionStrategyName } from "../log/entries.ts";
import type { StrategyPlanner } from "../strategies/contract.ts";

const planners = new Map<CompactionStrategyName, StrategyPlanner>();

export function registerStrategy(planner: StrategyPlanner): void {
  planners.set(planner.name, planner);
}

export function getStrategy(name: CompactionStrategyName): StrategyPlanner | undefined {
  return planners.get(name);
}
