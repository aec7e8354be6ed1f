// Baseline: OpenCode-style prune, simulated. After each user turn it walks back from the newest message,
// skipping the last two user turns, adds up tool-output tokens, and marks every output beyond the newest
// `protect` tokens as cleared, but only when that saves more than `minimum` tokens. It stops at outputs
// already cleared, so each prune only reaches back to the previous one.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../log/entries.ts";
import { messageTokens } from "../metrics.ts";
import { type LabSettings, type Row, visibleMessages } from "../row.ts";
import { View } from "../view.ts";
import { blanked } from "./tool-outputs.ts";

export const PRUNED_TEXT = "[Old tool result content cleared]";
const PROTECTED_TOOLS = new Set(["skill"]);

/** Indexes the prune would clear in `messages`, or none when the saving is too small. */
export function pruneTargets(
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

export const opencodePrune = (settings: LabSettings): Row => {
  const { protect, minimum } = settings.prune;
  const view = new View();
  const originals: AgentMessage[] = [];
  const pruned = new Set<number>();
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
        view.push(m);
      }
    },
    beforeRequest() {
      if (!turnEnded) return undefined;
      turnEnded = false;
      const targets = pruneTargets(originals, pruned, protect, minimum);
      if (!targets.length) return undefined;
      const tokensBefore = view.tokens;
      for (const i of targets) pruned.add(i);
      view.replaceMany(targets.map((i) => [i, blanked(originals[i], PRUNED_TEXT)] as const));
      return { kind: "prune", tokensBefore, sideCalls: [] };
    },
  };
};
