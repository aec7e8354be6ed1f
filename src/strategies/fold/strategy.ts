// The `fold` strategy as the registry lists it.
import type { StrategyDefinition } from "../contract.ts";

export const foldStrategy = {
  name: "fold",
  summary: "Folds the model asks for with context_compact: its summary replaces the history after a named position.",
  // A fold is a tool request; it never answers Pi's compaction.
  routes: { turnEnd: "plan", manual: "native", threshold: "native", overflow: "native" },
} as const satisfies StrategyDefinition;
