// The live ledger: ledger state and fold filtering kept up to date as Pi appends entries, so the work per
// model request grows with the new entries, not with the session. Pure: entries arrive through a lookup.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { ActivePath, type PathChange } from "../log/branch.ts";
import type { ContextEditEntry, SessionEntry } from "../log/entries.ts";
import { FoldMask, withoutReasoning } from "./fold-rules.ts";
import { evolve, initialLedgerState, type LedgerState } from "./ledger-state.ts";
import { entryKeys, matchMessages } from "./message-match.ts";
import { entryMessages, isCheckpointMarker } from "./project.ts";
import { estimateMessagesTokens } from "./tokens.ts";

/**
 * What happens to one request message: sent as is, dropped by a rule, sent without its reasoning (a completed answer
 * inside a preserve range), or replaced by what a checkpoint marker restates.
 */
type Fate = "keep" | "drop" | "reasoning" | "marker";

/** The previous request's matching, valid while the rules and the compaction stay the same. */
interface RequestMemo {
  folds: LedgerState["folds"];
  compactions: LedgerState["compactions"];
  roles: string[];
  stamps: (number | undefined)[];
  ids: (string | undefined)[];
  fate: Fate[];
  /** Entries matched by the memoized prefix: later messages cannot take them. */
  matched: Set<string>;
}

export class LiveLedger {
  private readonly path = new ActivePath();
  /** states[i]: the ledger state after path entry i. Immer shares structure, so this is one pointer per entry. */
  private readonly states: LedgerState[] = [];
  private readonly byKey = new Map<string, string[]>();
  /** Context edits on the path per target, oldest first (the last one applies). */
  private readonly edits = new Map<string, ContextEditEntry[]>();
  /** tokenSums[i]: estimated tokens of path entries 0..i-1, so any range costs O(1). */
  private readonly tokenSums: number[] = [0];
  private mask: { state: LedgerState; mask: FoldMask } | undefined;
  /** What the previous request matched, so the unchanged prefix of the next one costs two comparisons a message. */
  private request: RequestMemo | undefined;

  /** Move to `leafId`, folding only entries not already on the path. */
  sync(leafId: string | null, getEntry: (id: string) => SessionEntry | undefined): PathChange {
    const change = this.path.moveTo(leafId, getEntry);
    // Matches made on the old branch no longer hold; a context edit can remove a message from the request, which
    // shifts positions (and a same-millisecond twin could then pass the position check with the wrong decision).
    if (change.removed.length || change.appended.some((e) => e.type === "context_edit")) this.request = undefined;
    for (const entry of change.removed) this.unindex(entry);
    this.states.length = change.kept;
    this.tokenSums.length = change.kept + 1;
    let state = this.state;
    for (const entry of change.appended) {
      state = evolve(state, entry);
      this.states.push(state);
      this.index(entry);
      this.tokenSums.push(this.tokenSums[this.tokenSums.length - 1] + estimateMessagesTokens(entryMessages(entry)));
    }
    return change;
  }

  /** Ledger state at the current leaf. */
  get state(): LedgerState {
    return this.states.length ? this.states[this.states.length - 1] : initialLedgerState();
  }

  get entries(): readonly SessionEntry[] {
    return this.path.entries;
  }

  get leafId(): string | null {
    return this.path.leafId;
  }

  indexOf(id: string): number {
    return this.path.indexOf(id);
  }

  getEntry(id: string): SessionEntry | undefined {
    return this.path.get(id);
  }

  /** State after the entry `id` (for validations that look back in time). */
  stateAt(id: string): LedgerState | undefined {
    const i = this.path.indexOf(id);
    return i < 0 ? undefined : this.states[i];
  }

  /**
   * Estimated tokens of the model view at the leaf, without walking the path: the range the latest compaction
   * keeps, minus the union of fold ranges. Fold exemptions are ignored, so this slightly underestimates.
   */
  estimateViewTokens(): number {
    const n = this.path.entries.length;
    const sum = (from: number, to: number) => (to < from ? 0 : this.tokenSums[to + 1] - this.tokenSums[from]);
    let start = 0;
    let base = 0;
    for (const c of this.state.compactions.slice(-1)) {
      const at = this.path.indexOf(c.entryId);
      const kept = this.path.indexOf(c.firstKeptEntryId);
      base = sum(at, at); // the summary itself
      start = kept >= 0 && kept < at ? kept : at + 1;
      // Entries between the kept start and the compaction, and after it, are in context.
      const total = sum(start, at - 1) + sum(at + 1, n - 1);
      return base + total - this.foldedTokens(start);
    }
    return sum(0, n - 1) - this.foldedTokens(0);
  }

  private foldedTokens(from: number): number {
    const ranges = this.state.folds
      .map((f) => [Math.max(from, (f.afterId === null ? -1 : this.path.indexOf(f.afterId)) + 1), this.path.indexOf(f.throughId)] as const)
      .filter(([a, b]) => b >= a)
      .sort((x, y) => x[0] - y[0]);
    let total = 0;
    let end = -1;
    for (const [a, b] of ranges) {
      const lo = Math.max(a, end + 1);
      if (b >= lo) total += this.tokenSums[b + 1] - this.tokenSums[lo];
      end = Math.max(end, b);
    }
    return total;
  }

  /** The fold mask for the current state, rebuilt only when the rules change. */
  foldMask(): FoldMask {
    const state = this.state;
    if (this.mask?.state.folds !== state.folds) this.mask = { state, mask: new FoldMask(state.folds, this.path) };
    return this.mask.mask;
  }

  /** True when the entry is on the path and a fold rule hides it. */
  isFolded(id: string): boolean {
    const i = this.path.indexOf(id);
    return i >= 0 && this.foldMask().hides(this.path.entries[i], i);
  }

  /**
   * Drop the request messages whose source entries are folded. Returns undefined when nothing changes, so the
   * `context` hook is a no-op until a fold exists. Unmatched messages (injected by others) are kept.
   */
  filterContext(messages: AgentMessage[]): AgentMessage[] | undefined {
    const mask = this.foldMask();
    const start = this.contextStart();
    const markerId = start.compaction >= 0 && isCheckpointMarker(this.path.entries[start.compaction]) ? this.path.entries[start.compaction].id : undefined;
    if (mask.empty && markerId === undefined) return undefined;
    const state = this.state;
    let memo = this.request;
    if (!memo || memo.folds !== state.folds || memo.compactions !== state.compactions) {
      memo = { folds: state.folds, compactions: state.compactions, roles: [], stamps: [], ids: [], fate: [], matched: new Set() };
    }
    // Reuse decisions while the request repeats the previous one position by position.
    let same = 0;
    const limit = Math.min(messages.length, memo.roles.length);
    while (same < limit) {
      const m = messages[same] as { role: string; timestamp?: number };
      if (m.role !== memo.roles[same] || m.timestamp !== memo.stamps[same]) break;
      same++;
    }
    for (let i = same; i < memo.ids.length; i++) {
      const id = memo.ids[i];
      if (id !== undefined) memo.matched.delete(id);
    }
    memo.roles.length = memo.stamps.length = memo.ids.length = memo.fate.length = same;

    const tail = messages.slice(same);
    const matched = memo.matched;
    const ids = matchMessages(tail, {
      candidates: (key) => (this.byKey.get(key) ?? []).filter((id) => !matched.has(id) && this.inRequest(id, start)),
      projectedContent: (id) => this.projectedContent(id),
    });
    tail.forEach((message, k) => {
      const id = ids[k];
      if (id !== undefined) matched.add(id);
      memo.roles.push(message.role);
      memo.stamps.push((message as { timestamp?: number }).timestamp);
      memo.ids.push(id);
      memo.fate.push(this.fateOf(id, mask, markerId));
    });
    this.request = memo;
    const fate = memo.fate;
    const restated = markerId === undefined ? undefined : this.restatedSummary();
    // The message sent at request position i (undefined: dropped).
    const sent = (i: number): AgentMessage | undefined => {
      switch (fate[i]) {
        case "keep":
          return messages[i];
        case "drop":
          return undefined;
        case "reasoning":
          return withoutReasoning(messages[i]);
        case "marker":
          return restated;
      }
    };
    let changed = false;
    for (let i = 0; i < fate.length; i++) if (fate[i] !== "keep") changed = true;
    const anchored = state.folds.some((f) => f.anchored);
    if (!changed && !anchored) return undefined;
    const kept: number[] = [];
    for (let i = 0; i < messages.length; i++) if (sent(i) !== undefined) kept.push(i);
    const moved = anchored && this.placeAnchored(kept, memo.ids);
    if (!changed && !moved) return undefined;
    return kept.map((i) => sent(i)!);
  }

  /** Decide one matched message's fate (unmatched messages, injected by others, are always kept). */
  private fateOf(id: string | undefined, mask: FoldMask, markerId: string | undefined): Fate {
    if (id === undefined) return "keep";
    if (id === markerId) return "marker";
    const entry = this.path.get(id)!;
    const index = this.path.indexOf(id);
    if (mask.hides(entry, index)) return "drop";
    return mask.dropsReasoning(entry, index) ? "reasoning" : "keep";
  }

  /** The summary a checkpoint marker restates: the newest real compaction's, found in O(compactions). */
  private restatedSummary(): AgentMessage | undefined {
    const compactions = this.state.compactions;
    for (let i = compactions.length - 2; i >= 0; i--) {
      const entry = this.path.get(compactions[i].entryId);
      if (entry && !isCheckpointMarker(entry)) return entryMessages(entry).find((m) => m.role === "compactionSummary");
    }
    return undefined;
  }

  /**
   * Move each anchored range message (preserve checkpoint) to just after the last kept message at or before its
   * range end, as `projectBranch` orders it. Works on message indexes; returns true when anything moved.
   */
  private placeAnchored(kept: number[], ids: readonly (string | undefined)[]): boolean {
    const start = this.contextStart();
    // Position in the view's order before anchoring: the compaction in force comes first (its summary heads the
    // request), everything else by path index. An anchor whose range end lies before the context start (summarized
    // by that compaction) is not in the view, so its checkpoint keeps its own place, as `projectBranch` keeps it.
    const position = (i: number): number => (i === start.compaction ? start.from - 0.5 : i);
    const visible = (i: number): boolean => {
      if (i === start.compaction) return true;
      if (i < start.from) return false;
      const entry = this.path.entries[i];
      return !(start.compaction >= 0 && i < start.compaction && entry.type === "message" && entry.message.role === "system");
    };
    const anchorEnd = new Map<string, number>();
    for (const rule of this.state.folds) {
      if (!rule.anchored) continue;
      const end = this.path.indexOf(rule.throughId);
      anchorEnd.set(rule.entryId, end >= 0 && visible(end) ? position(end) : -Infinity);
    }
    // Where a message sits in the view's order: its position, or just after its range end when anchored.
    const viewIndex = (id: string | undefined): number => {
      if (id === undefined) return Infinity; // unmatched: keep it after whatever it followed
      const end = anchorEnd.get(id);
      return end !== undefined && end !== -Infinity ? end + 0.5 : position(this.path.indexOf(id));
    };
    let moved = false;
    for (const rule of this.state.folds) {
      if (!rule.anchored) continue;
      const end = anchorEnd.get(rule.entryId)!;
      let at = kept.length - 1;
      while (at >= 0 && ids[kept[at]] !== rule.entryId) at--;
      if (end === -Infinity || at < 0) continue;
      let target = at;
      while (target > 0 && viewIndex(ids[kept[target - 1]]) > end) target--;
      if (target === at) continue;
      const [message] = kept.splice(at, 1);
      kept.splice(target, 0, message);
      moved = true;
    }
    return moved;
  }

  /** Path index where the model's context starts (the latest compaction's kept entry), and that compaction. */
  private contextStart(): { from: number; compaction: number } {
    const last = this.state.compactions[this.state.compactions.length - 1];
    if (!last) return { from: 0, compaction: -1 };
    const at = this.path.indexOf(last.entryId);
    const kept = this.path.indexOf(last.firstKeptEntryId);
    return { from: kept >= 0 && kept < at ? kept : at, compaction: at };
  }

  /** Can this entry contribute a message to the current request? (Folds aside: those are what we filter.) */
  private inRequest(id: string, start: { from: number; compaction: number }): boolean {
    const i = this.path.indexOf(id);
    if (i < start.from) return false;
    const entry = this.path.entries[i];
    if (entry.type === "compaction") return i === start.compaction;
    const edit = this.edits.get(id)?.at(-1);
    return !(edit && edit.replacement === null && this.path.indexOf(edit.id) >= start.from);
  }

  private projectedContent(id: string): unknown {
    const entry = this.path.get(id);
    if (!entry) return undefined;
    const edit = this.edits.get(id)?.at(-1);
    const message = entryMessages(entry).find((m) => m.role !== "system") as { role: string; content?: unknown } | undefined;
    if (!edit?.replacement || !message) return message?.content;
    const content = edit.replacement.content;
    return (message.role === "assistant" || message.role === "toolResult") && typeof content === "string" ? [{ type: "text", text: content }] : content;
  }

  private index(entry: SessionEntry): void {
    if (entry.type === "context_edit") {
      const list = this.edits.get(entry.targetId);
      if (list) list.push(entry);
      else this.edits.set(entry.targetId, [entry]);
    }
    for (const key of entryKeys(entry)) {
      const list = this.byKey.get(key);
      if (list) list.push(entry.id);
      else this.byKey.set(key, [entry.id]);
    }
  }

  private unindex(entry: SessionEntry): void {
    if (entry.type === "context_edit") {
      const list = this.edits.get(entry.targetId);
      list?.pop();
      if (list && !list.length) this.edits.delete(entry.targetId);
    }
    for (const key of entryKeys(entry)) {
      const list = this.byKey.get(key);
      if (!list) continue;
      const at = list.lastIndexOf(entry.id);
      if (at >= 0) list.splice(at, 1);
      if (!list.length) this.byKey.delete(key);
    }
  }
}
