// Baseline: a sliding window that drops the oldest whole turns until the context fits under the threshold.
// When the current turn alone is too big it cuts inside it, never leaving a tool result without its call.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../log/entries.ts";
import { messageTokens } from "../metrics.ts";
import { isTurnStart, type LabSettings, type Row, thresholdOf, visibleMessages } from "../row.ts";
import { View } from "../view.ts";

/**
 * The row's messages as it saw them, with what its cut needs kept as they arrive: running token sums and the turn
 * starts. The cut is then two binary searches instead of a walk back over the whole view at every request over the
 * threshold (on 10 MB of tiny steps the view held 25k messages at each of 15k requests).
 */
export class TruncationIndex {
  readonly messages: AgentMessage[] = [];
  /** sums[i]: tokens of messages[0..i). */
  private readonly sums: number[] = [0];
  /** Indexes of the turn starts, ascending. */
  private readonly turns: number[] = [];

  push(message: AgentMessage): void {
    if (isTurnStart(message)) this.turns.push(this.messages.length);
    this.messages.push(message);
    this.sums.push(this.sums[this.sums.length - 1] + messageTokens(message));
  }

  /**
   * First index to keep, at or after `from`, so that the messages from it fit in `budget` tokens: the earliest turn
   * start that fits, else the earliest message that fits and is not a tool result; when not even the last step fits,
   * the last message that is not an orphaned tool result.
   */
  start(from: number, budget: number): number {
    const n = this.messages.length;
    // The earliest index whose suffix fits: sums[n] - sums[i] <= budget, the sums never decreasing.
    let low = from;
    let high = n;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.sums[n] - this.sums[mid] <= budget) high = mid;
      else low = mid + 1;
    }
    if (low < n) {
      const turn = firstAtOrAfter(this.turns, low);
      if (turn !== undefined) return turn;
      for (let i = low; i < n; i++) if (this.messages[i].role !== "toolResult") return i;
    }
    for (let i = n - 1; i >= from; i--) if (this.messages[i].role !== "toolResult") return i;
    return n;
  }
}

/** The first value of ascending `values` at or after `min`. */
function firstAtOrAfter(values: readonly number[], min: number): number | undefined {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (values[mid] >= min) high = mid;
    else low = mid + 1;
  }
  return values[low];
}

export const truncateOldest = (settings: LabSettings): Row => {
  const view = new View();
  const all = new TruncationIndex();
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
      const next = all.start(start, threshold);
      if (next <= start) return undefined;
      // The view holds the messages from `start` on: the cut drops its oldest.
      view.dropFirst(next - start);
      start = next;
      return { kind: "truncation", tokensBefore, sideCalls: [] };
    },
  };
};
