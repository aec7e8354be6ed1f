// Which branch entries the fold range rules hide. Rules are constant-size; the hidden set is derived
// from the rules and the positions of entries on the active path. Pure: no I/O.
import { LedgerType, type SessionEntry } from "../log/entries.ts";
import type { FoldRule } from "./ledger-state.ts";

/** Entries a fold may hide: conversation messages and custom messages. System loadout, `!` bash output,
 * branch summaries and compactions always stay, since they carry state the model needs. */
export function isFoldable(entry: SessionEntry): boolean {
  if (entry.type === "custom_message") return true;
  if (entry.type !== "message") return false;
  const role = entry.message.role;
  return role === "user" || role === "assistant" || role === "toolResult";
}

/**
 * Dialogue a `keepDialogue` rule never hides: user messages, completed assistant answers without tool calls, and
 * tool checkpoints.
 */
export function isDialogue(entry: SessionEntry): boolean {
  // Tool checkpoints (preserve, digest) are permanent context: a later checkpoint's range covers them but never hides them.
  if (entry.type === "custom_message") return entry.customType === LedgerType.preserve || entry.customType === LedgerType.digest;
  if (entry.type !== "message") return false;
  const m = entry.message;
  if (m.role === "user") return true;
  return m.role === "assistant" && m.stopReason === "stop" && !(m.content ?? []).some((b) => b.type === "toolCall");
}

/** Positions of entries on the path, as the rules need them. */
export interface PathLookup {
  indexOf(id: string): number;
  get(id: string): SessionEntry | undefined;
}

/** A rule resolved against the current path. */
interface ResolvedRule {
  from: number; // first hidden index (inclusive)
  through: number; // last hidden index (inclusive)
  keptCalls: ReadonlySet<string>;
  keepDialogue: boolean;
}

/** Tool call ids of an assistant entry. */
export function toolCallIdsOf(entry: SessionEntry | undefined): Set<string> {
  const ids = new Set<string>();
  if (entry?.type !== "message" || entry.message.role !== "assistant") return ids;
  for (const block of entry.message.content ?? []) if (block.type === "toolCall") ids.add(block.id);
  return ids;
}

/**
 * Decides, per entry, whether any fold rule hides it. Build once per (rules, path) and query per entry;
 * a query costs O(rules).
 */
export class FoldMask {
  private readonly rules: ResolvedRule[] = [];

  constructor(folds: readonly FoldRule[], path: PathLookup) {
    for (const fold of folds) {
      const through = path.indexOf(fold.throughId);
      const after = fold.afterId === null ? -1 : path.indexOf(fold.afterId);
      // A rule whose anchors are off this path cannot apply here (defensive: rules are read from ancestors).
      if (through < 0 || (fold.afterId !== null && after < 0) || after >= through) continue;
      const keptCalls = fold.keepToolResultsOf ? toolCallIdsOf(path.get(fold.keepToolResultsOf)) : new Set<string>();
      this.rules.push({ from: after + 1, through, keptCalls, keepDialogue: fold.keepDialogue === true });
    }
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** True when some rule hides the entry at `index`. Each rule's exemption protects only against that rule. */
  hides(entry: SessionEntry, index: number): boolean {
    if (index < 0 || !isFoldable(entry)) return false;
    for (const rule of this.rules) {
      if (index < rule.from || index > rule.through) continue;
      if (rule.keepDialogue && isDialogue(entry)) continue;
      if (entry.type === "message" && entry.message.role === "toolResult" && rule.keptCalls.has(entry.message.toolCallId)) continue;
      return true;
    }
    return false;
  }
}
