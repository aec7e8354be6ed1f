// The `preserve` strategy as the registry lists it.
import type { StrategyDefinition } from "../contract.ts";

export const preserveStrategy = {
  name: "preserve",
  summary: "Dialogue stays verbatim; older tool traffic becomes byte-stable, cache-friendly summaries at step boundaries.",
  // The window is kept at step boundaries, so Pi's threshold compaction is declined; an overflow already failed a
  // request, and only Pi's summary can shrink a context that is all dialogue.
  routes: { turnEnd: "plan", manual: "plan", threshold: "cancel", overflow: "native" },
} as const satisfies StrategyDefinition;
