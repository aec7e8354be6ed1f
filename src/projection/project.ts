// The model view: the messages a provider request carries, computed from the branch alone.
// Mirrors Pi's compaction-aware projection, then applies our ranges. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntry, SessionEntry } from "../log/entries.ts";
import type { LedgerFacts } from "../log/facts.ts";
import { RangeMask, withoutReasoning, type PathLookup } from "./ranges.ts";
import {
  activePins,
  effectiveCompaction,
  reduceBranch,
  headCompaction,
  isRevokedMessage,
  keptIndex,
  type LedgerState,
  type RangeRule,
} from "./ledger-state.ts";
import { PinSet } from "./pins.ts";

/** One branch entry and what it contributes to the model view (nothing, for state entries and hidden ones). */
export interface ProjectedEntry {
  sourceEntry: SessionEntry;
  messages: AgentMessage[];
  /** True when a range (or a revoked act, for its own message) hid this entry's contribution. */
  folded?: boolean;
  /** A completed answer inside a keep-dialogue range: its messages are sent without their reasoning. */
  stripped?: true;
  /** A checkpoint marker heading the view: it sends its system snapshot and the summary it restates. */
  restates?: true;
}

export interface BranchProjection {
  entries: ProjectedEntry[];
  messages: AgentMessage[];
  thinkingLevel: string;
  model: { provider: string; modelId: string } | null;
}

/** Messages one entry contributes before edits, exactly as Pi builds them. */
export function entryMessages(entry: SessionEntry): AgentMessage[] {
  switch (entry.type) {
    case "message": {
      const message = entry.message as AgentMessage & { content?: unknown };
      // Hand-edited or old files may carry null content; Pi substitutes an empty value, and so do we.
      if (message.role === "system" && message.content == null) return [{ ...message, content: "" } as AgentMessage];
      if (
        (message.role === "user" || message.role === "assistant" || message.role === "toolResult") &&
        message.content == null
      )
        return [{ ...message, content: [] } as AgentMessage];
      return [message];
    }
    case "custom_message":
      return [
        {
          role: "custom",
          customType: entry.customType,
          content: entry.content ?? [],
          display: entry.display,
          details: entry.details,
          timestamp: new Date(entry.timestamp).getTime(),
        } as AgentMessage,
      ];
    case "branch_summary":
      return entry.summary
        ? [
            {
              role: "branchSummary",
              summary: entry.summary,
              fromId: entry.fromId,
              timestamp: new Date(entry.timestamp).getTime(),
            } as AgentMessage,
          ]
        : [];
    case "compaction": {
      const summary = {
        role: "compactionSummary",
        summary: entry.summary,
        tokensBefore: entry.tokensBefore,
        timestamp: new Date(entry.timestamp).getTime(),
      } as AgentMessage;
      return entry.systemMessage ? [entry.systemMessage as AgentMessage, summary] : [summary];
    }
    default:
      return [];
  }
}

/**
 * Where a projection gets an entry's messages and a completed answer's reasoning-free form. The default builds new
 * message objects at every projection; {@link SharedMessages} hands out the same objects for the same entry.
 */
export interface MessageSource {
  of(entry: SessionEntry): readonly AgentMessage[];
  /** {@link applyEdit} of one entry's messages (a new list; the messages may be shared). */
  edited(messages: readonly AgentMessage[], edit: ContextEditEntry): AgentMessage[];
  withoutReasoning(message: AgentMessage): AgentMessage;
}

/** Fresh objects at every call: what the host sends Pi, so no one else ever holds them. */
const FRESH: MessageSource = {
  of: entryMessages,
  edited: (messages, edit) => applyEdit(messages.slice(), edit),
  withoutReasoning,
};

/**
 * A message source that builds each entry's messages once and hands out the same objects afterwards, so a view
 * projected again after a fact holds the very objects the previous one held for the entries the fact left alone, and
 * every memo keyed by message object (token counts, wire fingerprints, text indexes) hits. The lab uses it for its
 * simulated ledgers; the host does not, since Pi and other extensions receive the view's messages and may change them.
 * Nobody may mutate a message it hands out. Entries are immutable facts, so an entry's messages never go stale; an
 * entry whose fields the caller moves out of memory is {@link forget}ten, so the memo does not keep them alive.
 */
export class SharedMessages implements MessageSource {
  private readonly byEntry = new WeakMap<SessionEntry, readonly AgentMessage[]>();
  private readonly stripped = new WeakMap<AgentMessage, AgentMessage>();
  /** Per context edit, what it makes of each message it applies to (nothing, for an omission). */
  private readonly edits = new WeakMap<ContextEditEntry, WeakMap<AgentMessage, AgentMessage[]>>();
  /** Entries {@link forget}ten: built afresh at every call, never kept again. */
  private readonly unshared = new WeakSet<SessionEntry>();

  of(entry: SessionEntry): readonly AgentMessage[] {
    let messages = this.byEntry.get(entry);
    if (!messages) {
      if (this.unshared.has(entry)) return entryMessages(entry);
      // Messages that are the entry's own objects need no memo; only built ones (custom, summaries) are kept.
      messages = entryMessages(entry);
      if (entry.type !== "message" || messages[0] !== entry.message) this.byEntry.set(entry, messages);
    }
    return messages;
  }

  edited(messages: readonly AgentMessage[], edit: ContextEditEntry): AgentMessage[] {
    let byMessage = this.edits.get(edit);
    if (!byMessage) this.edits.set(edit, (byMessage = new WeakMap()));
    const memo = byMessage;
    return messages.flatMap((message) => {
      let known = memo.get(message);
      if (!known) memo.set(message, (known = applyEdit([message], edit)));
      return known;
    });
  }

  withoutReasoning(message: AgentMessage): AgentMessage {
    let known = this.stripped.get(message);
    if (!known) {
      known = withoutReasoning(message);
      this.stripped.set(message, known);
    }
    return known;
  }

  /**
   * Stop sharing the entry's messages: its fields were moved out of memory, and a kept message would hold them again.
   * Its messages are built afresh at every later call (reading the fields back).
   */
  forget(entry: SessionEntry): void {
    this.byEntry.delete(entry);
    this.unshared.add(entry);
  }
}

/** Apply a context edit (Pi's append-only omission/replacement) to an entry's messages. */
export function applyEdit(messages: AgentMessage[], edit: ContextEditEntry | undefined): AgentMessage[] {
  if (!edit) return messages;
  const replacement = edit.replacement;
  if (replacement === null) return [];
  return messages.map((message) => {
    const role = message.role;
    if (role !== "user" && role !== "assistant" && role !== "toolResult" && role !== "custom") return message;
    const content =
      (role === "assistant" || role === "toolResult") && typeof replacement.content === "string"
        ? [{ type: "text", text: replacement.content }]
        : replacement.content;
    return { ...message, content } as AgentMessage;
  });
}

/** The summary message a compaction entry contributes. */
function summaryOf(entry: SessionEntry | undefined, source: MessageSource): AgentMessage | undefined {
  return entry?.type === "compaction" ? source.of(entry).find((m) => m.role === "compactionSummary") : undefined;
}

/**
 * The summary a checkpoint marker at the head of the view restates: the effective compaction's (the newest real one
 * no restore revoked), or none. The view then reads as it did before the marker, byte for byte.
 */
export function restatedSummary(
  state: LedgerState,
  get: (id: string) => SessionEntry | undefined,
  source: MessageSource = FRESH,
): AgentMessage | undefined {
  const effective = effectiveCompaction(state);
  return effective ? summaryOf(get(effective.entryId), source) : undefined;
}

/** What a checkpoint marker contributes at the head of the view: its system snapshot, then the restated summary. */
export function markerMessages(
  marker: SessionEntry,
  restated: AgentMessage | undefined,
  source: MessageSource = FRESH,
): AgentMessage[] {
  const head = source.of(marker).filter((m) => m.role === "system");
  return restated ? [...head, restated] : head;
}

/** Where the model view starts, in path positions. */
export interface ViewCut {
  /** The compaction heading the view (see `headCompaction`), or -1. */
  head: number;
  /** The first entry kept before `head` (system messages aside); entries before it are summarized. */
  from: number;
}

/**
 * The view's cut, as Pi selects it for its newest compaction, except that revoked compactions do not count, a
 * partial restore moves the start back, and a checkpoint marker at the head keeps from the effective compaction's
 * start (from the root without one), whatever start it stored: a marker cuts nothing of its own.
 */
export function viewCut(state: LedgerState, indexOf: (id: string) => number): ViewCut {
  const headFact = headCompaction(state);
  const head = headFact ? indexOf(headFact.entryId) : -1;
  if (head < 0) return { head: -1, from: 0 };
  const effective = effectiveCompaction(state);
  if (!effective) {
    // A marker with no real compaction before it keeps the whole path, unless its stored start is not on the path
    // at all (a damaged file): then, as Pi does for any compaction, nothing before it, so the view never opens with
    // a tool result whose call was cut off.
    return { head, from: indexOf(headFact!.firstKeptEntryId) >= 0 ? 0 : head };
  }
  const at = indexOf(effective.entryId);
  // A partial restore that names no earlier entry is unreadable: the view stays as it was before it.
  const kept = keptIndex(effective, indexOf);
  // Pi keeps nothing before a compaction whose kept entry is not on the path.
  return { head, from: kept >= 0 && kept < at ? kept : at };
}

/**
 * Entries the model view selects (see {@link viewCut}): the heading compaction, the pinned entries its cut left
 * behind (in path order), the entries it keeps before it (without system messages, which its snapshot replaces),
 * then everything after it. With no restore facts, pins or markers this is exactly Pi's selection for its newest
 * compaction.
 */
export function contextEntries(
  path: readonly SessionEntry[],
  state: LedgerState,
  indexOf: (id: string) => number = (id) => path.findIndex((e) => e.id === id),
  pins?: PinSet,
): SessionEntry[] {
  const { head, from } = viewCut(state, indexOf);
  if (head < 0) return path.slice();
  const selected: SessionEntry[] = [path[head]];
  // A pin outlives the cut: right after the summary, before what the compaction kept, so both read in path order.
  if (pins) for (const entry of pins.before(from)) selected.push(entry);
  for (let i = from; i < head; i++) {
    const entry = path[i];
    if (!(entry.type === "message" && entry.message.role === "system")) selected.push(entry);
  }
  for (let i = head + 1; i < path.length; i++) selected.push(path[i]);
  return selected;
}

function sessionSettings(path: readonly SessionEntry[]): Pick<BranchProjection, "thinkingLevel" | "model"> {
  let thinkingLevel = "off";
  let model: BranchProjection["model"] = null;
  for (const entry of path) {
    if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "model_change") model = { provider: entry.provider, modelId: entry.modelId };
    else if (entry.type === "message" && entry.message.role === "assistant")
      model = { provider: entry.message.provider, modelId: entry.message.model };
  }
  return { thinkingLevel, model };
}

/** A path lookup over a plain array, for one-shot projections (`at` gives the entry at a position). */
export function lookupOf(path: readonly SessionEntry[]): PathLookup & { at(index: number): SessionEntry | undefined } {
  const position = new Map<string, number>();
  path.forEach((entry, i) => position.set(entry.id, i));
  return { indexOf: (id) => position.get(id) ?? -1, get: (id) => path[position.get(id) ?? -1], at: (i) => path[i] };
}

/**
 * Positions on a path as `lookupOf` gives them (the last occurrence of an id wins), indexed from the end backwards
 * only as far as the ids asked for: a view's head compaction and kept entries are near the end, so finding them
 * visits the view, not the branch. Every entry is indexed at most once.
 */
export function backwardLookup(path: readonly SessionEntry[]): PathLookup {
  const position = new Map<string, number>();
  let next = path.length - 1;
  const indexOf = (id: string): number => {
    const known = position.get(id);
    if (known !== undefined) return known;
    while (next >= 0) {
      const at = next--;
      const seen = path[at].id;
      // Read backwards, the first position seen for an id is its last on the path.
      if (!position.has(seen)) position.set(seen, at);
      if (seen === id) return at;
    }
    return -1;
  };
  return { indexOf, get: (id) => path[indexOf(id)] };
}

/** The state's pins resolved against a path, or undefined when there are none. */
export function pinsOf(
  state: LedgerState,
  path: readonly SessionEntry[],
  lookup: () => PathLookup,
): PinSet | undefined {
  const pins = activePins(state);
  if (!pins.length) return undefined;
  const positions = lookup();
  return new PinSet(pins, {
    indexOf: (id) => positions.indexOf(id),
    get: (id) => positions.get(id),
    at: (i) => path[i],
  });
}

/** What {@link projectEntries} needs besides the selected entries: positions and entries of the whole path. */
export interface ProjectionInputs extends PathLookup {
  state: LedgerState;
  /** What the records mean (companions of a revoked compaction leave with it). */
  facts: LedgerFacts;
  /** The fold mask over the whole path (absent when no rule exists). */
  mask?: RangeMask;
  /** The context edit that applies to an entry, if any. */
  editOf(id: string): ContextEditEntry | undefined;
  /** Where entries' messages come from (fresh objects when absent). */
  source?: MessageSource;
}

/**
 * Project selected entries, in path order (anchored messages are not moved here). Only the compaction heading the
 * view contributes: its summary, or for a checkpoint marker its snapshot and the restated summary; older or revoked
 * ones stay silent, as in Pi. Folded entries and the messages of revoked acts contribute nothing; a completed answer
 * inside a keep-dialogue range loses its reasoning.
 */
export function projectEntries(selected: readonly SessionEntry[], inputs: ProjectionInputs): ProjectedEntry[] {
  const { state, mask, facts } = inputs;
  const source = inputs.source ?? FRESH;
  const head = headCompaction(state);
  const revoking = Object.keys(state.revoked).length > 0;
  return selected.map((sourceEntry): ProjectedEntry => {
    if (sourceEntry.type === "compaction") {
      if (sourceEntry.id !== head?.entryId) return { sourceEntry, messages: [] };
      if (head.marker)
        return {
          sourceEntry,
          messages: markerMessages(sourceEntry, restatedSummary(state, inputs.get, source), source),
          restates: true,
        };
    }
    const at = mask && !mask.empty ? inputs.indexOf(sourceEntry.id) : -1;
    if (mask && at >= 0 && mask.hides(sourceEntry, at)) return { sourceEntry, messages: [], folded: true };
    if (revoking && isRevokedMessage(sourceEntry, state, facts)) return { sourceEntry, messages: [], folded: true };
    // Always a new list: callers own the entry's list, not the messages in it.
    const edit = inputs.editOf(sourceEntry.id);
    const own = source.of(sourceEntry);
    const messages = edit ? source.edited(own, edit) : own.slice();
    if (mask && at >= 0 && mask.dropsReasoning(sourceEntry, at))
      return { sourceEntry, messages: messages.map((m) => source.withoutReasoning(m)), stripped: true };
    return { sourceEntry, messages };
  });
}

/**
 * The model view of a path, in the order it is sent: the selected entries (see {@link contextEntries}) projected by
 * {@link projectEntries}, with anchored checkpoints moved after their range end. This is the one implementation of
 * the view: {@link projectBranch} runs it once over a branch, and the live ledger runs it over its path (extending
 * it entry by entry while no fact changes it) and maps Pi's request messages onto it. `mask` defaults to the rules'
 * mask over `lookup`; context edits apply when they are themselves in the view, as in Pi. Pins (see `pins.ts`) are
 * exempt from every rule, and those a compaction cut off are placed right after its summary. `source` gives the
 * entries' messages (fresh objects by default).
 */
export function projectView(
  path: readonly SessionEntry[],
  state: LedgerState,
  facts: LedgerFacts,
  lookup: () => PathLookup,
  mask?: RangeMask,
  pins?: PinSet,
  source?: MessageSource,
): ProjectedEntry[] {
  pins ??= pinsOf(state, path, lookup);
  const selected = contextEntries(path, state, (id) => lookup().indexOf(id), pins);
  mask ??= state.ranges.length ? new RangeMask(state.ranges, lookup(), facts, pins) : undefined;
  return placeAnchored(projectSelected(selected, state, facts, lookup, mask, source), state);
}

/**
 * The selected entries (see {@link contextEntries}) projected in selection order, before anchored checkpoints move
 * (see {@link placeAnchored}): a context edit applies when it is itself selected, the newest one per target winning.
 */
export function projectSelected(
  selected: readonly SessionEntry[],
  state: LedgerState,
  facts: LedgerFacts,
  lookup: () => PathLookup,
  mask: RangeMask | undefined,
  source?: MessageSource,
): ProjectedEntry[] {
  const edits = new Map<string, ContextEditEntry>();
  for (const entry of selected) if (entry.type === "context_edit") edits.set(entry.targetId, entry);
  return projectEntries(selected, {
    state,
    facts,
    mask,
    indexOf: (id) => lookup().indexOf(id),
    get: (id) => lookup().get(id),
    editOf: (id) => edits.get(id),
    source,
  });
}

/**
 * Project a branch (root to leaf) into the model view. With no ledger facts on the branch this equals Pi's
 * `buildSessionProjection` for the same leaf; with ranges, hidden entries contribute nothing; with restores,
 * revoked acts hide nothing. `facts` reads the branch (see `LedgerFacts`); `state` is its reading when known;
 * `source` gives the entries' messages (fresh objects by default).
 */
export function projectBranch(
  path: readonly SessionEntry[],
  facts: LedgerFacts,
  state: LedgerState = reduceBranch(path, facts),
  source?: MessageSource,
): BranchProjection {
  // Positions are only needed when some rule may hide something or a marker restates a summary.
  let lookup: PathLookup | undefined;
  const entries = projectView(path, state, facts, () => (lookup ??= lookupOf(path)), undefined, undefined, source);
  return { entries, messages: entries.flatMap((e) => e.messages), ...sessionSettings(path) };
}

/**
 * Move anchored range messages (tool checkpoints) to just after the entry their range ends at, so the view
 * reads `[…, checkpoint k, raw batch]` and everything up to checkpoint k stays byte-identical when k+1 arrives.
 * An anchor whose end is not in the selected entries stays where it is.
 */
export function placeAnchored(entries: ProjectedEntry[], state: LedgerState): ProjectedEntry[] {
  return placeAnchoredBy(entries, state.ranges);
}

/**
 * {@link placeAnchored} by the given rules only: enough for a stretch of the view when no other anchored rule has its
 * message or its end in it.
 */
export function placeAnchoredBy(entries: ProjectedEntry[], ranges: readonly RangeRule[]): ProjectedEntry[] {
  const anchors = new Map<string, string>();
  const ends = new Set<string>();
  for (const rule of ranges)
    if (rule.anchored) {
      anchors.set(rule.entryId, rule.throughId);
      ends.add(rule.throughId);
    }
  if (!anchors.size) return entries;
  // Only range ends need to be known present: a set of every entry would cost a string insertion per entry.
  const present = new Set<string>();
  for (const e of entries) if (ends.has(e.sourceEntry.id)) present.add(e.sourceEntry.id);
  const after = new Map<string, ProjectedEntry[]>();
  const out: ProjectedEntry[] = [];
  for (const e of entries) {
    const end = anchors.get(e.sourceEntry.id);
    if (end !== undefined && present.has(end) && end !== e.sourceEntry.id) {
      const list = after.get(end);
      if (list) list.push(e);
      else after.set(end, [e]);
    }
  }
  if (!after.size) return entries;
  const moved = new Set([...after.values()].flat());
  const emit = (e: ProjectedEntry) => {
    out.push(e);
    const anchored = after.get(e.sourceEntry.id);
    if (anchored) for (const a of anchored) emit(a);
  };
  for (const e of entries) if (!moved.has(e)) emit(e);
  return out;
}
