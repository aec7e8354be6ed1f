// Pins: entries the model view keeps verbatim whatever any act hides. A pin is a fact on the branch (or a
// `<keepContext>` span in the user's own text); this module resolves pins against a path. Pure: no I/O.
import type { SessionEntry } from "../log/entries.ts";

/** One pin in the ledger state, keyed by the entry it pins. */
export interface PinFact {
  /** The pinned entry, as the fact names it (a tool call or its result: either pins the pair). */
  targetId: string;
  /** The fact that pinned it: a `context-ledger/pin` entry, or the user message itself for `<keepContext>`. */
  factId: string;
  note?: string;
  /** Pinned by a `<keepContext>` span in the user's own message, not by a pin fact. */
  implicit?: true;
}

/** Default share of the context window all pins together may take (`contextLedger.pins.maxShare`). */
export const DEFAULT_PIN_SHARE = 0.1;

/** One entry of the state's pin log: a pin fact as read, or a `<keepContext>` message's own pin. */
export interface PinRecord {
  targetId: string;
  factId: string;
  pinned: boolean;
  note?: string;
  implicit?: true;
}

// The `<keepContext>` reading lives with the other fact readers; re-exported for the view's own users.
export { keepsContext } from "../log/facts.ts";

/**
 * Entries a pin can hold: conversation messages (system messages aside: a compaction's snapshot replaces them) and
 * custom messages. Compactions, labels, state entries and the like carry no text of their own to keep.
 */
export function isPinnable(entry: SessionEntry | undefined): entry is SessionEntry {
  if (!entry) return false;
  if (entry.type === "custom_message") return true;
  return entry.type === "message" && entry.message.role !== "system";
}

function callIds(entry: SessionEntry): string[] {
  if (entry.type !== "message" || entry.message.role !== "assistant") return [];
  const ids: string[] = [];
  for (const block of entry.message.content ?? []) if (block.type === "toolCall") ids.push(block.id);
  return ids;
}

/** Positions of a path, as pins need them (a `PathLookup` plus the entry at an index). */
export interface PinLookup {
  indexOf(id: string): number;
  get(id: string): SessionEntry | undefined;
  at(index: number): SessionEntry | undefined;
}

/**
 * The entries one pin holds, oldest first: the target, and for a tool call or a tool result the whole exchange (the
 * assistant message and every result answering its calls), so a pin never leaves a call without its result or a
 * result without its call. A target off the path, or one no pin can hold, gives nothing. Results are looked for
 * after their assistant message, up to the next user or assistant message: where Pi writes them.
 */
export function pinGroup(targetId: string, path: PinLookup): { indexes: number[]; openCalls: string[] } {
  const at = path.indexOf(targetId);
  const target = at < 0 ? undefined : path.at(at);
  if (!isPinnable(target)) return { indexes: [], openCalls: [] };
  let call = at;
  if (target.type === "message" && target.message.role === "toolResult") {
    const id = target.message.toolCallId;
    call = -1;
    // The nearest assistant message before a result is the one that called it; a result without it pins alone.
    for (let i = at - 1; i >= 0; i--) {
      const e = path.at(i);
      if (e?.type !== "message" || e.message.role !== "assistant") continue;
      if (callIds(e).includes(id)) call = i;
      break;
    }
    if (call < 0) return { indexes: [at], openCalls: [] };
  }
  const calls = new Set(callIds(path.at(call)!));
  if (!calls.size) return { indexes: [at], openCalls: [] };
  const indexes = [call];
  for (let i = call + 1; calls.size; i++) {
    const e = path.at(i);
    if (!e) break;
    if (e.type !== "message") continue;
    if (e.message.role === "user" || e.message.role === "assistant") break;
    if (e.message.role === "toolResult" && calls.delete(e.message.toolCallId)) indexes.push(i);
  }
  // A result filed after another message (a damaged file) still pins itself with its call.
  if (!indexes.includes(at)) indexes.push(at);
  return { indexes, openCalls: [...calls] };
}

/**
 * The pins of a ledger state resolved against one path: which entries no rule may hide, and which of them sit before
 * a compaction's cut (those are placed right after its summary). Built in O(pins x exchange size); queries are O(1).
 */
export class PinSet {
  /** Path index -> pinned. */
  private readonly indexes = new Set<number>();
  /** Sorted path indexes of pinned entries. */
  readonly sorted: number[];
  /** Calls of pinned assistant messages whose results are not on the path yet: a result joining pins too. */
  private readonly open = new Set<string>();
  private readonly lookup: PinLookup;

  constructor(pins: readonly PinFact[], path: PinLookup) {
    this.lookup = path;
    for (const pin of pins) {
      const group = pinGroup(pin.targetId, path);
      for (const i of group.indexes) this.indexes.add(i);
      for (const id of group.openCalls) this.open.add(id);
    }
    this.sorted = [...this.indexes].sort((a, b) => a - b);
  }

  get empty(): boolean {
    return this.indexes.size === 0 && this.open.size === 0;
  }

  /** True when the entry at path `index` is pinned. */
  has(index: number): boolean {
    return this.indexes.has(index);
  }

  /** True for an entry joining the path that answers a pinned call: the set must be rebuilt to hold it. */
  awaits(entry: SessionEntry): boolean {
    return (
      this.open.size > 0 &&
      entry.type === "message" &&
      entry.message.role === "toolResult" &&
      this.open.has(entry.message.toolCallId)
    );
  }

  /** Pinned entries before path index `from`, in path order. */
  before(from: number): SessionEntry[] {
    const out: SessionEntry[] = [];
    for (const i of this.sorted) {
      if (i >= from) break;
      const entry = this.lookup.at(i);
      if (entry) out.push(entry);
    }
    return out;
  }
}
