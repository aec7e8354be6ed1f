// The `digest` strategy as the registry lists it.
import type { StrategyDefinition } from "../contract.ts";

export const digestStrategy = {
  name: "digest",
  summary: "Older tool steps become deterministic digests at step boundaries, with no model call.",
  // Only Pi's summary can shrink a context that overflowed on dialogue.
  routes: { turnEnd: "plan", manual: "plan", threshold: "plan", overflow: "native" },
} as const satisfies StrategyDefinition;
