// The ledger state: what this package's facts on the active branch say, folded entry by entry.
// Pure reducer (immer for nested updates); no clocks, no I/O.
import { produce } from "immer";
import {
  isCheckpointMarker,
  isLedgerCompaction,
  isPinEntry,
  isRangeEntry,
  isRestoreEntry,
  isToolCheckpoint,
  LedgerType,
  type PinData,
  type RestoreData,
  type SessionEntry,
} from "../log/entries.ts";
import { keepsContext, type PinFact, type PinRecord } from "./pins.ts";

/** A fold's range rule, keyed by the summary entry that carries it. */
export interface RangeRule {
  /** The `context-ledger/fold` entry holding the rule. */
  entryId: string;
  afterId: string | null;
  throughId: string;
  keepToolResultsOf?: string;
  keepDialogue?: boolean;
  /** Shown right after `throughId` in the model view instead of at its own position (tool checkpoints). */
  anchored?: boolean;
  /** The restore that narrowed this rule to its older part (`throughId` is then the narrowed end). */
  narrowedBy?: string;
}

/** A compaction entry on the branch: ours (with a strategy) or Pi's native one. */
export interface CompactionFact {
  entryId: string;
  strategy: string;
  /** As Pi stored it: Pi's own projection always cuts here. */
  firstKeptEntryId: string;
  /** Set by a partial restore: our view keeps from this earlier entry instead. */
  keptFromId?: string;
  /** The restore that moved `keptFromId`. */
  narrowedBy?: string;
  /** A preserve checkpoint marker (see `isCheckpointMarker`): it heads the view but cuts and summarizes nothing. */
  marker?: true;
}

export interface LedgerState {
  ranges: RangeRule[];
  /** Labels on the active path: entry id -> label (latest label entry wins; undefined clears). */
  labels: Record<string, string>;
  compactions: CompactionFact[];
  /**
   * Acts whose hiding was revoked whole: act entry id -> restore entry id. A revoked fold or preserve message leaves
   * the view with its rule; a revoked compaction no longer cuts, and its summary and recap leave the view.
   */
  revoked: Record<string, string>;
  /**
   * Pin and unpin facts in branch order (a `<keepContext>` user message records its own pin). Kept as a log so folding
   * stays linear; {@link activePins} reads the pins off it (the newest fact for a target decides).
   */
  pinFacts: PinRecord[];
}

/**
 * A record keyed by entry ids. It has no prototype, so an id from a crafted file (`constructor`, `toString`,
 * `__proto__`) is an ordinary key: a lookup never finds `Object`'s members and an assignment never changes a prototype.
 */
export function idRecord<V>(): Record<string, V> {
  return Object.create(null) as Record<string, V>;
}

/** The state of an empty branch. */
export function initialLedgerState(): LedgerState {
  return { ranges: [], labels: idRecord(), compactions: [], revoked: idRecord(), pinFacts: [] };
}

const ACTIVE = new WeakMap<readonly PinRecord[], PinFact[]>();

/**
 * The pins in effect, in the order they were (last) pinned: the newest fact for a target decides, and a
 * `<keepContext>` message pins itself unless a pin already holds it. Computed once per state (the log is immutable and
 * structurally shared), in O(facts).
 */
export function activePins(state: LedgerState): readonly PinFact[] {
  const log = state.pinFacts;
  if (!log.length) return [];
  const cached = ACTIVE.get(log);
  if (cached) return cached;
  const pins = new Map<string, PinFact>();
  for (const record of log) {
    if (record.implicit) {
      if (!pins.has(record.targetId))
        pins.set(record.targetId, { targetId: record.targetId, factId: record.factId, implicit: true });
      continue;
    }
    pins.delete(record.targetId);
    if (record.pinned)
      pins.set(record.targetId, {
        targetId: record.targetId,
        factId: record.factId,
        ...(record.note !== undefined ? { note: record.note } : {}),
      });
  }
  const out = [...pins.values()];
  ACTIVE.set(log, out);
  return out;
}

/**
 * The compaction whose cut and summary the model view follows: the newest one that is not revoked and not a
 * checkpoint marker (a marker restates this one's summary and keeps from its cut).
 */
export function effectiveCompaction(state: LedgerState): CompactionFact | undefined {
  for (let i = state.compactions.length - 1; i >= 0; i--) {
    const c = state.compactions[i];
    if (!c.marker && !Object.hasOwn(state.revoked, c.entryId)) return c;
  }
  return undefined;
}

/**
 * The compaction at the head of the model view, as the one Pi's projection starts with: the newest one not revoked.
 * Either the effective compaction, or a later checkpoint marker standing in for it (markers are never revoked).
 */
export function headCompaction(state: LedgerState): CompactionFact | undefined {
  for (let i = state.compactions.length - 1; i >= 0; i--)
    if (!Object.hasOwn(state.revoked, state.compactions[i].entryId)) return state.compactions[i];
  return undefined;
}

/**
 * True when a partial restore moved this compaction's start to an entry that is not on the path before it (a damaged
 * or crafted fact): the view ignores that restore and keeps from Pi's own start, as before it.
 */
export function isUnreadableRestore(compaction: CompactionFact, indexOf: (id: string) => number): boolean {
  if (compaction.keptFromId === undefined) return false;
  const kept = indexOf(compaction.keptFromId);
  return kept < 0 || kept >= indexOf(compaction.entryId);
}

/** Path index where a compaction's kept range starts in our view (see {@link keptFrom}), or -1. */
export function keptIndex(compaction: CompactionFact, indexOf: (id: string) => number): number {
  return indexOf(isUnreadableRestore(compaction, indexOf) ? compaction.firstKeptEntryId : keptFrom(compaction));
}

/** Where a compaction's kept range starts in our view (a partial restore may have moved it back). */
export function keptFrom(compaction: CompactionFact): string {
  return compaction.keptFromId ?? compaction.firstKeptEntryId;
}

/**
 * True for a message a revoked act leaves behind: the fold or preserve message itself, or the recap that followed a
 * revoked compaction. These leave the view with the act.
 */
export function isRevokedMessage(entry: SessionEntry, state: LedgerState): boolean {
  if (entry.type !== "custom_message") return false;
  if (Object.hasOwn(state.revoked, entry.id)) return true;
  if (entry.customType !== LedgerType.recap) return false;
  const compactionId = (entry.details as { compactionId?: unknown } | undefined)?.compactionId;
  return typeof compactionId === "string" && Object.hasOwn(state.revoked, compactionId);
}

/** Apply a restore fact. A target that is not an active act on this branch changes nothing. */
function applyRestore(draft: LedgerState, restoreId: string, data: RestoreData): void {
  if (Object.hasOwn(draft.revoked, data.targetId)) return;
  if (data.act === "compaction") {
    // A checkpoint marker is no act: it hides nothing, so there is nothing to revoke (the checkpoint itself is one).
    const at = draft.compactions.findIndex((c) => c.entryId === data.targetId && !c.marker);
    if (at < 0) return;
    if (data.firstKeptEntryId === undefined) draft.revoked[data.targetId] = restoreId;
    else Object.assign(draft.compactions[at], { keptFromId: data.firstKeptEntryId, narrowedBy: restoreId });
    return;
  }
  const at = draft.ranges.findIndex((f) => f.entryId === data.targetId);
  if (at < 0) return;
  if (data.throughId === undefined) {
    draft.ranges.splice(at, 1);
    draft.revoked[data.targetId] = restoreId;
  } else Object.assign(draft.ranges[at], { throughId: data.throughId, narrowedBy: restoreId });
}

/** Record a pin fact (appended: the log keeps folding linear). */
function applyPin(draft: LedgerState, factId: string, data: PinData): void {
  draft.pinFacts.push({
    targetId: data.targetId,
    factId,
    pinned: data.pinned,
    ...(data.note !== undefined ? { note: data.note } : {}),
  });
}

/** True for the entries that can change the ledger state: our range messages, compactions, labels, restores, pins. */
function speaksToLedger(entry: SessionEntry): boolean {
  switch (entry.type) {
    case "custom_message":
      return isRangeEntry(entry);
    case "compaction":
    case "label":
      return true;
    // File operations are derived from messages when a strategy needs them (projection/file-ops.ts); keeping them
    // here would copy a growing list on every new path.
    case "custom":
      return isRestoreEntry(entry) || isPinEntry(entry);
    case "message":
      // The user's own `<keepContext>` pins the message.
      return keepsContext(entry);
    case "thinking_level_change":
    case "model_change":
    case "usage":
    case "branch_summary":
    case "context_edit":
    case "session_info":
      return false;
    default: {
      const _exhaustive: never = entry;
      return false;
    }
  }
}

/** Apply one entry that speaks to the ledger to a draft of the state. */
function apply(draft: LedgerState, entry: SessionEntry): void {
  if (entry.type === "custom_message" && isRangeEntry(entry)) {
    const { range } = entry.details!;
    draft.ranges.push({
      entryId: entry.id,
      afterId: range.afterId,
      throughId: range.throughId,
      ...(range.keepToolResultsOf ? { keepToolResultsOf: range.keepToolResultsOf } : {}),
      ...(range.keepDialogue ? { keepDialogue: true } : {}),
      ...(isToolCheckpoint(entry) ? { anchored: true } : {}),
    });
  } else if (entry.type === "compaction") {
    draft.compactions.push({
      entryId: entry.id,
      strategy: isLedgerCompaction(entry) ? entry.details!.strategy : "native",
      firstKeptEntryId: entry.firstKeptEntryId,
      ...(isCheckpointMarker(entry) ? { marker: true as const } : {}),
    });
  } else if (entry.type === "label") {
    if (entry.label === undefined) {
      if (Object.hasOwn(draft.labels, entry.targetId)) delete draft.labels[entry.targetId];
    } else if (draft.labels[entry.targetId] !== entry.label) draft.labels[entry.targetId] = entry.label;
  } else if (entry.type === "custom" && isRestoreEntry(entry)) applyRestore(draft, entry.id, entry.data);
  else if (entry.type === "custom" && isPinEntry(entry)) applyPin(draft, entry.id, entry.data);
  else if (entry.type === "message" && keepsContext(entry))
    draft.pinFacts.push({ targetId: entry.id, factId: entry.id, pinned: true, implicit: true });
}

/** Apply one branch entry. Entries that say nothing to the ledger (or change nothing) return the same state object. */
export function evolve(state: LedgerState, entry: SessionEntry): LedgerState {
  return speaksToLedger(entry) ? produce(state, (draft) => apply(draft, entry)) : state;
}

/**
 * Fold a whole branch from scratch, in one draft: a copy of the state per fact would make a rebuild quadratic in the
 * facts (a long replay writes thousands of digests).
 */
export function reduceBranch(branch: readonly SessionEntry[], from: LedgerState = initialLedgerState()): LedgerState {
  return produce(from, (draft) => {
    for (const entry of branch) if (speaksToLedger(entry)) apply(draft, entry);
  });
}
