// A deliberately naive model of what the model can currently see, used by the generator to pick legal fold
// targets. It is independent of src/projection (sets and linear scans, no incremental structures), so a
// generator bug and a projection bug are unlikely to cancel out.
import { buildContextEntries, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { LedgerType, type FoldDetails } from "../../src/log/entries.ts";

/** Entries a fold rule may hide: conversation messages and custom messages. */
export function isFoldableEntry(entry: SessionEntry): boolean {
  if (entry.type === "custom_message") return true;
  if (entry.type !== "message") return false;
  const role = entry.message.role;
  return role === "user" || role === "assistant" || role === "toolResult";
}

function foldDetails(entry: SessionEntry): FoldDetails | undefined {
  if (entry.type !== "custom_message" || entry.customType !== LedgerType.fold) return undefined;
  return entry.details as FoldDetails;
}

function toolCallIds(entry: SessionEntry | undefined): Set<string> {
  const ids = new Set<string>();
  if (entry?.type === "message" && entry.message.role === "assistant") {
    for (const block of entry.message.content) if (block.type === "toolCall") ids.add(block.id);
  }
  return ids;
}

/**
 * Ids on `path` that fold rules on `path` hide. Each rule hides foldable entries strictly after `afterId`
 * (or from the start) through `throughId`, except tool results answering `keepToolResultsOf`'s calls.
 */
export function naiveHiddenIds(path: readonly SessionEntry[]): Set<string> {
  const hidden = new Set<string>();
  const ids = path.map((entry) => entry.id);
  for (const entry of path) {
    const details = foldDetails(entry);
    if (!details) continue;
    const { afterId, throughId, keepToolResultsOf } = details.range;
    const start = afterId === null ? 0 : ids.indexOf(afterId) + 1;
    const end = ids.indexOf(throughId);
    if ((afterId !== null && start === 0) || end < 0) continue;
    const kept = toolCallIds(path.find((e) => e.id === keepToolResultsOf));
    for (let i = start; i <= end; i++) {
      const candidate = path[i];
      if (!isFoldableEntry(candidate)) continue;
      if (candidate.type === "message" && candidate.message.role === "toolResult" && kept.has(candidate.message.toolCallId)) continue;
      hidden.add(candidate.id);
    }
  }
  return hidden;
}

/**
 * Entries that are legal fold targets at the end of `path`: foldable, in Pi's compaction-aware context,
 * not omitted by a context edit and not hidden by an earlier fold. Returned in path order.
 */
export function visibleFoldTargets(path: readonly SessionEntry[]): SessionEntry[] {
  if (path.length === 0) return [];
  const context = new Set(buildContextEntries(path.slice(), path[path.length - 1].id).map((entry) => entry.id));
  const omitted = new Map<string, boolean>();
  for (const entry of path) {
    if (entry.type === "context_edit" && context.has(entry.id)) omitted.set(entry.targetId, entry.replacement === null);
  }
  const hidden = naiveHiddenIds(path);
  return path.filter((entry) => context.has(entry.id) && isFoldableEntry(entry) && !hidden.has(entry.id) && omitted.get(entry.id) !== true);
}
