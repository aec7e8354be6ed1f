// Common ground of rows that write facts into a simulated ledger (Pi native, our strategies): the branch as
// the row's session file would hold it, facts appended with deterministic ids, and the model view rebuilt
// from the branch after each fact and extended entry by entry in between.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { CompactionEntry, SessionEntry } from "../../log/entries.ts";
import { initialLedgerState, type LedgerState, reduceBranch } from "../../projection/ledger-state.ts";
import { LiveLedger } from "../../projection/live-ledger.ts";
import {
  type ProjectedEntry,
  projectBranch,
  projectEntries,
  projectView,
  SharedMessages,
} from "../../projection/project.ts";
import { type PathLookup, RangeMask } from "../../projection/ranges.ts";
import { PositionIndex } from "../../log/position-index.ts";
import { LEDGER_FACTS } from "../../strategies/catalog.ts";
import { View } from "../view.ts";
import { spill, spillProperty } from "../spill.ts";

/**
 * The messages of every simulated ledger's entries, one object per entry for the whole process: a view projected
 * again after a fact holds the same objects as before for the entries the fact did not change, so comparing views
 * and every per-message memo downstream (token counts, wire fingerprints, text indexes) cost nothing for them. Rows
 * never change a message (they build new ones), and the messages never reach Pi.
 */
export const labMessages = new SharedMessages();

/** What an entry shows the model in a lab view: its messages, less `!!` bash output (kept out of context). */
function shown(messages: readonly AgentMessage[]): AgentMessage[] {
  return messages.filter(
    (m) => !(m.role === "bashExecution" && (m as { excludeFromContext?: boolean }).excludeFromContext),
  );
}

/**
 * The projection {@link SimulatedLedger.reproject} last put in the view, kept while the view is the branch in path
 * order (no compaction, pin, restore, anchored rule or context edit): then a fact that only adds range rules changes
 * the view from the first entry its rules can hide on, and the entries before it keep their projection.
 */
interface PathOrderProjection {
  state: LedgerState;
  /** entries[i]: the projection of branch[i], for the branch as it was then (entries appended since are not here). */
  entries: ProjectedEntry[];
  /** shownBefore[i]: messages the view holds for entries[0..i). */
  shownBefore: number[];
  /** The mask of the state's rules, kept across folds (new rules are added in place); built when first needed. */
  mask?: RangeMask;
}

export class SimulatedLedger {
  readonly branch: SessionEntry[] = [];
  readonly view = new View();
  /** The branch's projection, kept live (see {@link projected}). */
  private readonly live = new BranchProjection(this.branch);
  private facts = 0;
  private relinkNext = false;
  private lastCompaction: SessionEntry | undefined;
  /** Branch positions before this one hold no fact of ours whose text is still in memory (see {@link packCovered}). */
  private packedTo = 0;
  /** The ledger state of branch[0..folded): caught up in one draft when a projection needs it (see {@link ledgerState}). */
  private state: LedgerState = initialLedgerState();
  private folded = 0;
  /** Entry id -> its branch position (the last one, as a one-shot lookup over the array gives). */
  private readonly positions = new PositionIndex((at) => this.branch[at].id);
  private readonly lookup: PathLookup = {
    indexOf: (id) => this.positions.get(id) ?? -1,
    get: (id) => this.branch[this.positions.get(id) ?? -1],
  };
  /** An id appeared twice, or a context edit joined: positions or edits can change earlier entries' projection. */
  private irregular = false;
  /**
   * Every entry's parent is the entry before it, and no entry is the first one's parent: Pi's walk from the leaf then
   * gives the whole branch, so a suffix of it is read as the same path (see {@link piWindow}).
   */
  private chained = true;
  /** Position of the newest compaction on the branch (-1: none). */
  private newestCompaction = -1;
  private pathOrder: PathOrderProjection | undefined;
  /**
   * What {@link resetToProjection} last put in the view: the projection's first `length` entries (the live view's list
   * only grows after that, or is replaced by a new one) and the shown messages before each.
   */
  private lastProjection: { entries: readonly ProjectedEntry[]; length: number; shownBefore: number[] } | undefined;

  private readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  /** A source entry: kept on the branch (re-parented after one of our facts) and shown in the view. */
  appendSource(entry: SessionEntry): void {
    let stored = entry;
    if (this.relinkNext) {
      stored = { ...entry, parentId: this.leafId } as SessionEntry;
      this.relinkNext = false;
    }
    this.push(stored);
    for (const m of shown(labMessages.of(stored))) this.view.push(m);
  }

  get leafId(): string | null {
    return this.branch.length ? this.branch[this.branch.length - 1].id : null;
  }

  /** Append a fact of ours (compaction, fold) with a derived id, parented on the leaf. */
  appendFact(body: Record<string, unknown>): SessionEntry {
    const last = this.branch[this.branch.length - 1];
    const entry = {
      ...body,
      id: `${this.prefix}${(this.facts++).toString(36).padStart(4, "0")}`,
      parentId: this.leafId,
      timestamp: last?.timestamp ?? "1970-01-01T00:00:00.000Z",
    } as unknown as SessionEntry;
    this.push(entry);
    this.relinkNext = true;
    if (entry.type === "compaction") {
      if (this.lastCompaction) packSummary(this.lastCompaction);
      this.lastCompaction = entry;
      this.packCovered(entry as CompactionEntry);
    }
    return entry;
  }

  /**
   * Move the texts of our own messages (digests, checkpoints, folds) that a compaction leaves before its cut out of
   * memory: the view starts at the cut, and a long replay writes thousands of them.
   */
  private packCovered(compaction: CompactionEntry): void {
    const cut = this.positions.get(compaction.firstKeptEntryId);
    if (cut === undefined) return;
    for (let i = this.packedTo; i < cut; i++) {
      const entry = this.branch[i];
      if (entry.type === "custom_message" && entry.id.startsWith(this.prefix)) packContent(entry);
    }
    this.packedTo = Math.max(this.packedTo, cut);
  }

  private push(entry: SessionEntry): void {
    if (this.positions.has(entry.id) || entry.type === "context_edit") {
      this.irregular = true;
      this.pathOrder = undefined;
    }
    const first = this.branch[0];
    if ((first && entry.parentId !== this.leafId) || (first?.parentId != null && entry.id === first.parentId))
      this.chained = false;
    if (entry.type === "compaction") this.newestCompaction = this.branch.length;
    this.positions.set(entry.id, this.branch.length);
    this.branch.push(entry);
  }

  /**
   * The entries Pi's compaction preparation and Pi's projection read the same way as the whole branch: from the
   * newest compaction's first kept entry on (from the compaction when that entry is not before it). Both start from
   * the newest compaction and never look behind its kept entries, and on a chained branch with unique ids the
   * suffix is still a path to the same leaf. Anything else (a repeated id, a context edit, a link that skips) gets
   * the whole branch. Pi runs both at every compaction: on the whole branch that work grows with the session's square.
   */
  piWindow(): SessionEntry[] {
    if (!this.chained || this.irregular || this.newestCompaction < 0) return this.branch;
    const compaction = this.branch[this.newestCompaction] as CompactionEntry;
    const kept = this.positions.get(compaction.firstKeptEntryId);
    const start = kept !== undefined && kept < this.newestCompaction ? kept : this.newestCompaction;
    if (start === 0) return this.branch;
    const window = this.branch.slice(start);
    // Older compactions kept in the window project to nothing, but Pi's cut point asks each entry after the cut for
    // its messages, which reads a compaction's summary back from the spill file. When compactions come at every step
    // (a summary that no longer makes room), the window holds dozens of them: Pi gets them without their text.
    for (let i = 0; i < window.length; i++)
      if (window[i].type === "compaction" && start + i !== this.newestCompaction)
        window[i] = supersededStandIn(window[i] as CompactionEntry);
    return window;
  }

  /**
   * The ledger state at the leaf: `reduceBranch(branch, LEDGER_FACTS)`. Entries appended since the last call are
   * folded in one draft, so rows that project rarely pay no state copy per fact, and an unchanged state stays the
   * same object (what {@link reproject} compares).
   */
  get ledgerState(): LedgerState {
    if (this.folded < this.branch.length) {
      this.state = reduceBranch(this.branch.slice(this.folded), LEDGER_FACTS, this.state);
      this.folded = this.branch.length;
    }
    return this.state;
  }

  /**
   * The model view of the branch: exactly `projectBranch(branch, LEDGER_FACTS).entries`. A live ledger follows the
   * branch, so between facts the view is extended by the entries appended since the last call instead of projecting
   * the whole branch again at every step boundary (which made a long session's replay grow with its square).
   */
  projected(): readonly ProjectedEntry[] {
    return this.live.entries();
  }

  /**
   * Set the view to the branch's projection, `projectBranch(branch, LEDGER_FACTS).messages` less `!!` output, after
   * a fact. The state and positions are kept as entries arrive, so a projection walks the view's entries only (from
   * the cut of a compaction on); while the view is the branch in path order, a fact that only adds range rules (a
   * fold) re-projects from the first entry its rules reach, and the view keeps what lies before. Rows that write facts
   * after a compaction often (the notice-policy fold row) set the view with {@link resetToProjection} instead.
   */
  reproject(): void {
    this.lastProjection = undefined;
    const state = this.ledgerState;
    const known = this.pathOrder;
    const from = known ? this.unchangedBefore(known, state) : 0;
    if (!known || from === 0) {
      const entries = projectView(
        this.branch,
        state,
        LEDGER_FACTS,
        () => this.lookup,
        undefined,
        undefined,
        labMessages,
      );
      const messages: AgentMessage[] = [];
      const shownBefore = [0];
      for (const e of entries) {
        for (const m of shown(e.messages)) messages.push(m);
        shownBefore.push(messages.length);
      }
      this.pathOrder = this.inPathOrder(state) ? { state, entries, shownBefore } : undefined;
      this.view.replaceAll(messages);
      return;
    }
    // The mask of every rule answers for the re-projected entries as one of the rules reaching them would; it is kept
    // and takes the new rules in place (filtering the rules at every fold made a long replay grow with its square).
    const added = state.ranges.slice(known.state.ranges.length);
    if (!known.mask?.add(added, this.lookup)) known.mask = new RangeMask(state.ranges, this.lookup, LEDGER_FACTS);
    const projected = projectEntries(this.branch.slice(from), {
      state,
      facts: LEDGER_FACTS,
      mask: known.mask,
      indexOf: this.lookup.indexOf,
      get: this.lookup.get,
      editOf: () => undefined,
      source: labMessages,
    });
    const { entries, shownBefore } = known;
    entries.length = from;
    shownBefore.length = from + 1;
    const tail: AgentMessage[] = [];
    for (const e of projected) {
      entries.push(e);
      for (const m of shown(e.messages)) tail.push(m);
      shownBefore.push(shownBefore[from] + tail.length);
    }
    known.state = state;
    this.view.replaceFrom(shownBefore[from], tail);
  }

  /**
   * Is the projection the branch in path order, each entry projected on its own, with every rule's ends on the
   * branch? Then no entry's projection depends on entries after it except through rules that name them.
   */
  private inPathOrder(state: LedgerState): boolean {
    if (this.irregular || state.compactions.length || state.pinFacts.length) return false;
    for (const _ in state.revoked) return false;
    return state.ranges.every((rule) => this.resolves(rule, this.branch.length));
  }

  /** The rule is not anchored and both its ends are on the first `length` entries. */
  private resolves(rule: LedgerState["ranges"][number], length: number): boolean {
    const through = this.lookup.indexOf(rule.throughId);
    const after = rule.afterId === null ? -1 : this.lookup.indexOf(rule.afterId);
    return !rule.anchored && through >= 0 && through < length && (rule.afterId === null || after >= 0);
  }

  /**
   * How many leading entries of `known` the state leaves as they are: all of them when it is the same state; up to
   * the first entry a new rule can hide when the state only gained range rules (0: project the whole branch).
   */
  private unchangedBefore(known: PathOrderProjection, state: LedgerState): number {
    if (this.irregular) return 0;
    if (state === known.state) return known.entries.length;
    const before = known.state;
    if (
      state.compactions !== before.compactions ||
      state.pinFacts !== before.pinFacts ||
      state.revoked !== before.revoked ||
      state.ranges.length < before.ranges.length
    )
      return 0;
    for (let k = 0; k < before.ranges.length; k++) if (state.ranges[k] !== before.ranges[k]) return 0;
    let from = known.entries.length;
    for (let k = before.ranges.length; k < state.ranges.length; k++) {
      const rule = state.ranges[k];
      if (!this.resolves(rule, this.branch.length)) return 0;
      from = Math.min(from, rule.afterId === null ? 0 : this.lookup.indexOf(rule.afterId) + 1);
    }
    return from;
  }

  /** Set the view to messages projected elsewhere (Pi's own projection, the live one). */
  reset(messages: readonly AgentMessage[]): void {
    this.pathOrder = undefined;
    this.lastProjection = undefined;
    this.view.replaceAll(shown(messages));
  }

  /**
   * Set the view to {@link projected}'s messages (less `!!` output), as `reset` of them would. The live view keeps the
   * projections of the entries before the first one a new rule reaches (the same objects), so the view keeps their
   * messages without walking them: only what follows the last projection's common prefix is handed over. Between
   * two calls the view only grows at its end (source entries appended), so that prefix is still what it holds.
   */
  resetToProjection(): void {
    const entries = this.projected();
    const known = this.lastProjection;
    this.pathOrder = undefined;
    let same = 0;
    let shownBefore = [0];
    if (known) {
      const n = Math.min(known.length, entries.length);
      // The same list only grew at its end; another one shares the entries the live view kept, by identity.
      if (known.entries === entries) same = n;
      else while (same < n && known.entries[same] === entries[same]) same++;
      shownBefore = known.shownBefore;
      shownBefore.length = same + 1;
    }
    const tail: AgentMessage[] = [];
    for (let i = same; i < entries.length; i++) {
      for (const m of shown(entries[i].messages)) tail.push(m);
      shownBefore.push(shownBefore[same] + tail.length);
    }
    this.lastProjection = { entries, length: entries.length, shownBefore };
    this.view.replaceFrom(shownBefore[same], tail);
  }
}

/**
 * A live ledger kept on an append-only array of entries. It is synced lazily, when a projection is asked for, by
 * following the appended entries' parent links back to its path; should that walk not give exactly the array
 * (an entry whose parent is not the one before it, an id seen twice), the projection falls back to
 * {@link projectBranch} of the whole array from then on, so the view is the branch's whatever the file holds.
 */
export class BranchProjection {
  private readonly branch: readonly SessionEntry[];
  private readonly live = new LiveLedger(LEDGER_FACTS, { source: labMessages, requests: false });
  /** Entries of `branch` the live ledger holds, in order. */
  private synced = 0;
  private broken = false;

  constructor(branch: readonly SessionEntry[]) {
    this.branch = branch;
  }

  /** `projectBranch(branch, LEDGER_FACTS).entries`, for the array as it is now. */
  entries(): readonly ProjectedEntry[] {
    if (!this.broken && this.sync()) return this.live.view();
    return projectBranch(this.branch, LEDGER_FACTS, undefined, labMessages).entries;
  }

  private sync(): boolean {
    const n = this.branch.length;
    if (this.synced === n) return true;
    const from = this.synced;
    const fresh = new Map<string, SessionEntry>();
    for (let i = from; i < n; i++) {
      const entry = this.branch[i];
      if (fresh.has(entry.id) || this.live.indexOf(entry.id) >= 0) return this.fail();
      fresh.set(entry.id, entry);
    }
    const change = this.live.sync(this.branch[n - 1].id, (id) => fresh.get(id) ?? this.live.getEntry(id));
    const exact =
      change.removed.length === 0 &&
      change.kept === from &&
      change.appended.length === n - from &&
      change.appended.every((entry, k) => entry === this.branch[from + k]);
    if (!exact) return this.fail();
    this.synced = n;
    return true;
  }

  private fail(): false {
    this.broken = true;
    return false;
  }
}

const standIns = new WeakMap<CompactionEntry, CompactionEntry>();

/**
 * A superseded compaction as Pi's preparation needs it: the same entry, with no summary text and no details. Pi
 * projects only the newest compaction and takes file lists from it alone; of an older one it asks only whether it
 * shows a message, which a compaction always does. Built without reading the moved fields.
 */
function supersededStandIn(entry: CompactionEntry): CompactionEntry {
  let standIn = standIns.get(entry);
  if (!standIn) {
    const { type, id, parentId, timestamp, firstKeptEntryId, tokensBefore, fromHook } = entry;
    standIn = {
      type,
      id,
      parentId,
      timestamp,
      firstKeptEntryId,
      tokensBefore,
      fromHook,
      summary: "",
    } as CompactionEntry;
    standIns.set(entry, standIn);
  }
  return standIn;
}

/**
 * Move a superseded compaction's summary and large details out of memory (see spill.ts): only the newest compaction
 * is projected from, and Pi keeps the older ones on disk too. A planned compaction's details hold a code per summary
 * line, so they grow with the summary. Details are moved field by field: the small ones (`v`, `strategy`), which
 * the reducers read on every rebuild, stay plain. Reading a moved property reads it back, as JSON when it was
 * stored as JSON, so code that looks back sees what a reader of Pi's session file would see.
 */
function packSummary(entry: SessionEntry): void {
  labMessages.forget(entry);
  const record = entry as unknown as { summary?: unknown; details?: unknown };
  if (typeof record.summary === "string" && record.summary.length >= PACK_MIN_CHARS)
    spillProperty(record, "summary", spill(record.summary));
  const details = record.details;
  if (details === undefined || details === null) return;
  if (typeof details !== "object" || Array.isArray(details)) {
    packJson(record, "details", details);
    return;
  }
  // A copy: the planner's own object is not changed under it.
  const fields: Record<string, unknown> = { ...(details as Record<string, unknown>) };
  let moved = false;
  for (const [key, value] of Object.entries(fields)) moved = packJson(fields, key, value) || moved;
  if (moved) record.details = fields;
}

/** Move the text of one of our custom messages out of memory; reading `content` reads it back. */
function packContent(entry: SessionEntry): void {
  const record = entry as unknown as { content?: unknown };
  const descriptor = Object.getOwnPropertyDescriptor(record, "content");
  if (typeof descriptor?.value !== "string" || descriptor.value.length < COVERED_MIN_CHARS) return;
  labMessages.forget(entry);
  spillProperty(record, "content", spill(descriptor.value));
}

/** Below this, moving a covered message's text out saves less than its getter costs (it is rarely read again). */
const COVERED_MIN_CHARS = 1024;

/** Below this, moving a value out saves too little to pay for the getter and the read. */
const PACK_MIN_CHARS = 4096;

function packJson(record: object, key: string, value: unknown): boolean {
  // Pi writes details to the session file as JSON, so the round trip gives what a reader of that file sees.
  const json = JSON.stringify(value) as string | undefined;
  if (json === undefined || json.length < PACK_MIN_CHARS) return false;
  spillProperty(record, key, reparsed(spill(json)));
  return true;
}

/**
 * A reader of spilled JSON that parses once for reads close together: a planner checks every prior compaction's
 * details at each compaction, so reading them afresh each time grew with the square of the compactions. The parsed
 * value is held through a WeakRef only: it stays while some caller holds it (and to the end of the current job),
 * then the collector may take it and the next read parses the text again, so the details do not return to memory.
 */
function reparsed(read: () => string): () => unknown {
  let last: WeakRef<object> | undefined;
  return () => {
    const known = last?.deref();
    if (known !== undefined) return known;
    const value = JSON.parse(read()) as unknown;
    if (typeof value === "object" && value !== null) last = new WeakRef(value);
    return value;
  };
}
