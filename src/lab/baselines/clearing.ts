// Baseline: Anthropic-style tool-result clearing (the `clear_tool_uses_20250919` context edit), simulated.
// The client sends the full history; when it exceeds `trigger` input tokens, the oldest tool results are
// replaced by a placeholder except the last `keep`, provided at least `clearAtLeast` tokens are saved.
// Each request is judged on the full history, so once triggered the cleared set only grows.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../log/entries.ts";
import { messageTokens } from "../metrics.ts";
import { type LabSettings, type Row, visibleMessages } from "../row.ts";
import { View } from "../view.ts";
import { blanked } from "./tool-outputs.ts";

export const CLEARED_TEXT = "[Tool result cleared to save context]";

export const toolResultClearing = (settings: LabSettings): Row => {
  const { trigger, keep, clearAtLeast } = settings.clearing;
  const view = new View();
  const toolIndexes: number[] = [];
  const originals: AgentMessage[] = [];
  let fullTokens = 0;
  let saved = 0;
  let cleared = 0;
  // What clearing results cleared..counted would save, summed as results arrive: a request that finds the saving too
  // small leaves it for the next one, which only adds the newer results (tiny outputs never reach clearAtLeast, and
  // summing them all again at every request was quadratic).
  let counted = 0;
  let pending = 0;
  return {
    info: {
      id: "clearing",
      label: "tool-result clearing",
      family: "baseline",
      note: `simulated Anthropic-style clearing: trigger ${trigger}, keep ${keep}, clear_at_least ${clearAtLeast}`,
    },
    view,
    append(entry: SessionEntry) {
      for (const m of visibleMessages(entry)) {
        fullTokens += messageTokens(m);
        if (m.role === "toolResult") {
          toolIndexes.push(view.length);
          originals.push(m);
        }
        view.push(m);
      }
    },
    beforeRequest() {
      if (fullTokens <= trigger) return undefined;
      const target = Math.max(0, toolIndexes.length - keep);
      if (target <= cleared) return undefined;
      for (; counted < target; counted++)
        pending += messageTokens(originals[counted]) - messageTokens(blanked(originals[counted], CLEARED_TEXT));
      if (saved + pending < clearAtLeast) return undefined;
      const tokensBefore = view.tokens;
      const changes: [number, AgentMessage][] = [];
      for (let i = cleared; i < target; i++) changes.push([toolIndexes[i], blanked(originals[i], CLEARED_TEXT)]);
      view.replaceMany(changes);
      cleared = target;
      saved += pending;
      pending = 0;
      return { kind: "clearing", tokensBefore, sideCalls: [] };
    },
  };
};
