// The `checkpoint` strategy as the registry lists it.
import type { StrategyDefinition } from "../contract.ts";

export const checkpointStrategy = {
  name: "checkpoint",
  summary: "A deterministic checkpoint of the compacted region, with no model call (the default).",
  routes: { turnEnd: "native", manual: "plan", threshold: "plan", overflow: "plan" },
} as const satisfies StrategyDefinition;
