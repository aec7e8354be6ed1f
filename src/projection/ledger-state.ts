// The ledger state: what this package's facts on the active branch say, folded entry by entry.
// Pure reducer (immer for nested updates); no clocks, no I/O.
import { produce } from "immer";
import { isFoldEntry, isLedgerCompaction, type SessionEntry } from "../log/entries.ts";

/** A fold's range rule, keyed by the summary entry that carries it. */
export interface FoldRule {
  /** The `context-ledger/fold` entry holding the rule. */
  entryId: string;
  afterId: string | null;
  throughId: string;
  keepToolResultsOf?: string;
  keepDialogue?: boolean;
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
  /** Cumulative paths touched by file tools on the branch. */
  files: { read: string[]; modified: string[] };
}

/** The state of an empty branch. */
export function initialLedgerState(): LedgerState {
  return { folds: [], labels: {}, compactions: [], files: { read: [], modified: [] } };
}

const READ_TOOLS = new Set(["read"]);
const MODIFY_TOOLS = new Set(["write", "edit"]);

/** Apply one branch entry. Entries that say nothing to the ledger return the same state object. */
export function evolve(state: LedgerState, entry: SessionEntry): LedgerState {
  switch (entry.type) {
    case "custom_message": {
      if (!isFoldEntry(entry)) return state;
      const { range } = entry.details!;
      return produce(state, (draft) => {
        draft.folds.push({
          entryId: entry.id,
          afterId: range.afterId,
          throughId: range.throughId,
          ...(range.keepToolResultsOf ? { keepToolResultsOf: range.keepToolResultsOf } : {}),
          ...(range.keepDialogue ? { keepDialogue: true } : {}),
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
    case "message":
      return evolveFiles(state, entry.message as unknown as { role: string; content?: unknown });
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

function evolveFiles(state: LedgerState, message: { role: string; content?: unknown }): LedgerState {
  if (message.role !== "assistant" || !Array.isArray(message.content)) return state;
  let next = state;
  for (const block of message.content as { type?: string; name?: string; arguments?: Record<string, unknown> }[]) {
    if (block?.type !== "toolCall" || !block.name) continue;
    const path = block.arguments?.path ?? block.arguments?.file_path;
    if (typeof path !== "string") continue;
    const list = READ_TOOLS.has(block.name) ? "read" : MODIFY_TOOLS.has(block.name) ? "modified" : undefined;
    if (!list || next.files[list].includes(path)) continue;
    next = produce(next, (draft) => {
      draft.files[list].push(path);
    });
  }
  return next;
}

/** Fold a whole branch from scratch. */
export function foldBranch(branch: readonly SessionEntry[], from: LedgerState = initialLedgerState()): LedgerState {
  let state = from;
  for (const entry of branch) state = evolve(state, entry);
  return state;
}
