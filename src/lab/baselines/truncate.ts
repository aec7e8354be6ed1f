// Baseline: a sliding window that drops the oldest whole turns until the context fits under the threshold.
// When the current turn alone is too big it cuts inside it, never leaving a tool result without its call.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../log/entries.ts";
import { messageTokens } from "../metrics.ts";
import { isTurnStart, type LabSettings, type Row, thresholdOf, visibleMessages } from "../row.ts";
import { View } from "../view.ts";

/** First index to keep so that messages[start..] fit in `budget` tokens; prefers turn starts. */
export function truncationStart(messages: readonly AgentMessage[], from: number, budget: number): number {
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
  // Not even the last step fits: keep the last message that is not an orphaned tool result.
  for (let i = messages.length - 1; i >= from; i--) if (messages[i].role !== "toolResult") return i;
  return messages.length;
}

export const truncateOldest = (settings: LabSettings): Row => {
  const view = new View();
  const all: AgentMessage[] = [];
  let start = 0;
  const threshold = thresholdOf(settings);
  return {
    info: {
      id: "truncate",
      label: "truncate oldest",
      family: "baseline",
      note: "simulated sliding window: drop the oldest turns until the context fits",
    },
    view,
    append(entry: SessionEntry) {
      for (const m of visibleMessages(entry)) {
        all.push(m);
        view.push(m);
      }
    },
    beforeRequest() {
      if (view.tokens <= threshold) return undefined;
      const tokensBefore = view.tokens;
      const next = truncationStart(all, start, threshold);
      if (next <= start) return undefined;
      start = next;
      view.replaceAll(all.slice(start));
      return { kind: "truncation", tokensBefore, sideCalls: [] };
    },
  };
};
