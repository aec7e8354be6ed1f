// The `native` strategy as the registry lists it.
import type { StrategyDefinition } from "../contract.ts";

export const nativeStrategy = {
  name: "native",
  summary: "Pi's own compaction, unchanged.",
  routes: { turnEnd: "native", manual: "native", threshold: "native", overflow: "native" },
} as const satisfies StrategyDefinition;
