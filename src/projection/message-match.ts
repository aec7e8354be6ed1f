// Maps the messages of a request back to the branch entries they came from.
// Pi clones messages before the `context` hook, so identity is lost; matching uses role, timestamp and
// content. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../log/entries.ts";
import { entryMessages } from "./project.ts";

/** The key a request message and its source entry share. Timestamps are milliseconds, as Pi projects them. */
export function messageKey(message: AgentMessage): string {
  const m = message as unknown as { role: string; timestamp?: number; customType?: string };
  return m.role === "custom" ? `custom|${m.timestamp}|${m.customType}` : `${m.role}|${m.timestamp}`;
}

/** Keys of the messages an entry contributes (usually one). */
export function entryKeys(entry: SessionEntry): string[] {
  if (entry.type !== "message" && entry.type !== "custom_message" && entry.type !== "branch_summary" && entry.type !== "compaction") return [];
  return entryMessages(entry)
    .filter((m) => m.role !== "system")
    .map(messageKey);
}

function sameContent(message: AgentMessage, entry: SessionEntry): boolean {
  const source = entryMessages(entry).find((m) => m.role === message.role);
  if (!source) return false;
  return JSON.stringify((source as { content?: unknown }).content) === JSON.stringify((message as { content?: unknown }).content);
}

/**
 * Match request messages to entry ids. Exact matches (key and content) are reserved first, so an injected
 * message that merely shares a timestamp cannot take an original's entry; then a message whose key has
 * exactly one unreserved candidate pairs with it (its content was transformed, e.g. by a context edit).
 * Anything still ambiguous stays unmatched, and callers keep unmatched messages.
 */
export function matchMessages(
  messages: readonly AgentMessage[],
  candidatesFor: (key: string) => readonly string[] | undefined,
  entryOf: (id: string) => SessionEntry | undefined,
): (string | undefined)[] {
  const matched: (string | undefined)[] = new Array(messages.length).fill(undefined);
  const reserved = new Set<string>();
  const keys = messages.map(messageKey);
  // Fast path: a key with one candidate used by one message needs no content check.
  const uses = new Map<string, number>();
  for (const key of keys) uses.set(key, (uses.get(key) ?? 0) + 1);
  const pending: number[] = [];
  for (let i = 0; i < messages.length; i++) {
    const candidates = candidatesFor(keys[i]);
    if (!candidates?.length) continue;
    if (candidates.length === 1 && uses.get(keys[i]) === 1) {
      const entry = entryOf(candidates[0]);
      if (entry && sameContent(messages[i], entry)) {
        matched[i] = candidates[0];
        reserved.add(candidates[0]);
        continue;
      }
    }
    pending.push(i);
  }
  // Exact pass over ambiguous keys.
  const rest: number[] = [];
  for (const i of pending) {
    const id = candidatesFor(keys[i])!.find((c) => !reserved.has(c) && sameContent(messages[i], entryOf(c)!));
    if (id) {
      matched[i] = id;
      reserved.add(id);
    } else rest.push(i);
  }
  // Transform pass: pair only when exactly one candidate is left for exactly one message of that key.
  const restByKey = new Map<string, number[]>();
  for (const i of rest) restByKey.set(keys[i], [...(restByKey.get(keys[i]) ?? []), i]);
  for (const [key, indexes] of restByKey) {
    const free = candidatesFor(key)!.filter((c) => !reserved.has(c));
    if (free.length === 1 && indexes.length === 1) {
      matched[indexes[0]] = free[0];
      reserved.add(free[0]);
    }
  }
  return matched;
}
