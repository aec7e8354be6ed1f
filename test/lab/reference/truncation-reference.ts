// The truncate baseline's cut as it was first written: a walk back from the newest message, adding up tokens. The
// row now finds the same cut from running sums; the property test holds the two to the same answer.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { messageTokens } from "../../../src/lab/metrics.ts";
import { isTurnStart } from "../../../src/lab/row.ts";

export function referenceTruncationStart(messages: readonly AgentMessage[], from: number, budget: number): number {
  let suffix = 0;
  let fitTurn = -1;
  let fitStep = -1;
  for (let i = messages.length - 1; i >= from; i--) {
    suffix += messageTokens(messages[i]);
    if (suffix > budget) break;
    if (isTurnStart(messages[i])) fitTurn = i;
    if (messages[i].role !== "toolResult") fitStep = i;
  }
  if (fitTurn >= 0) return fitTurn;
  if (fitStep >= 0) return fitStep;
  for (let i = messages.length - 1; i >= from; i--) if (messages[i].role !== "toolResult") return i;
  return messages.length;
}
