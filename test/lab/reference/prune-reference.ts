// The OpenCode prune baseline's targets as first written: at each user turn a walk back from the newest message to
// the last pruned output. With small outputs nothing is pruned for thousands of turns, so each walk reached back
// further (quadratic until the first prune). The row now keeps running sums; the property test holds the two to
// the same answer.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { messageTokens } from "../../../src/lab/metrics.ts";

const PROTECTED_TOOLS = new Set(["skill"]);

export function referencePruneTargets(
  messages: readonly AgentMessage[],
  pruned: ReadonlySet<number>,
  protect: number,
  minimum: number,
): number[] {
  let turns = 0;
  let total = 0;
  let saving = 0;
  const targets: number[] = [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === "user") turns++;
    if (turns < 2) continue;
    if (m.role === "compactionSummary") break;
    if (m.role !== "toolResult" || PROTECTED_TOOLS.has(String((m as { toolName?: string }).toolName))) continue;
    if (pruned.has(i)) break;
    const tokens = messageTokens(m);
    total += tokens;
    if (total > protect) {
      saving += tokens;
      targets.push(i);
    }
  }
  return saving > minimum ? targets : [];
}
