// Helpers shared by property tests that walk generated ledgers: the active path, assistant batches, and the
// paired-tool-results check (invariant 1).
import { expect } from "vitest";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { branchTo } from "../../src/log/branch.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { LedgerType } from "../../src/strategies/catalog.ts";

/** The active path, root to leaf. */
export function pathOf(entries: readonly SessionEntry[], leafId: string | null): SessionEntry[] {
  return leafId ? branchTo(entries, leafId) : [];
}

/** Entries that change earlier context by design (a compaction, a context edit, a fold): a prefix may differ after them. */
export function rewritesHistory(entry: SessionEntry): boolean {
  return (
    entry.type === "compaction" ||
    entry.type === "context_edit" ||
    (entry.type === "custom_message" && entry.customType === LedgerType.fold)
  );
}

/** End of the batch started by the assistant at `i`: its trailing tool results. */
export function batchEnd(path: readonly SessionEntry[], i: number): number {
  let j = i;
  while (
    j + 1 < path.length &&
    path[j + 1].type === "message" &&
    (path[j + 1] as { message: AgentMessage }).message.role === "toolResult"
  )
    j++;
  return j;
}

/** Path indices of assistant messages (from index `from` on). */
export function assistantIndices(path: readonly SessionEntry[], from = 0): number[] {
  const out: number[] = [];
  path.forEach((e, i) => {
    if (i >= from && e.type === "message" && e.message.role === "assistant") out.push(i);
  });
  return out;
}

/** Ids of tool results with no earlier call in `messages`. */
export function orphanResults(
  messages: readonly { role: string; content?: unknown; toolCallId?: string }[],
): Set<string> {
  const calls = new Set<string>();
  const orphans = new Set<string>();
  for (const m of messages) {
    if (m.role === "assistant" && Array.isArray(m.content))
      for (const b of m.content as { type: string; id?: string }[]) if (b.type === "toolCall" && b.id) calls.add(b.id);
    if (m.role === "toolResult" && m.toolCallId !== undefined && !calls.has(m.toolCallId)) orphans.add(m.toolCallId);
  }
  return orphans;
}

/** Invariant 1: every tool result follows its call. */
export function assertPaired(messages: readonly AgentMessage[]): void {
  expect([...orphanResults(messages as never)]).toEqual([]);
}
