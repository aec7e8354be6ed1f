// The live ledger: ledger state and fold filtering kept up to date as Pi appends entries, so the work per
// model request grows with the new entries, not with the session. Pure: entries arrive through a lookup.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { ActivePath, type PathChange } from "../log/branch.ts";
import { isCheckpointMarker, type ContextEditEntry, type SessionEntry } from "../log/entries.ts";
import { FoldMask, withoutReasoning } from "./fold-rules.ts";
import { evolve, initialLedgerState, isRevokedMessage, type LedgerState } from "./ledger-state.ts";
import { entryKeys, matchMessages } from "./message-match.ts";
import { contextEntries, entryMessages, markerMessages, projectEntries, restatedSummary, viewCut, type ViewCut } from "./project.ts";
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
  revoked: LedgerState["revoked"];
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
  /** Bumped on every context edit that joins or leaves the path (edits change projected content). */
  private editsVersion = 0;
  /** The restored head of the last request that needed one (see {@link requestContext}). */
  private head: { state: LedgerState; edits: number; cutId: string; messages: AgentMessage[]; ids: string[] } | undefined;

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
      // A checkpoint marker sends its system snapshot at most: its text is the checkpoint message, counted there.
      const sent = isCheckpointMarker(entry) ? markerMessages(entry, undefined) : entryMessages(entry);
      this.tokenSums.push(this.tokenSums[this.tokenSums.length - 1] + estimateMessagesTokens(sent));
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
   * Estimated tokens of the model view at the leaf, without walking the path: the range the view's cut keeps, minus
   * the union of fold ranges. Fold exemptions are ignored, so this slightly underestimates.
   */
  estimateViewTokens(): number {
    const n = this.path.entries.length;
    const sum = (from: number, to: number) => (to < from ? 0 : this.tokenSums[to + 1] - this.tokenSums[from]);
    const { head, from } = this.viewCut();
    if (head < 0) return sum(0, n - 1) - this.foldedTokens(0) - this.revokedTokens(0);
    const start = from < head ? from : head + 1;
    // The heading compaction, the entries kept before it (a marker's restated summary is its compaction's, in this
    // range), and everything after it.
    const total = sum(head, head) + sum(start, head - 1) + sum(head + 1, n - 1);
    return total - this.foldedTokens(start) - this.revokedTokens(start);
  }

  /** Tokens of revoked acts' own entries at or after `from` (a revoked compaction counts as its summary). */
  private revokedTokens(from: number): number {
    let total = 0;
    for (const id of Object.keys(this.state.revoked)) {
      const i = this.path.indexOf(id);
      if (i >= from) total += this.tokenSums[i + 1] - this.tokenSums[i];
    }
    return total;
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

  /** True when the entry is on the path and a fold rule hides it, or it is the message of a revoked act. */
  isFolded(id: string): boolean {
    const i = this.path.indexOf(id);
    if (i < 0) return false;
    const entry = this.path.entries[i];
    return this.foldMask().hides(entry, i) || isRevokedMessage(entry, this.state);
  }

  /** Messages of revoked acts, or fold rules: something this ledger hides by itself. */
  private hidesAnything(mask: FoldMask): boolean {
    return !mask.empty || Object.keys(this.state.revoked).length > 0;
  }

  /**
   * Drop the request messages whose source entries are folded (or are revoked acts' messages), strip the reasoning
   * of answers inside a preserve range, put a checkpoint marker's restated summary in place of its own, and move
   * anchored checkpoints after their range end. Returns undefined when nothing changes, so the `context` hook is a
   * no-op until a fold exists. Unmatched messages (injected by others) are kept. Works on any list Pi built from the
   * branch: requests, and the inputs of a compaction.
   */
  filterContext(messages: AgentMessage[]): AgentMessage[] | undefined {
    const mask = this.foldMask();
    const marker = this.state.compactions.at(-1)?.marker === true;
    if (!this.hidesAnything(mask) && !marker) return undefined;
    const memo = this.match(messages, mask);
    const fate = memo.fate;
    let changed = false;
    for (let i = 0; i < fate.length; i++) if (fate[i] !== "keep") changed = true;
    const anchored = this.state.folds.some((f) => f.anchored);
    if (!changed && !anchored) return undefined;
    const out: AgentMessage[] = [];
    const ids: (string | undefined)[] = [];
    this.emit(messages, memo, () => true, out, ids);
    if (!anchored) return out;
    const order = out.map((_, i) => i);
    if (!this.placeAnchored(order, ids)) return changed ? out : undefined;
    return order.map((i) => out[i]);
  }

  /**
   * The model view for a provider request Pi built (the `context` hook). Pi's request always follows Pi's newest
   * compaction; when the view does not start where it does (a restore revoked that compaction or moved its cut back,
   * or a checkpoint marker stored another start), the part of the request that came from the compaction and what it
   * kept is replaced by our projection of the same region (the restored history), and the rest is filtered as usual.
   * Otherwise this is {@link filterContext}. `conversation` is the list Pi's `context` hook gets: no system messages,
   * since Pi puts its current system message back in front afterwards; the restored region then leaves its system
   * messages out too. `full` is Pi's whole projection (tests, the lab).
   */
  requestContext(messages: AgentMessage[], shape: "full" | "conversation" = "full"): AgentMessage[] | undefined {
    const cut = this.revokedCut();
    if (cut < 0) return this.filterContext(messages);
    const mask = this.foldMask();
    const memo = this.match(messages, mask);
    const head = this.restoredHead(cut, mask);
    const withSystem = shape === "full";
    const out: AgentMessage[] = [];
    const ids: (string | undefined)[] = [];
    head.messages.forEach((m, i) => {
      if (!withSystem && m.role === "system") return;
      out.push(m);
      ids.push(head.ids[i]);
    });
    const compaction = this.path.entries[cut] as Extract<SessionEntry, { type: "compaction" }>;
    const summaryAt = memo.ids.indexOf(compaction.id);
    // Pi sends the compaction's system snapshot right before its summary; our head carries the system state instead.
    const systemAt = compaction.systemMessage && summaryAt > 0 && messages[summaryAt - 1].role === "system" && memo.ids[summaryAt - 1] === undefined ? summaryAt - 1 : -1;
    this.emit(messages, memo, (i, id) => i !== systemAt && (id === undefined || this.path.indexOf(id) > cut), out, ids);
    if (!this.state.folds.some((f) => f.anchored)) return out;
    const order = out.map((_, i) => i);
    this.placeAnchored(order, ids);
    return order.map((i) => out[i]);
  }

  /**
   * Append to `out` (and their entry ids to `ids`) what each request message becomes by its fate, for the positions
   * `take` accepts. A checkpoint marker's summary becomes the summary it restates (or nothing).
   */
  private emit(
    messages: AgentMessage[],
    memo: RequestMemo,
    take: (i: number, id: string | undefined) => boolean,
    out: AgentMessage[],
    ids: (string | undefined)[],
  ): void {
    let restated: AgentMessage | undefined | null = null;
    messages.forEach((message, i) => {
      const id = memo.ids[i];
      if (!take(i, id)) return;
      let sent: AgentMessage | undefined;
      switch (memo.fate[i]) {
        case "keep":
          sent = message;
          break;
        case "drop":
          sent = undefined;
          break;
        case "reasoning":
          sent = withoutReasoning(message);
          break;
        case "marker":
          if (restated === null) restated = restatedSummary(this.state, (entryId) => this.path.get(entryId));
          sent = restated;
          break;
      }
      if (!sent) return;
      out.push(sent);
      ids.push(id);
    });
  }

  /** Where the model view starts (see `viewCut`), over the live path. */
  private viewCut(): ViewCut {
    return viewCut(this.state, (id) => this.path.indexOf(id));
  }

  /**
   * Path index of Pi's newest compaction when the view does not start where Pi's request does (that compaction was
   * revoked, a partial restore moved its cut back, or it is a checkpoint marker whose stored start is not the
   * view's), else -1.
   */
  private revokedCut(): number {
    const pi = this.contextStart();
    if (pi.compaction < 0) return -1;
    const view = this.viewCut();
    return view.head === pi.compaction && view.from === pi.from ? -1 : pi.compaction;
  }

  /** Our projection of the path up to Pi's newest compaction, with the entry id of every message; cached. */
  private restoredHead(cut: number, mask: FoldMask): { messages: AgentMessage[]; ids: string[] } {
    const state = this.state;
    const cutId = this.path.entries[cut].id;
    const cached = this.head;
    if (cached && cached.state === state && cached.edits === this.editsVersion && cached.cutId === cutId) return cached;
    const indexOf = (id: string) => this.path.indexOf(id);
    const selected = contextEntries(this.path.entries.slice(0, cut + 1), state, indexOf);
    const projected = projectEntries(selected, {
      state,
      mask,
      indexOf,
      get: (id) => this.path.get(id),
      editOf: (id) => this.edits.get(id)?.at(-1),
    });
    const messages: AgentMessage[] = [];
    const ids: string[] = [];
    for (const p of projected) {
      for (const m of p.messages) {
        messages.push(m);
        ids.push(p.sourceEntry.id);
      }
    }
    this.head = { state, edits: this.editsVersion, cutId, messages, ids };
    return this.head;
  }

  /** Match request messages to entries and decide their fates, reusing the previous request's unchanged prefix. */
  private match(messages: AgentMessage[], mask: FoldMask): RequestMemo {
    const state = this.state;
    let memo = this.request;
    if (!memo || memo.folds !== state.folds || memo.compactions !== state.compactions || memo.revoked !== state.revoked) {
      memo = { folds: state.folds, compactions: state.compactions, revoked: state.revoked, roles: [], stamps: [], ids: [], fate: [], matched: new Set() };
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
    const start = this.contextStart();
    const matched = memo.matched;
    const ids = matchMessages(tail, {
      candidates: (key) => (this.byKey.get(key) ?? []).filter((id) => !matched.has(id) && this.inRequest(id, start)),
      projectedContent: (id) => this.projectedContent(id),
    });
    const last = state.compactions.at(-1);
    const markerId = last?.marker ? last.entryId : undefined;
    const revoking = Object.keys(state.revoked).length > 0;
    tail.forEach((message, k) => {
      const id = ids[k];
      if (id !== undefined) matched.add(id);
      memo.roles.push(message.role);
      memo.stamps.push((message as { timestamp?: number }).timestamp);
      memo.ids.push(id);
      memo.fate.push(this.fateOf(id, mask, markerId, revoking));
    });
    this.request = memo;
    return memo;
  }

  /** Decide one matched message's fate (unmatched messages, injected by others, are always kept). */
  private fateOf(id: string | undefined, mask: FoldMask, markerId: string | undefined, revoking: boolean): Fate {
    if (id === undefined) return "keep";
    if (id === markerId) return "marker";
    const entry = this.path.get(id)!;
    const index = this.path.indexOf(id);
    if (mask.hides(entry, index) || (revoking && isRevokedMessage(entry, this.state))) return "drop";
    return mask.dropsReasoning(entry, index) ? "reasoning" : "keep";
  }

  /**
   * Move each anchored range message (preserve checkpoint) to just after the last kept message at or before its
   * range end, as `projectBranch` orders it. Works on message indexes; returns true when anything moved.
   */
  private placeAnchored(kept: number[], ids: readonly (string | undefined)[]): boolean {
    const cut = this.viewCut();
    // Position in the view's order before anchoring: the compaction heading the view comes first (its summary heads
    // the request), everything else by path index. An anchor whose range end lies before the view's start
    // (summarized) is not in the view, so its checkpoint keeps its own place, as `projectBranch` keeps it.
    const position = (i: number): number => (i === cut.head ? cut.from - 0.5 : i);
    const visible = (i: number): boolean => {
      if (i === cut.head) return true;
      if (i < cut.from) return false;
      const entry = this.path.entries[i];
      return !(cut.head >= 0 && i < cut.head && entry.type === "message" && entry.message.role === "system");
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

  /** Where Pi's request starts (its newest compaction's kept entry) and that compaction: what Pi's messages can match. */
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
      this.editsVersion++;
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
      this.editsVersion++;
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
