// Which branch entries the fold range rules hide. Rules are constant-size; the hidden set is derived
// from the rules and the positions of entries on the active path. Pure: no I/O.
import type { AgentMessage, SessionEntry } from "../log/entries.ts";
import type { LedgerFacts } from "../log/facts.ts";
import type { RangeRule } from "./ledger-state.ts";
import type { PinSet } from "./pins.ts";

/** Entries a fold may hide: conversation messages and custom messages. System loadout, `!` bash output,
 * branch summaries and compactions always stay, since they carry state the model needs. */
export function isFoldable(entry: SessionEntry): boolean {
  if (entry.type === "custom_message") return true;
  if (entry.type !== "message") return false;
  const role = entry.message.role;
  return role === "user" || role === "assistant" || role === "toolResult";
}

/**
 * Dialogue a `keepDialogue` rule never hides: user messages, completed assistant answers (stopped normally, no tool
 * call, something besides reasoning to show), and the messages of anchored range records.
 */
export function isDialogue(entry: SessionEntry, facts: LedgerFacts): boolean {
  // Anchored checkpoints are permanent context: a later checkpoint's range covers them but never hides them.
  if (entry.type === "custom_message") return facts.isAnchored(entry);
  if (entry.type !== "message") return false;
  const m = entry.message;
  if (m.role === "user") return true;
  return isCompletedAnswer(entry);
}

/** A completed assistant answer: stopped normally, no tool call, and visible content besides its reasoning. */
export function isCompletedAnswer(entry: SessionEntry): boolean {
  if (entry.type !== "message" || entry.message.role !== "assistant" || entry.message.stopReason !== "stop")
    return false;
  const content = entry.message.content ?? [];
  return !content.some((b) => b.type === "toolCall") && content.some((b) => b.type !== "thinking");
}

/** True when the entry is a completed answer that carries reasoning blocks. */
export function hasReasoning(entry: SessionEntry): boolean {
  return (
    entry.type === "message" &&
    entry.message.role === "assistant" &&
    (entry.message.content ?? []).some((b) => b.type === "thinking")
  );
}

/** The message without its reasoning blocks: what a `keepDialogue` rule leaves of a completed answer. */
export function withoutReasoning(message: AgentMessage): AgentMessage {
  if (message.role !== "assistant" || !Array.isArray(message.content)) return message;
  return { ...message, content: message.content.filter((b) => b.type !== "thinking") };
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

/** A rule against the path, or undefined when its anchors are off it (defensive: rules are read from ancestors). */
function resolve(rule: RangeRule, path: PathLookup): ResolvedRule | undefined {
  const through = path.indexOf(rule.throughId);
  const after = rule.afterId === null ? -1 : path.indexOf(rule.afterId);
  if (through < 0 || (rule.afterId !== null && after < 0) || after >= through) return undefined;
  const keptCalls = rule.keepToolResultsOf ? toolCallIdsOf(path.get(rule.keepToolResultsOf)) : new Set<string>();
  return { from: after + 1, through, keptCalls, keepDialogue: rule.keepDialogue === true };
}

/**
 * Decides, per entry, whether any range hides it. Build once per (rules, path) and query per entry. Rules are kept
 * sorted by their first index with the furthest end reached so far, so a query looks only at the rules that can
 * cover the index: O(log rules) when ranges do not overlap (tool checkpoints and digests never do), where a scan of
 * every rule would make a rebuild cost entries x rules, and a long replay, with a digest every few steps, cubic.
 */
export class RangeMask {
  private readonly rules: ResolvedRule[] = [];
  /** reach[k]: the largest `through` among rules[0..k]. */
  private readonly reach: number[] = [];

  /** Pinned entries: no rule hides them or drops their reasoning (see `pins.ts`). */
  private readonly pins: PinSet | undefined;

  /** What the records mean: which messages are permanent context. */
  private readonly facts: LedgerFacts;

  constructor(ranges: readonly RangeRule[], path: PathLookup, facts: LedgerFacts, pins?: PinSet) {
    this.facts = facts;
    this.pins = pins?.empty ? undefined : pins;
    for (const rule of ranges) {
      const resolved = resolve(rule, path);
      if (resolved) this.rules.push(resolved);
    }
    this.rules.sort((a, b) => a.from - b.from);
    let reach = -1;
    for (const rule of this.rules) this.reach.push((reach = Math.max(reach, rule.through)));
  }

  /**
   * Add rules to this mask in place, when each starts at or after every rule it holds (so the order stays the one a
   * new mask sorts them in): what a fact appended at the leaf gives. Returns false, changing nothing, otherwise; the
   * caller then builds a new mask. The caller gives up the mask as it was: whoever else holds it sees the rules added.
   */
  add(ranges: readonly RangeRule[], path: PathLookup): boolean {
    const resolved: ResolvedRule[] = [];
    let last = this.rules.length ? this.rules[this.rules.length - 1].from : -1;
    for (const rule of ranges) {
      const r = resolve(rule, path);
      if (!r) continue;
      if (r.from < last) return false;
      last = r.from;
      resolved.push(r);
    }
    let reach = this.reach.length ? this.reach[this.reach.length - 1] : -1;
    for (const r of resolved) {
      this.rules.push(r);
      this.reach.push((reach = Math.max(reach, r.through)));
    }
    return true;
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  /** True when some rule covering `index` passes `test`. */
  private covered(index: number, test: (rule: ResolvedRule) => boolean): boolean {
    // The last rule starting at or before `index`, by binary search.
    let low = 0;
    let high = this.rules.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.rules[mid].from <= index) low = mid + 1;
      else high = mid;
    }
    // Walking back, stop once no earlier rule reaches `index`.
    for (let k = low - 1; k >= 0 && this.reach[k] >= index; k--) {
      const rule = this.rules[k];
      if (index <= rule.through && test(rule)) return true;
    }
    return false;
  }

  /**
   * True when a `keepDialogue` rule covers the completed answer at `index` and it has reasoning to drop: the answer's
   * visible text stays verbatim, its reasoning is technical state the checkpoint summarized.
   */
  dropsReasoning(entry: SessionEntry, index: number): boolean {
    if (index < 0 || this.empty || !isCompletedAnswer(entry) || !hasReasoning(entry) || this.pins?.has(index))
      return false;
    return this.covered(index, (rule) => rule.keepDialogue);
  }

  /**
   * True when some rule hides the entry at `index`. Each rule's exemption protects only against that rule; a pin
   * protects against every rule.
   */
  hides(entry: SessionEntry, index: number): boolean {
    if (index < 0 || this.empty || !isFoldable(entry) || this.pins?.has(index)) return false;
    return this.covered(index, (rule) => {
      if (rule.keepDialogue && isDialogue(entry, this.facts)) return false;
      if (
        entry.type === "message" &&
        entry.message.role === "toolResult" &&
        rule.keptCalls.has(entry.message.toolCallId)
      )
        return false;
      return true;
    });
  }
}
