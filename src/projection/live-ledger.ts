// The live ledger: the ledger state and the model view kept up to date as Pi appends entries, and Pi's request
// messages mapped onto that view, so the work per model request grows with the new entries, not with the session.
// Pure: entries arrive through a lookup.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { ActivePath, type PathChange } from "../log/branch.ts";
import type { ContextEditEntry, SessionEntry } from "../log/entries.ts";
import type { LedgerFacts } from "../log/facts.ts";
import { RangeMask, withoutReasoning } from "./ranges.ts";
import {
  evolve,
  headCompaction,
  initialLedgerState,
  isRevokedMessage,
  type LedgerState,
  type RangeRule,
  reduceBranch,
} from "./ledger-state.ts";
import { entryKeys, matchMessages } from "./message-match.ts";
import type { PinSet } from "./pins.ts";
import {
  contextEntries,
  entryMessages,
  markerMessages,
  type MessageSource,
  pinsOf,
  placeAnchored,
  placeAnchoredBy,
  projectEntries,
  type ProjectedEntry,
  projectSelected,
  restatedSummary,
  viewCut,
  type ViewCut,
} from "./project.ts";
import { estimateMessagesTokens } from "./tokens.ts";

/**
 * What happens to one request message: sent as is, dropped (its entry contributes nothing to the view, or Pi's
 * request holds it where the view has its own), sent without its reasoning, or replaced by what a checkpoint marker
 * restates. Read off the view item of the message's entry, never decided here.
 */
type Fate = "keep" | "drop" | "reasoning" | "marker";

/** The model view over the live path: {@link projectView}'s entries, extended in place while no fact changes them. */
interface LiveView {
  state: LedgerState;
  edits: number;
  /** Path length it covers. */
  length: number;
  mask: RangeMask;
  /** The state's pins on this path (undefined without any). */
  pins: PinSet | undefined;
  entries: ProjectedEntry[];
  /**
   * The same projections in selection order, before anchored checkpoints move after their range end: `entries` itself
   * while nothing moved. What {@link LiveLedger.advance} keeps and re-projects from.
   */
  base: ProjectedEntry[];
  /**
   * reach[k]: the furthest path position an anchored rule among `state.ranges[0..k]` names (its message or its range
   * end, both on the path; -1 for none), so a walk back from the newest rule stops where no older one reaches.
   */
  reach: number[];
  /** Entry id -> its position in `entries` (the view's order); empty when the ledger maps no request. */
  rank: Map<string, number>;
  /** Entry ids the rules and compactions refer to: such an entry joining the path changes the view. */
  referenced: Set<string>;
  /** The view can differ from Pi's request: a rule, a revoked act, a marker at its head, or a moved cut. */
  active: boolean;
  /** Path index of Pi's newest compaction when the view does not start where it does, else -1. */
  override: number;
}

/** One step of building the output: a run of request messages sent as is, one transformed, or the view's own. */
type Segment = { from: number; to: number } | { at: number; fate: "reasoning" | "marker" } | { ours: AgentMessage[] };

/** The previous request's matching and output plan, reused while the next request repeats it and the view holds. */
interface RequestMemo {
  /** The view the fates and keys were read off (none yet for a new memo). */
  view: LiveView | undefined;
  compactions: LedgerState["compactions"];
  shape: "full" | "conversation";
  /** Path index of Pi's compaction when the view replaces the part of the request it heads, else -1. */
  override: number;
  roles: string[];
  stamps: (number | undefined)[];
  ids: (string | undefined)[];
  fate: Fate[];
  /** Order key: the view rank of the message's entry; unmatched and dropped messages carry the one before them. */
  key: number[];
  /** Entries matched so far: later messages cannot take them. */
  matched: Set<string>;
  plan: Segment[];
  /** The largest order key planned so far: new messages at or above it are appended. */
  lastKey: number;
  /** The largest view rank among the messages decided so far: an unmatched message after them takes it. */
  carry: number;
  /** Request positions re-checked before reuse: both ends of every run of one fate, every transformed message. */
  checks: number[];
  changed: boolean;
}

/** Path entries between two ledger states a live ledger keeps (see {@link LiveLedger}'s `states`). */
const STATE_EVERY = 1024;

export class LiveLedger {
  private readonly path = new ActivePath();
  /**
   * states[j]: the ledger state after path entry (j + 1) * stateEvery - 1. A state per entry would keep every version
   * of the rule list alive, one per fact, which grows with the square of a long session's folds; a path cut back (a
   * `/tree` jump) folds again from the kept state before the cut, fewer than `stateEvery` entries.
   */
  private readonly states: LedgerState[] = [];
  /** The ledger state at the leaf. */
  private leafState: LedgerState = initialLedgerState();
  private readonly byKey = new Map<string, string[]>();
  /** Context edits on the path per target, oldest first. */
  private readonly edits = new Map<string, ContextEditEntry[]>();
  /** tokenSums[i]: estimated tokens of path entries 0..i-1, so any range costs O(1). */
  private readonly tokenSums: number[] = [0];
  private current: LiveView | undefined;
  /** What the previous request matched and how its output was built. */
  private request: RequestMemo | undefined;
  /** Bumped on every context edit that joins or leaves the path (edits change projected content). */
  private editsVersion = 0;
  /** Bumped when entries leave the path: figures cached against the old path no longer hold. */
  private pathVersion = 0;
  /** Tokens the view leaves out of the kept range (folds, revoked acts, less pins), for {@link estimateViewTokens}. */
  private hidden: { state: LedgerState; path: number; from: number; tokens: number } | undefined;

  /** `facts` reads each entry once as it joins the path: the strategies' declarations decide what a record means. */
  readonly facts: LedgerFacts;
  /** Where the view's messages come from: fresh objects unless the owner shares them (the lab does, the host not). */
  private readonly source: MessageSource | undefined;
  /** False when no request is ever mapped onto the view: the per-message match index is not kept. */
  private readonly requests: boolean;
  /** Path entries between two kept states (see `states`). */
  private readonly stateEvery: number;

  /**
   * `source`: where the view's messages come from (fresh objects by default). `requests: false`: the owner only asks
   * for the view (the lab), so the index that maps Pi's request messages to entries is not built. `stateEvery`: path
   * entries between two kept ledger states (tests make it small, so that cutting the path back folds again).
   */
  constructor(facts: LedgerFacts, options: { source?: MessageSource; requests?: boolean; stateEvery?: number } = {}) {
    this.facts = facts;
    this.source = options.source;
    this.requests = options.requests ?? true;
    this.stateEvery = options.stateEvery ?? STATE_EVERY;
  }

  /** Move to `leafId`, folding only entries not already on the path. */
  sync(leafId: string | null, getEntry: (id: string) => SessionEntry | undefined): PathChange {
    const change = this.path.moveTo(leafId, getEntry);
    // Matches made on the old branch no longer hold; a context edit can remove a message from the request, which
    // shifts positions (and a same-millisecond twin could then pass the position check with the wrong decision).
    if (change.removed.length || change.appended.some((e) => e.type === "context_edit")) this.request = undefined;
    if (change.removed.length) {
      this.pathVersion++;
      this.current = undefined;
    }
    for (const entry of change.removed) this.unindex(entry);
    const kept = Math.floor(change.kept / this.stateEvery);
    this.states.length = kept;
    if (change.removed.length)
      this.leafState = reduceBranch(
        this.path.entries.slice(kept * this.stateEvery, change.kept),
        this.facts,
        kept ? this.states[kept - 1] : initialLedgerState(),
      );
    this.tokenSums.length = change.kept + 1;
    let state = this.leafState;
    let position = change.kept;
    for (const entry of change.appended) {
      const fact = this.facts.read(entry);
      state = evolve(state, fact);
      if (++position % this.stateEvery === 0) this.states.push(state);
      this.index(entry);
      // A checkpoint marker sends its system snapshot at most: its text is the checkpoint message, counted there.
      const sent = fact.kind === "compaction" && fact.marker ? markerMessages(entry, undefined) : entryMessages(entry);
      this.tokenSums.push(this.tokenSums[this.tokenSums.length - 1] + estimateMessagesTokens(sent));
    }
    this.leafState = state;
    return change;
  }

  /** Ledger state at the current leaf. */
  get state(): LedgerState {
    return this.leafState;
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

  /** The model view at the leaf, in the order it is sent: exactly `projectBranch(entries).entries`. */
  view(): readonly ProjectedEntry[] {
    return this.liveView().entries;
  }

  /**
   * Estimated tokens of the model view at the leaf, without walking the path: the range the view's cut keeps, minus
   * the union of fold ranges, plus the pinned entries either leaves out. Fold exemptions are ignored, so this slightly
   * underestimates.
   */
  estimateViewTokens(): number {
    const n = this.path.entries.length;
    const sum = (from: number, to: number) => (to < from ? 0 : this.tokenSums[to + 1] - this.tokenSums[from]);
    const { head, from } = this.viewCut();
    if (head < 0) return sum(0, n - 1) - this.hiddenTokens(0);
    const start = from < head ? from : head + 1;
    // The heading compaction, the entries kept before it (a marker's restated summary is its compaction's, in this
    // range), and everything after it.
    const total = sum(head, head) + sum(start, head - 1) + sum(head + 1, n - 1);
    return total - this.hiddenTokens(start);
  }

  /**
   * Tokens of folded ranges and revoked acts' own entries at or after `from`. Rules only cover entries already on
   * the path, so the figure holds until the state changes or entries leave the path.
   */
  private hiddenTokens(from: number): number {
    const state = this.state;
    const cached = this.hidden;
    if (cached && cached.state === state && cached.path === this.pathVersion && cached.from === from)
      return cached.tokens;
    let tokens = 0;
    for (const id of Object.keys(state.revoked)) {
      const i = this.path.indexOf(id);
      if (i >= from) tokens += this.tokenSums[i + 1] - this.tokenSums[i];
    }
    const ranges = state.ranges
      .map(
        (f) =>
          [
            Math.max(from, (f.afterId === null ? -1 : this.path.indexOf(f.afterId)) + 1),
            this.path.indexOf(f.throughId),
          ] as const,
      )
      .filter(([a, b]) => b >= a)
      .sort((x, y) => x[0] - y[0]);
    let end = -1;
    const merged: [number, number][] = [];
    for (const [a, b] of ranges) {
      const lo = Math.max(a, end + 1);
      if (b >= lo) {
        tokens += this.tokenSums[b + 1] - this.tokenSums[lo];
        merged.push([lo, b]);
      }
      end = Math.max(end, b);
    }
    // Pinned entries are sent whatever hides them: those a cut left behind count again, those in a range are not hidden.
    let k = 0;
    for (const i of state.pinFacts.length ? this.pinnedIndexes() : []) {
      if (i < from) tokens -= this.entryTokens(i);
      else {
        while (k < merged.length && merged[k][1] < i) k++;
        if (k < merged.length && merged[k][0] <= i) tokens -= this.entryTokens(i);
      }
    }
    this.hidden = { state, path: this.pathVersion, from, tokens };
    return tokens;
  }

  /** True when a pin holds the entry on the path (itself, or as part of a pinned tool exchange). */
  isPinned(id: string): boolean {
    const i = this.path.indexOf(id);
    return i >= 0 && this.liveView().pins?.has(i) === true;
  }

  /** Path indexes of the pinned entries on the path, in path order. */
  pinnedIndexes(): readonly number[] {
    return this.liveView().pins?.sorted ?? [];
  }

  /** Estimated tokens of the path entry at `index`, as the view sends it (O(1)). */
  entryTokens(index: number): number {
    return index < 0 || index >= this.path.entries.length ? 0 : this.tokenSums[index + 1] - this.tokenSums[index];
  }

  /** True when the entry is on the path and a range hides it, or it is the message of a revoked act. */
  isHidden(id: string): boolean {
    const i = this.path.indexOf(id);
    if (i < 0) return false;
    const entry = this.path.entries[i];
    return this.liveView().mask.hides(entry, i) || isRevokedMessage(entry, this.state, this.facts);
  }

  /**
   * The model view for a provider request Pi built (the `context` hook): Pi's messages mapped onto {@link view}.
   * Each message is matched to its entry and takes that entry's place and form in the view: dropped when the entry
   * contributes nothing, stripped of reasoning, or replaced by what a marker restates; anchored checkpoints thus
   * move after their range end. When the view does not start where Pi's newest compaction does (a restore revoked
   * it or moved its cut back, or a marker stored another start), the part of the request that came from that
   * compaction is replaced by the view's own messages for the same region. Unmatched messages (injected by others)
   * are kept after the message they followed. Returns undefined when the request already is the view.
   * `conversation` is the list Pi's `context` hook gets: no system messages, since Pi puts its current system
   * message back in front afterwards; the view's own region then leaves its system messages out too. `full` is Pi's
   * whole projection (tests, the lab).
   */
  requestContext(messages: AgentMessage[], shape: "full" | "conversation" = "full"): AgentMessage[] | undefined {
    this.mapsRequests();
    const view = this.liveView();
    if (!view.active) return undefined;
    const memo = this.mapRequest(messages, view, shape, view.override, this.request);
    this.request = memo;
    return memo.changed ? this.emit(messages, memo) : undefined;
  }

  /**
   * {@link requestContext} for any list Pi built from the branch without the view's own region: the inputs of a
   * compaction. Nothing is cached, so the request's memo stays intact.
   */
  filterContext(messages: AgentMessage[]): AgentMessage[] | undefined {
    this.mapsRequests();
    const view = this.liveView();
    if (!view.active) return undefined;
    const memo = this.mapRequest(messages, view, "full", -1, undefined);
    return memo.changed ? this.emit(messages, memo) : undefined;
  }

  private mapsRequests(): void {
    if (!this.requests) throw new Error("this live ledger was made without request mapping ({ requests: false })");
  }

  /** The view, extended by the entries appended since it was built, or rebuilt when a fact or an edit changed it. */
  private liveView(): LiveView {
    const state = this.state;
    const view = this.current;
    if (view && view.edits === this.editsVersion && view.length <= this.path.entries.length) {
      if (view.state === state) {
        if (this.extend(view)) return view;
      } else {
        const next = this.advance(view, state);
        if (next) return (this.current = next);
      }
    }
    return (this.current = this.buildView());
  }

  private buildView(): LiveView {
    const state = this.state;
    const pins = pinsOf(state, this.path.entries, () => this.path);
    const mask = new RangeMask(state.ranges, this.path, this.facts, pins);
    const lookup = () => this.path;
    const selected = contextEntries(this.path.entries, state, (id) => this.path.indexOf(id), pins);
    const base = projectSelected(selected, state, this.facts, lookup, mask, this.source);
    const entries = placeAnchored(base, state);
    // Ranks order request messages by the view; a ledger that maps no request needs none.
    const rank = new Map<string, number>();
    if (this.requests) entries.forEach((e, i) => rank.set(e.sourceEntry.id, i));
    const referenced = new Set<string>();
    for (const f of state.ranges) addReferences(referenced, f);
    for (const c of state.compactions) {
      referenced.add(c.firstKeptEntryId);
      if (c.keptFromId) referenced.add(c.keptFromId);
    }
    // A pin can name an entry before it exists (a damaged or hand-made file): its arrival changes the view.
    for (const p of state.pinFacts) referenced.add(p.targetId);
    const reach = anchorReach(state.ranges, 0, this.path, []);
    return this.finish(state, mask, pins, entries, base, reach, rank, referenced);
  }

  /** The view's flags, read off the state and the path (cheap: no walk over the view). */
  private finish(
    state: LedgerState,
    mask: RangeMask,
    pins: PinSet | undefined,
    entries: ProjectedEntry[],
    base: ProjectedEntry[],
    reach: number[],
    rank: Map<string, number>,
    referenced: Set<string>,
  ): LiveView {
    const cut = this.viewCut();
    // Pinned entries the cut left behind sit right after the summary, where Pi's request has none: the view supplies
    // that region itself, as for a moved cut.
    const moved = this.revokedCut();
    const override =
      moved >= 0 ? moved : cut.head >= 0 && pins && pins.before(cut.from).length ? this.contextStart().compaction : -1;
    let revoked = false;
    for (const _ in state.revoked) {
      revoked = true;
      break;
    }
    // Without rules, revoked acts, a marker heading the view or a moved cut, the view is Pi's own projection.
    const active = state.ranges.length > 0 || revoked || headCompaction(state)?.marker === true || override >= 0;
    return {
      state,
      edits: this.editsVersion,
      length: this.path.entries.length,
      mask,
      pins,
      entries,
      base,
      reach,
      rank,
      referenced,
      active,
      override,
    };
  }

  /**
   * The view after a state change that only added range rules (or changed labels), from the previous view: the rules
   * it had hide what they hid, so every entry before the first one a new rule can reach projects as it did, and only
   * the entries from there on are projected again, with the new mask. Anchored checkpoints move across positions, so
   * the kept part also stops before any anchored pair (its message and its range end) that reaches the re-projected
   * part, which keeps a moved message with its end. Anything else (a compaction, a restore, a pin, a rule reaching
   * into what a compaction cut or kept before it, an entry a rule names arriving) gives undefined: rebuild.
   * A live session appends a digest or a tool checkpoint every few steps, and a rebuild walks the whole path, so
   * without this a long session's work grew with its square.
   */
  private advance(view: LiveView, state: LedgerState): LiveView | undefined {
    const before = view.state;
    if (
      state.compactions !== before.compactions ||
      state.pinFacts !== before.pinFacts ||
      state.revoked !== before.revoked ||
      state.ranges.length < before.ranges.length
    )
      return undefined;
    for (let k = 0; k < before.ranges.length; k++) if (state.ranges[k] !== before.ranges[k]) return undefined;
    const path = this.path;
    const n = path.entries.length;
    for (let i = view.length; i < n; i++) {
      const entry = path.entries[i];
      if (view.referenced.has(entry.id) || view.pins?.awaits(entry)) return undefined;
    }
    // The first path position a new rule can hide (or drop the reasoning of); a rule whose ends are not both on the
    // path hides nothing, as in the mask.
    let from = view.length;
    for (let k = before.ranges.length; k < state.ranges.length; k++) {
      const rule = state.ranges[k];
      const through = path.indexOf(rule.throughId);
      const after = rule.afterId === null ? -1 : path.indexOf(rule.afterId);
      if (through < 0 || (rule.afterId !== null && after < 0) || after >= through) continue;
      if (after + 1 < from) from = after + 1;
    }
    // The previous view's reach is taken over (it is discarded) and extended by the new rules.
    const reach = anchorReach(state.ranges, before.ranges.length, path, view.reach);
    const anchored = anchoredStart(state.ranges, reach, path, from);
    from = anchored.from;
    // After a compaction the view is its head, pins, the kept entries, then the path after the head in order: only
    // that last part maps positions one to one.
    const { head } = this.viewCut();
    if (from <= head) return undefined;
    // base[j] is the projection of path entry j + offset from the head's successor on (j = i with no compaction).
    const keep = view.base.length - (view.length - from);
    if (keep < 0 || (head >= 0 && keep < 1)) return undefined;
    // The mask takes the new rules in place when they start after its own (a fact at the leaf), else is built anew.
    let mask = view.mask;
    if (!mask.add(state.ranges.slice(before.ranges.length), path))
      mask = new RangeMask(state.ranges, path, this.facts, view.pins);
    const cut = this.viewCut();
    const tail = projectEntries(path.entries.slice(from, n), {
      state,
      facts: this.facts,
      mask,
      indexOf: (id) => path.indexOf(id),
      get: (id) => path.get(id),
      editOf: (id) => this.edits.get(id)?.findLast((e) => this.selected(path.indexOf(e.id), cut)),
      source: this.source,
    });
    // Fresh arrays: a caller may still hold the previous view's list.
    const base = view.base.slice(0, keep);
    for (const p of tail) base.push(p);
    const placed = placeAnchoredBy(tail, anchored.rules);
    let entries = base;
    if (view.entries !== view.base || placed !== tail) {
      entries = view.entries.slice(0, keep);
      for (const p of placed) entries.push(p);
    }
    // The rank and the references only ever serve the current view: the previous one's are taken over and updated.
    const rank = view.rank;
    if (this.requests) for (let r = keep; r < entries.length; r++) rank.set(entries[r].sourceEntry.id, r);
    const referenced = view.referenced;
    for (let k = before.ranges.length; k < state.ranges.length; k++) addReferences(referenced, state.ranges[k]);
    return this.finish(state, mask, view.pins, entries, base, reach, rank, referenced);
  }

  /**
   * Add the entries appended since the view was built. The state did not change, so no rule, compaction or restore
   * is new: every appended entry follows the view's head and is projected on its own, at the end of the view. An
   * entry a rule or a compaction names (a file can name an entry before it exists) needs a rebuild instead.
   */
  private extend(view: LiveView): boolean {
    const n = this.path.entries.length;
    if (view.length === n) return true;
    const cut = this.viewCut();
    const added = this.path.entries.slice(view.length, n);
    if (added.some((e) => view.referenced.has(e.id) || view.pins?.awaits(e))) return false;
    const projected = projectEntries(added, {
      state: view.state,
      facts: this.facts,
      mask: view.mask,
      indexOf: (id) => this.path.indexOf(id),
      get: (id) => this.path.get(id),
      // The newest edit of the target that is itself in the view, as `projectView` takes them.
      editOf: (id) => this.edits.get(id)?.findLast((e) => this.selected(this.path.indexOf(e.id), cut)),
      source: this.source,
    });
    for (const p of projected) {
      if (this.requests) view.rank.set(p.sourceEntry.id, view.entries.length);
      view.entries.push(p);
      if (view.base !== view.entries) view.base.push(p);
    }
    view.length = n;
    return true;
  }

  /** Is the path entry at `i` in the view's selection (see `contextEntries`)? Context edits are never system messages. */
  private selected(i: number, cut: ViewCut): boolean {
    return cut.head < 0 || i >= cut.head || (i >= cut.from && i < cut.head);
  }

  /**
   * Match request messages to entries and read each one's fate and place off the view, reusing the previous
   * request's work while the new one repeats it.
   */
  private mapRequest(
    messages: AgentMessage[],
    view: LiveView,
    shape: RequestMemo["shape"],
    override: number,
    previous: RequestMemo | undefined,
  ): RequestMemo {
    const state = this.state;
    let memo = previous;
    if (!memo || memo.shape !== shape || memo.compactions !== state.compactions || memo.override !== override) {
      memo = {
        view: undefined,
        compactions: state.compactions,
        shape,
        override,
        roles: [],
        stamps: [],
        ids: [],
        fate: [],
        key: [],
        matched: new Set(),
        plan: [],
        lastKey: -Infinity,
        carry: -1,
        checks: [],
        changed: false,
      };
    }
    const before = memo.roles.length;
    const same = repeated(messages, memo);
    for (let i = same; i < memo.ids.length; i++) {
      const id = memo.ids[i];
      if (id !== undefined) memo.matched.delete(id);
    }
    memo.roles.length = memo.stamps.length = memo.ids.length = memo.fate.length = memo.key.length = same;

    const tail = messages.slice(same);
    const start = this.contextStart();
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
    });

    // A new view changes fates and places of old messages too; otherwise only the new ones need them.
    const fresh = memo.view !== view;
    memo.view = view;
    // A shortened request re-decides from the start: the carried rank is only known at the old end.
    const from = fresh || same < before ? 0 : same;
    this.decide(memo, view, from);
    if (!fresh && same === before && appendable(memo, same)) extendPlan(memo, same);
    else this.planAll(memo, view);
    return memo;
  }

  /**
   * Fate and order key of the messages from `from` on, read off the view.
   */
  private decide(memo: RequestMemo, view: LiveView, from: number): void {
    const { override, ids, fate, key } = memo;
    let carry = from > 0 ? memo.carry : override >= 0 ? this.lastOursRank(view, override) : -1;
    for (let i = from; i < ids.length; i++) {
      const id = ids[i];
      let f: Fate = "drop";
      if (id === undefined) f = "keep";
      else if (override >= 0 && this.path.indexOf(id) <= override) {
        // Pi's part of the request that the view replaces (its compaction's snapshot and summary included).
      } else {
        const r = view.rank.get(id);
        if (r !== undefined) {
          const item = view.entries[r];
          // A marker restates a summary; its system snapshot is sent as it is.
          if (item.messages.length)
            f = item.restates && memo.roles[i] !== "system" ? "marker" : item.stripped ? "reasoning" : "keep";
          fate[i] = f;
          key[i] = r;
          // Only anchored checkpoints sit earlier in the view than in the request; what follows one in the
          // request stays after what preceded it.
          carry = Math.max(carry, r);
          continue;
        }
      }
      fate[i] = f;
      key[i] = carry;
    }
    memo.carry = carry;
  }

  /** Rank of the last view entry in the region the view supplies itself (path index at most `override`). */
  private lastOursRank(view: LiveView, override: number): number {
    let last = -1;
    view.entries.forEach((e, r) => {
      if (this.path.indexOf(e.sourceEntry.id) <= override) last = r;
    });
    return last;
  }

  /** Build the output plan from every message's fate and key, and the view's own region when it replaces Pi's. */
  private planAll(memo: RequestMemo, view: LiveView): void {
    const { override, fate, key } = memo;
    type Item = { key: number; at: number; ours?: AgentMessage[] };
    const items: Item[] = [];
    if (override >= 0) {
      view.entries.forEach((e, r) => {
        if (!e.messages.length || this.path.indexOf(e.sourceEntry.id) > override) return;
        const ours = memo.shape === "full" ? e.messages : e.messages.filter((m) => m.role !== "system");
        if (ours.length) items.push({ key: r, at: -1, ours });
      });
    }
    let sorted = true;
    for (let i = 0; i < fate.length; i++) {
      if (fate[i] === "drop") continue;
      const last = items[items.length - 1];
      if (last && last.key > key[i]) sorted = false;
      items.push({ key: key[i], at: i });
    }
    // Anchored checkpoints (and the view's own region) sit elsewhere than Pi put them: order by the view, the
    // region first on ties, request order otherwise.
    if (!sorted || override >= 0) items.sort((a, b) => a.key - b.key || a.at - b.at);
    const plan: Segment[] = [];
    let changed = override >= 0;
    let expected = 0;
    for (const item of items) {
      if (item.ours) plan.push({ ours: item.ours });
      else if (fate[item.at] === "keep") push(plan, item.at);
      else plan.push({ at: item.at, fate: fate[item.at] as "reasoning" | "marker" });
      if (item.ours || item.at !== expected || fate[item.at] !== "keep") changed = true;
      if (!item.ours) expected = item.at + 1;
    }
    if (expected !== fate.length) changed = true;
    memo.plan = plan;
    memo.lastKey = items.length ? items[items.length - 1].key : -Infinity;
    memo.changed = changed;
    memo.checks = [];
    for (let i = 0; i < fate.length; i++) if (isCheck(memo, i)) memo.checks.push(i);
  }

  /** Run the plan over this request's messages. */
  private emit(messages: AgentMessage[], memo: RequestMemo): AgentMessage[] {
    let restated: AgentMessage | undefined | null = null;
    let size = 0;
    for (const segment of memo.plan)
      size += "from" in segment ? segment.to - segment.from : "ours" in segment ? segment.ours.length : 1;
    // One preallocated copy: slicing every run and concatenating the slices allocates twice.
    const out = new Array<AgentMessage>(size);
    let k = 0;
    for (const segment of memo.plan) {
      if ("from" in segment) {
        for (let i = segment.from; i < segment.to; i++) out[k++] = messages[i];
      } else if ("ours" in segment) {
        for (const m of segment.ours) out[k++] = m;
      } else if (segment.fate === "reasoning") out[k++] = withoutReasoning(messages[segment.at]);
      else {
        if (restated === null) restated = restatedSummary(this.state, (entryId) => this.path.get(entryId), this.source);
        if (restated) out[k++] = restated;
      }
    }
    out.length = k;
    return out;
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
    // Pi's compaction snapshot replaces the system messages it kept before it.
    if (i < start.compaction && entry.type === "message" && entry.message.role === "system") return false;
    const edit = this.edits.get(id)?.at(-1);
    return !(edit && edit.replacement === null && this.path.indexOf(edit.id) >= start.from);
  }

  private projectedContent(id: string): unknown {
    const entry = this.path.get(id);
    if (!entry) return undefined;
    const edit = this.edits.get(id)?.at(-1);
    const message = entryMessages(entry).find((m) => m.role !== "system") as
      | { role: string; content?: unknown }
      | undefined;
    if (!edit?.replacement || !message) return message?.content;
    const content = edit.replacement.content;
    return (message.role === "assistant" || message.role === "toolResult") && typeof content === "string"
      ? [{ type: "text", text: content }]
      : content;
  }

  private index(entry: SessionEntry): void {
    if (entry.type === "context_edit") {
      this.editsVersion++;
      const list = this.edits.get(entry.targetId);
      if (list) list.push(entry);
      else this.edits.set(entry.targetId, [entry]);
    }
    if (!this.requests) return;
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
    if (!this.requests) return;
    for (const key of entryKeys(entry)) {
      const list = this.byKey.get(key);
      if (!list) continue;
      const at = list.lastIndexOf(entry.id);
      if (at >= 0) list.splice(at, 1);
      if (!list.length) this.byKey.delete(key);
    }
  }
}

/** Add the entries a rule names to `referenced`: such an entry joining the path changes what the rule hides. */
function addReferences(referenced: Set<string>, rule: RangeRule): void {
  if (rule.afterId !== null) referenced.add(rule.afterId);
  referenced.add(rule.throughId);
  if (rule.keepToolResultsOf) referenced.add(rule.keepToolResultsOf);
}

/** Extend `reach` (see `LiveView.reach`) over `ranges[from..]`. */
function anchorReach(
  ranges: readonly RangeRule[],
  from: number,
  path: { indexOf(id: string): number },
  reach: number[],
): number[] {
  let furthest = from > 0 ? reach[from - 1] : -1;
  reach.length = from;
  for (let k = from; k < ranges.length; k++) {
    const pair = anchoredPair(ranges[k], path);
    if (pair && pair[1] > furthest) furthest = pair[1];
    reach.push(furthest);
  }
  return reach;
}

/** An anchored rule's message and range end as [lower, higher] path positions, when both are on the path. */
function anchoredPair(rule: RangeRule, path: { indexOf(id: string): number }): [number, number] | undefined {
  if (!rule.anchored) return undefined;
  const at = path.indexOf(rule.entryId);
  const end = path.indexOf(rule.throughId);
  if (at < 0 || end < 0) return undefined;
  return at < end ? [at, end] : [end, at];
}

/**
 * The first path position whose place in the view can change when the entries from `from` on are projected again,
 * and the anchored rules that place entries from there on: `from` is lowered to the lower end of every anchored pair
 * (a rule's message and its range end) that reaches it or later, until no pair straddles it. A message moves right
 * after its range end, so a pair that straddles the boundary would put a re-projected message among the kept ones, or
 * take a kept one away; past the fixpoint, what lies before it is placed by pairs that lie wholly before it, and what
 * follows by the pairs returned. The walk goes back from the newest rule only as far as `reach` says a rule reaches.
 */
function anchoredStart(
  ranges: readonly RangeRule[],
  reach: readonly number[],
  path: { indexOf(id: string): number },
  from: number,
): { from: number; rules: RangeRule[] } {
  let changed = true;
  while (changed) {
    changed = false;
    for (let k = ranges.length - 1; k >= 0 && reach[k] >= from; k--) {
      const pair = anchoredPair(ranges[k], path);
      if (pair && pair[0] < from && pair[1] >= from) {
        from = pair[0];
        changed = true;
      }
    }
  }
  const rules: RangeRule[] = [];
  for (let k = ranges.length - 1; k >= 0 && reach[k] >= from; k--) {
    const pair = anchoredPair(ranges[k], path);
    if (pair && pair[1] >= from) rules.push(ranges[k]);
  }
  return { from, rules: rules.reverse() };
}

/**
 * How many leading messages repeat the previous request, checked at the memo's check positions only: both ends of
 * every run of one fate and every transformed message. A shift (a message injected or removed) moves some run's
 * end and is caught; a change confined to the inside of one run (a message replaced by another with the same
 * fate) passes, and the output then carries the new request's message in its place, as a kept run is copied
 * from the request as it is. Reading every message instead would make each request cost O(session).
 */
function repeated(messages: AgentMessage[], memo: RequestMemo): number {
  const limit = Math.min(messages.length, memo.roles.length);
  let good = 0;
  for (const p of memo.checks) {
    if (p >= limit) break;
    const m = messages[p] as { role: string; timestamp?: number };
    if (m.role !== memo.roles[p] || m.timestamp !== memo.stamps[p]) return good;
    good = p + 1;
  }
  return messages.length >= memo.roles.length ? memo.roles.length : good;
}

/** A position whose message must repeat for the memo to hold: an end of a run of one fate, or a transformed one. */
function isCheck(memo: RequestMemo, i: number): boolean {
  const { fate, ids } = memo;
  const cls = (j: number) => (ids[j] === undefined ? "u" : "") + fate[j];
  if (i === 0 || i === fate.length - 1) return true;
  if (fate[i] === "reasoning" || fate[i] === "marker") return true;
  const c = cls(i);
  return c !== cls(i - 1) || c !== cls(i + 1);
}

/** The new messages from `from` on sort after everything planned: they can be appended to the plan. */
function appendable(memo: RequestMemo, from: number): boolean {
  const { key, fate } = memo;
  let last = memo.lastKey;
  for (let i = from; i < key.length; i++) {
    if (fate[i] === "drop") continue;
    if (key[i] < last) return false;
    last = key[i];
  }
  return true;
}

/** Append the new messages from `from` on to the plan and the checks. */
function extendPlan(memo: RequestMemo, from: number): void {
  const { fate, checks, plan } = memo;
  // The old last message was checked as the request's end; inside a run it needs no check any more.
  if (from > 0 && checks[checks.length - 1] === from - 1 && !isCheck(memo, from - 1)) checks.pop();
  for (let i = from; i < fate.length; i++) {
    if (fate[i] === "keep") push(plan, i);
    else if (fate[i] !== "drop") plan.push({ at: i, fate: fate[i] as "reasoning" | "marker" });
    if (fate[i] !== "keep") memo.changed = true;
    if (fate[i] !== "drop") memo.lastKey = memo.key[i];
    if (isCheck(memo, i)) checks.push(i);
  }
}

/** Send request message `at` as is: extend the last run when it ends right before it. */
function push(plan: Segment[], at: number): void {
  const last = plan[plan.length - 1];
  if (last && "from" in last && last.to === at) last.to = at + 1;
  else plan.push({ from: at, to: at + 1 });
}
