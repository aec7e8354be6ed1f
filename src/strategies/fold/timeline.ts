// The model-visible timeline behind `context_timeline`: entries in context order with ids, roles, labels and
// a marker on entries that can no longer be fold targets. Pure: no I/O.
import { quoted } from "../../log/display.ts";
import { textField, textOf, type SessionEntry } from "../../log/entries.ts";
import { decodeCursor, encodeCursor } from "../../recall/cursor.ts";
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
        return {
          role: "assistant",
          text: [text, calls.length ? `[calls: ${calls.join(", ")}]` : ""].filter(Boolean).join(" "),
        };
      }
      if (m.role === "toolResult") return { role: `toolResult(${m.toolName ?? "?"})`, text: textOf(m.content) };
      if (m.role === "bashExecution") return { role: "bash", text: String(m.command ?? "") };
      return { role: m.role, text: textOf(m.content) };
    }
    case "custom_message":
      return { role: `custom(${entry.customType})`, text: textOf(entry.content) };
    case "compaction":
      return { role: "compaction", text: textField(entry.summary) };
    case "branch_summary":
      return { role: "branchSummary", text: textField(entry.summary) };
    default:
      return undefined;
  }
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > PREVIEW ? `${flat.slice(0, PREVIEW)}…` : flat;
}

/** One timeline row per conversation entry, in context order (oldest first; `root` is not a row). */
export function timelineRows(view: FoldView): { id: string; line: string }[] {
  const start = contextStartIndex(view);
  const rows: { id: string; line: string }[] = [];
  // Context order: the latest compaction's summary leads the context, ahead of the tail it kept.
  for (const index of contextOrder(view)) {
    const entry = view.path[index];
    const shown = preview(entry);
    if (!shown) continue;
    const label = view.labels[entry.id];
    const marks: string[] = [];
    if (label) marks.push(`label ${quoted(label)}`);
    const revokedBy = view.revokedBy?.(entry.id);
    if (revokedBy) marks.push(`revoked by restore ${revokedBy}`);
    if (view.isPinned?.(entry.id)) marks.push("pinned");
    // A compaction entry itself stays in context even though it sits after the kept range it starts.
    if (entry.type !== "compaction" && (index < start || view.isHidden(entry.id))) marks.push(NOT_A_TARGET);
    rows.push({
      id: entry.id,
      line: `${entry.id} ${shown.role}: ${oneLine(shown.text)}${marks.length ? ` (${marks.join("; ")})` : ""}`,
    });
  }
  return rows;
}

const ROOT_LINE = "root — start of the current context (always a valid target)";

/** Render the whole timeline in context order (oldest first). `root` is always listed first and never marked. */
export function renderTimeline(view: FoldView): string {
  return [ROOT_LINE, ...timelineRows(view).map((r) => r.line)].join("\n");
}

/** Bounds of one timeline page. */
export const TIMELINE_PAGE = { rows: 100, chars: 12_000 };

/**
 * One page of the timeline. The first page holds the newest rows, where compact targets are (entries still in
 * context), with `root` above them; each cursor leads to the page of rows just before. Rows within a page are
 * oldest first. A timeline that fits one page is exactly {@link renderTimeline}. Pure.
 */
export function renderTimelinePage(
  view: FoldView,
  cursor?: string,
  bounds = TIMELINE_PAGE,
): { text: string; nextCursor?: string } | { error: string } {
  const rows = timelineRows(view);
  let end = rows.length;
  if (cursor) {
    const decoded = decodeCursor("t", "timeline", cursor, "context_timeline");
    if (typeof decoded === "string") return { error: decoded };
    if (decoded.ordinal < 1 || decoded.ordinal > rows.length || rows[decoded.ordinal - 1].id !== decoded.anchor) {
      return {
        error:
          "the timeline changed since this cursor was issued (e.g. /tree); call context_timeline again without a cursor",
      };
    }
    end = decoded.ordinal;
  }
  // Fill backwards from `end` within both bounds; a single row always fits (rows are one short line each).
  let start = end;
  let chars = 0;
  while (
    start > 0 &&
    end - start < bounds.rows &&
    (start === end || chars + rows[start - 1].line.length + 1 <= bounds.chars)
  ) {
    chars += rows[start - 1].line.length + 1;
    start--;
  }
  const lines = rows.slice(start, end).map((r) => r.line);
  if (!cursor && start === 0) return { text: [ROOT_LINE, ...lines].join("\n") };
  const nextCursor =
    start > 0 ? encodeCursor("t", "timeline", { ordinal: start, position: 0, anchor: rows[start - 1].id }) : undefined;
  const head = cursor
    ? `Timeline entries ${start + 1}–${end} of ${rows.length} (earlier page, oldest first):`
    : `${ROOT_LINE}\nTimeline entries ${start + 1}–${end} of ${rows.length}, the newest (oldest first):`;
  const foot = nextCursor
    ? `\nEarlier entries: call context_timeline with cursor "${nextCursor}".`
    : "\nThis is the start of the timeline.";
  return { text: `${head}\n${lines.join("\n")}${foot}`, ...(nextCursor ? { nextCursor } : {}) };
}
