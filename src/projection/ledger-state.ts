// The ledger state: what this package's facts on the active branch say, folded entry by entry.
// Pure reducer (immer for nested updates); no clocks, no I/O.
import { produce } from "immer";
import { isLedgerCompaction, isRangeEntry, isToolCheckpoint, type SessionEntry } from "../log/entries.ts";

/** A fold's range rule, keyed by the summary entry that carries it. */
export interface FoldRule {
  /** The `context-ledger/fold` entry holding the rule. */
  entryId: string;
  afterId: string | null;
  throughId: string;
  keepToolResultsOf?: string;
  keepDialogue?: boolean;
  /** Shown right after `throughId` in the model view instead of at its own position (tool checkpoints). */
  anchored?: boolean;
}

/** A compaction entry on the branch: ours (with a strategy) or Pi's native one. */
export interface CompactionFact {
  entryId: string;
  strategy: string;
  firstKeptEntryId: string;
}

export interface LedgerState {
  folds: FoldRule[];
  /** Labels on the active path: entry id -> label (latest label entry wins; undefined clears). */
  labels: Record<string, string>;
  compactions: CompactionFact[];
}

/** The state of an empty branch. */
export function initialLedgerState(): LedgerState {
  return { folds: [], labels: {}, compactions: [] };
}

/** Apply one branch entry. Entries that say nothing to the ledger return the same state object. */
export function evolve(state: LedgerState, entry: SessionEntry): LedgerState {
  switch (entry.type) {
    case "custom_message": {
      if (!isRangeEntry(entry)) return state;
      const { range } = entry.details!;
      const anchored = isToolCheckpoint(entry);
      return produce(state, (draft) => {
        draft.folds.push({
          entryId: entry.id,
          afterId: range.afterId,
          throughId: range.throughId,
          ...(range.keepToolResultsOf ? { keepToolResultsOf: range.keepToolResultsOf } : {}),
          ...(range.keepDialogue ? { keepDialogue: true } : {}),
          ...(anchored ? { anchored: true } : {}),
        });
      });
    }
    case "compaction":
      return produce(state, (draft) => {
        draft.compactions.push({
          entryId: entry.id,
          strategy: isLedgerCompaction(entry) ? entry.details!.strategy : "native",
          firstKeptEntryId: entry.firstKeptEntryId,
        });
      });
    case "label":
      if (entry.label === undefined && !(entry.targetId in state.labels)) return state;
      if (entry.label !== undefined && state.labels[entry.targetId] === entry.label) return state;
      return produce(state, (draft) => {
        if (entry.label === undefined) delete draft.labels[entry.targetId];
        else draft.labels[entry.targetId] = entry.label;
      });
    // File operations are derived from messages when a strategy needs them (projection/file-ops.ts); keeping them
    // here would copy a growing list on every new path.
    case "message":
    case "thinking_level_change":
    case "model_change":
    case "usage":
    case "branch_summary":
    case "custom":
    case "context_edit":
    case "session_info":
      return state;
    default: {
      const _exhaustive: never = entry;
      return state;
    }
  }
}

/** Fold a whole branch from scratch. */
export function foldBranch(branch: readonly SessionEntry[], from: LedgerState = initialLedgerState()): LedgerState {
  let state = from;
  for (const entry of branch) state = evolve(state, entry);
  return state;
}
