// The model-visible timeline behind `context_timeline`: entries in context order with ids, roles, labels and
// a marker on entries that can no longer be fold targets. Pure: no I/O.
import { textOf, type SessionEntry } from "../../log/entries.ts";
import { contextOrder, contextStartIndex, type FoldView } from "./targets.ts";

const PREVIEW = 80;
export const NOT_A_TARGET = "compacted: not a compact target";

function preview(entry: SessionEntry): { role: string; text: string } | undefined {
  switch (entry.type) {
    case "message": {
      const m = entry.message as { role: string; content?: unknown; toolName?: string; command?: string };
      if (m.role === "system") return undefined;
      if (m.role === "assistant") {
        const blocks = Array.isArray(m.content) ? (m.content as { type: string; name?: string }[]) : [];
        const calls = blocks.filter((b) => b.type === "toolCall").map((b) => b.name);
        const text = textOf(m.content);
        return { role: "assistant", text: [text, calls.length ? `[calls: ${calls.join(", ")}]` : ""].filter(Boolean).join(" ") };
      }
      if (m.role === "toolResult") return { role: `toolResult(${m.toolName ?? "?"})`, text: textOf(m.content) };
      if (m.role === "bashExecution") return { role: "bash", text: String(m.command ?? "") };
      return { role: m.role, text: textOf(m.content) };
    }
    case "custom_message":
      return { role: `custom(${entry.customType})`, text: textOf(entry.content) };
    case "compaction":
      return { role: "compaction", text: entry.summary };
    case "branch_summary":
      return { role: "branchSummary", text: entry.summary };
    default:
      return undefined;
  }
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > PREVIEW ? `${flat.slice(0, PREVIEW)}…` : flat;
}

/** Render the timeline in context order (oldest first). `root` is always listed first and never marked. */
export function renderTimeline(view: FoldView): string {
  const start = contextStartIndex(view);
  const lines = ["root — start of the current context (always a valid target)"];
  // Context order: the latest compaction's summary leads the context, ahead of the tail it kept.
  for (const index of contextOrder(view)) {
    const entry = view.path[index];
    const shown = preview(entry);
    if (!shown) continue;
    const label = view.labels[entry.id];
    const marks: string[] = [];
    if (label) marks.push(`checkpoint "${label}"`);
    const revokedBy = view.revokedBy?.(entry.id);
    if (revokedBy) marks.push(`revoked by restore ${revokedBy}`);
    // A compaction entry itself stays in context even though it sits after the kept range it starts.
    if (entry.type !== "compaction" && (index < start || view.isFolded(entry.id))) marks.push(NOT_A_TARGET);
    lines.push(`${entry.id} ${shown.role}: ${oneLine(shown.text)}${marks.length ? ` (${marks.join("; ")})` : ""}`);
  }
  return lines.join("\n");
}
