// The ledger state: what this package's facts on the active branch say, folded entry by entry.
// Pure reducer (immer for nested updates); no clocks, no I/O.
import { produce } from "immer";
import type { PinData, RestoreData, SessionEntry } from "../log/entries.ts";
import { COMPACTION_ACT, type LedgerFact, type LedgerFacts } from "../log/facts.ts";
import type { PinFact, PinRecord } from "./pins.ts";

/** A range rule, keyed by the message that carries it (a fold summary, a tool checkpoint: any declared range). */
export interface RangeRule {
  /** The range message holding the rule. */
  entryId: string;
  afterId: string | null;
  throughId: string;
  keepToolResultsOf?: string;
  keepDialogue?: boolean;
  /** Shown right after `throughId` in the model view instead of at its own position (its record declares so). */
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
  /** A checkpoint marker (see `MarkerDeclaration`): it heads the view but cuts and summarizes nothing. */
  marker?: true;
}

export interface LedgerState {
  ranges: RangeRule[];
  /** Labels on the active path: entry id -> label (latest label entry wins; undefined clears). */
  labels: Record<string, string>;
  compactions: CompactionFact[];
  /**
   * Acts whose hiding was revoked whole: act entry id -> restore entry id. A revoked range message leaves the view
   * with its rule; a revoked compaction no longer cuts, and its summary and recap leave the view.
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
 * True for a message a revoked act leaves behind: the range message itself, or a companion (a recap) of a revoked
 * compaction. These leave the view with the act.
 */
export function isRevokedMessage(entry: SessionEntry, state: LedgerState, facts: LedgerFacts): boolean {
  if (entry.type !== "custom_message") return false;
  if (Object.hasOwn(state.revoked, entry.id)) return true;
  const compactionId = facts.companionOf(entry);
  return compactionId !== undefined && Object.hasOwn(state.revoked, compactionId);
}

/** Apply a restore fact. A target that is not an active act on this branch changes nothing. */
function applyRestore(draft: LedgerState, restoreId: string, data: RestoreData): void {
  if (Object.hasOwn(draft.revoked, data.targetId)) return;
  if (data.act === COMPACTION_ACT) {
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

/** The rule a range fact adds. */
function ruleOf(fact: Extract<LedgerFact, { kind: "range" }>): RangeRule {
  const { range, entry, declaration } = fact;
  return {
    entryId: entry.id,
    afterId: range.afterId,
    throughId: range.throughId,
    ...(range.keepToolResultsOf ? { keepToolResultsOf: range.keepToolResultsOf } : {}),
    ...(range.keepDialogue ? { keepDialogue: true } : {}),
    ...(declaration.placement === "anchored" ? { anchored: true } : {}),
  };
}

/**
 * `from` with the rules appended: a new state and a new rule list sharing everything else, frozen as immer leaves
 * what it produces. Range facts come every few steps of a long session, and immer's finalize visits every element of
 * a list it copied, so folding them through a draft cost the rules held at each one: quadratic over a session.
 */
function withRules(from: LedgerState, rules: readonly RangeRule[]): LedgerState {
  for (const rule of rules) Object.freeze(rule);
  return Object.freeze({ ...from, ranges: Object.freeze(from.ranges.concat(rules)) as RangeRule[] });
}

/** Apply one fact to a draft of the state (a fact of kind `none` changes nothing). */
function apply(draft: LedgerState, fact: LedgerFact): void {
  switch (fact.kind) {
    case "range": {
      draft.ranges.push(ruleOf(fact));
      return;
    }
    case "compaction":
      draft.compactions.push({
        entryId: fact.entry.id,
        strategy: fact.strategy,
        firstKeptEntryId: fact.entry.firstKeptEntryId,
        ...(fact.marker ? { marker: true as const } : {}),
      });
      return;
    case "label": {
      const { targetId, label } = fact.entry;
      if (label === undefined) {
        if (Object.hasOwn(draft.labels, targetId)) delete draft.labels[targetId];
      } else if (draft.labels[targetId] !== label) draft.labels[targetId] = label;
      return;
    }
    case "restore":
      applyRestore(draft, fact.entry.id, fact.data);
      return;
    case "pin":
      applyPin(draft, fact.entry.id, fact.data);
      return;
    case "keepContext":
      // The user's own `<keepContext>` pins the message.
      draft.pinFacts.push({ targetId: fact.entry.id, factId: fact.entry.id, pinned: true, implicit: true });
      return;
    case "none":
      // File operations are derived from messages when a strategy needs them (projection/file-ops.ts); keeping them
      // here would copy a growing list on every new path.
      return;
    default: {
      const _exhaustive: never = fact;
      return _exhaustive;
    }
  }
}

/** Apply one fact. Facts that say nothing to the ledger (or change nothing) return the same state object. */
export function evolve(state: LedgerState, fact: LedgerFact): LedgerState {
  if (fact.kind === "none") return state;
  if (fact.kind === "range") return withRules(state, [ruleOf(fact)]);
  return produce(state, (draft) => apply(draft, fact));
}

/**
 * Fold a whole branch from scratch, in one draft, reading each entry once with `facts`: a copy of the state per fact
 * would make a rebuild quadratic in the facts (a long replay writes thousands of digests).
 */
export function reduceBranch(
  branch: readonly SessionEntry[],
  facts: LedgerFacts,
  from: LedgerState = initialLedgerState(),
): LedgerState {
  const read: LedgerFact[] = [];
  let rulesOnly = true;
  for (const entry of branch) {
    const fact = facts.read(entry);
    if (fact.kind === "none") continue;
    read.push(fact);
    if (fact.kind !== "range") rulesOnly = false;
  }
  if (!read.length) return from;
  // Most stretches of a branch add rules and nothing else: appended without a draft (see `withRules`).
  if (rulesOnly)
    return withRules(
      from,
      read.map((fact) => ruleOf(fact as Extract<LedgerFact, { kind: "range" }>)),
    );
  return produce(from, (draft) => {
    for (const fact of read) apply(draft, fact);
  });
}
