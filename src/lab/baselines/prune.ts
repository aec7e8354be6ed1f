// Baseline: OpenCode-style prune, simulated. After each user turn it walks back from the newest message,
// skipping the last two user turns, adds up tool-output tokens, and marks every output beyond the newest
// `protect` tokens as cleared, but only when that saves more than `minimum` tokens. It stops at outputs
// already cleared, so each prune only reaches back to the previous one. The walk is done on running sums
// (PruneIndex), so a turn costs the same however far back the last prune is.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../log/entries.ts";
import { messageTokens } from "../metrics.ts";
import { type LabSettings, type Row, visibleMessages } from "../row.ts";
import { View } from "../view.ts";
import { blanked } from "./tool-outputs.ts";

export const PRUNED_TEXT = "[Old tool result content cleared]";
const PROTECTED_TOOLS = new Set(["skill"]);

/**
 * The outputs a prune may clear, with running token sums, so that each turn's targets cost a binary search and
 * not a walk back to the last prune: with small outputs nothing is pruned for thousands of turns, and the walk
 * reached further back at each of them.
 */
export class PruneIndex {
  /** Message indexes of the outputs that count (tool results of unprotected tools), oldest first. */
  private readonly outputs: number[] = [];
  /** `sums[j]`: the tokens of outputs[0..j-1]. */
  private readonly sums: number[] = [0];
  /** Message indexes of the compaction summaries: a prune never reaches back past one. */
  private readonly summaries: number[] = [];
  /** The newest two user messages' indexes: the last two turns are never pruned. */
  private lastUser = -1;
  private userBefore = -1;
  private length = 0;
  /** The first output not yet pruned, and the first one from the protected turns on. */
  private from = 0;
  private upTo = 0;
  /** The first summary from the protected turns on. */
  private summariesBefore = 0;

  push(message: AgentMessage): void {
    const i = this.length++;
    if (message.role === "user") {
      this.userBefore = this.lastUser;
      this.lastUser = i;
    } else if (message.role === "compactionSummary") this.summaries.push(i);
    else if (
      message.role === "toolResult" &&
      !PROTECTED_TOOLS.has(String((message as { toolName?: string }).toolName))
    ) {
      this.outputs.push(i);
      this.sums.push(this.sums[this.sums.length - 1] + messageTokens(message));
    }
  }

  /**
   * The message indexes the prune would clear now, newest first, or none when the saving is too small: outputs
   * older than the last two turns and newer than the last prune and the last summary, beyond the newest `protect`
   * tokens of them.
   */
  targets(protect: number, minimum: number): number[] {
    if (this.userBefore < 0) return [];
    const end = this.userBefore;
    while (this.upTo < this.outputs.length && this.outputs[this.upTo] < end) this.upTo++;
    while (this.summariesBefore < this.summaries.length && this.summaries[this.summariesBefore] < end)
      this.summariesBefore++;
    const summary = this.summariesBefore > 0 ? this.summaries[this.summariesBefore - 1] : -1;
    while (this.from < this.upTo && this.outputs[this.from] < summary) this.from++;
    // The newest output whose tokens, with those of every newer one up to `end`, pass the protection.
    const limit = this.sums[this.upTo] - protect;
    let lo = this.from;
    let hi = this.upTo;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sums[mid] < limit) lo = mid + 1;
      else hi = mid;
    }
    const last = lo - 1;
    if (last < this.from || this.sums[last + 1] - this.sums[this.from] <= minimum) return [];
    const out: number[] = [];
    for (let j = last; j >= this.from; j--) out.push(this.outputs[j]);
    return out;
  }

  /** Record that `targets` (as `targets` returned them) were cleared: the next prune stops short of them. */
  pruned(targets: readonly number[]): void {
    if (!targets.length) return;
    const newest = targets[0];
    while (this.from < this.outputs.length && this.outputs[this.from] <= newest) this.from++;
  }
}

export const opencodePrune = (settings: LabSettings): Row => {
  const { protect, minimum } = settings.prune;
  const view = new View();
  const originals: AgentMessage[] = [];
  const index = new PruneIndex();
  let turnEnded = false;
  return {
    info: {
      id: "prune",
      label: "OpenCode prune",
      family: "baseline",
      note: `simulated OpenCode prune: protect the last ${protect} tool-output tokens, prune only if >${minimum} saved (summary step not modelled)`,
    },
    view,
    append(entry: SessionEntry) {
      for (const m of visibleMessages(entry)) {
        if (m.role === "user" && originals.length) turnEnded = true;
        originals.push(m);
        index.push(m);
        view.push(m);
      }
    },
    beforeRequest() {
      if (!turnEnded) return undefined;
      turnEnded = false;
      const targets = index.targets(protect, minimum);
      if (!targets.length) return undefined;
      const tokensBefore = view.tokens;
      index.pruned(targets);
      view.replaceMany(targets.map((i) => [i, blanked(originals[i], PRUNED_TEXT)] as const));
      return { kind: "prune", tokensBefore, sideCalls: [] };
    },
  };
};
