// Baseline: observation masking (Lindenbauer et al. 2025, "The Complexity Trap"): only the latest M tool
// outputs stay; older ones become a one-line placeholder. It acts on every step, with no trigger.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../log/entries.ts";
import { type LabSettings, type Row, visibleMessages } from "../row.ts";
import { View } from "../view.ts";
import { blanked, outputLines } from "./tool-outputs.ts";

export const observationMasking = (settings: LabSettings): Row => {
  const view = new View();
  const toolIndexes: number[] = [];
  const originals: AgentMessage[] = [];
  let masked = 0;
  const keep = settings.maskKeep;
  return {
    info: {
      id: "masking",
      label: `masking (last ${keep})`,
      family: "baseline",
      note: `simulated observation masking: keep the last ${keep} tool outputs (Lindenbauer et al. 2025)`,
    },
    view,
    append(entry: SessionEntry) {
      for (const m of visibleMessages(entry)) {
        if (m.role === "toolResult") {
          toolIndexes.push(view.length);
          originals.push(m);
        }
        view.push(m);
      }
    },
    beforeRequest() {
      if (toolIndexes.length - masked <= keep) return undefined;
      const tokensBefore = view.tokens;
      const changes: [number, AgentMessage][] = [];
      for (; toolIndexes.length - masked > keep; masked++) {
        const original = originals[masked];
        changes.push([
          toolIndexes[masked],
          blanked(original, `[Old tool output omitted: ${outputLines(original)} lines]`),
        ]);
      }
      view.replaceMany(changes);
      return { kind: "masking", tokensBefore, sideCalls: [] };
    },
  };
};
