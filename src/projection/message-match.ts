// Maps the messages of a request back to the branch entries they came from.
// Pi clones messages before the `context` hook, so identity is lost; matching uses role, timestamp, order and
// content. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../log/entries.ts";
import { entryMessages } from "./project.ts";

/** The key a request message and its source entry share. Timestamps are milliseconds, as Pi projects them. */
export function messageKey(message: AgentMessage): string {
  const m = message as unknown as { role: string; timestamp?: number; customType?: string };
  return m.role === "custom" ? `custom|${m.timestamp}|${m.customType}` : `${m.role}|${m.timestamp}`;
}

/**
 * Keys of the messages an entry contributes (usually one; a compaction with a system snapshot two). System messages
 * have keys too: in Pi's whole projection they have a place in the view like any message, and a compaction's
 * snapshot must not take the slot of a system message entry sent in the same millisecond.
 */
export function entryKeys(entry: SessionEntry): string[] {
  if (
    entry.type !== "message" &&
    entry.type !== "custom_message" &&
    entry.type !== "branch_summary" &&
    entry.type !== "compaction"
  )
    return [];
  return entryMessages(entry).map(messageKey);
}

/** What the matcher needs from the ledger. */
export interface MatchSource {
  /** Entries on the path with this key that can appear in the current request, in path order. */
  candidates(key: string): readonly string[];
  /** The content the entry contributes to a request (after context edits). */
  projectedContent(id: string): unknown;
}

function sameContent(message: AgentMessage, content: unknown): boolean {
  return JSON.stringify(content) === JSON.stringify((message as { content?: unknown }).content);
}

/**
 * Match request messages to entry ids. Messages arrive in path order, so a key whose messages and in-context
 * candidates are equally many pairs them in order (this also handles identical twins and edited content).
 * Otherwise someone injected or dropped messages with that key: exact content matches are reserved first, so an
 * injected message cannot take an original's entry, then a lone leftover pair is matched as a content transform.
 * Anything still ambiguous stays unmatched, and callers keep unmatched messages.
 */
export function matchMessages(messages: readonly AgentMessage[], source: MatchSource): (string | undefined)[] {
  const matched: (string | undefined)[] = new Array(messages.length).fill(undefined);
  const groups = new Map<string, number[]>();
  messages.forEach((message, i) => {
    const key = messageKey(message);
    const group = groups.get(key);
    if (group) group.push(i);
    else groups.set(key, [i]);
  });
  for (const [key, indexes] of groups) {
    const candidates = source.candidates(key);
    if (!candidates.length) continue;
    if (candidates.length === indexes.length) {
      indexes.forEach((messageIndex, k) => (matched[messageIndex] = candidates[k]));
      continue;
    }
    const reserved = new Set<string>();
    const rest: number[] = [];
    for (const i of indexes) {
      const id = candidates.find((c) => !reserved.has(c) && sameContent(messages[i], source.projectedContent(c)));
      if (id) {
        matched[i] = id;
        reserved.add(id);
      } else rest.push(i);
    }
    const free = candidates.filter((c) => !reserved.has(c));
    if (free.length === 1 && rest.length === 1) matched[rest[0]] = free[0];
  }
  return matched;
}
