// The `planned` strategy as the registry lists it.
import type { StrategyDefinition } from "../contract.ts";

export const plannedStrategy = {
  name: "planned",
  summary: "A planner ranks deletions over a numbered transcript; host code applies them.",
  routes: { turnEnd: "native", manual: "plan", threshold: "plan", overflow: "plan" },
} as const satisfies StrategyDefinition;
