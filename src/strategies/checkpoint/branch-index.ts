// What the checkpoint planner reads from the whole branch, kept per branch as it grows (see PrefixFold):
// the raw pairing of tool calls with their results, the latest context edit per target, and the compactions with
// what their details hold. Compactions come about once per window, so a planner that scanned the branch for these
// at each one would make a long session's replay grow with its square; with the index a plan reads only the
// entries appended since the previous one. A compaction's details are read once, when it is folded in (in the lab
// they live out of memory and each read parses them again). Pure: no I/O.
import type { CompactionEntry, ContextEditEntry, SessionEntry } from "../../log/entries.ts";
import { type Outcome, type PairedCall, toolCallsOf, toolResultOf } from "../shared/conversation.ts";
import { displayPath } from "../shared/paths.ts";
import { PrefixFold } from "../shared/branch-fold.ts";
import { evolve, initialLedgerState, type LedgerState } from "../../projection/ledger-state.ts";
import { LEDGER_FACTS } from "../catalog.ts";
import type { CheckpointSpan, SpanItem } from "./spans.ts";

/** A compaction on the branch, as the planner uses it. */
export interface CompactionFact {
  entry: CompactionEntry;
  /** Written by this strategy with spans this version can re-render. */
  checkpoint: boolean;
  /** Its stored spans, validated (checkpoints only). */
  spans: CheckpointSpan[];
  /** The file paths it recorded, as stored: ours under `files`, Pi's under `readFiles`/`modifiedFiles`. */
  read: string[];
  modified: string[];
  /** The stored startup-read selection, unvalidated (checkpoints only). */
  startupReads: unknown;
}

/** File paths recorded by the compactions folded so far, shown relative to one cwd. */
interface FileUnion {
  /** Compactions merged in. */
  count: number;
  read: Set<string>;
  modified: Set<string>;
}

interface CheckpointIndex {
  /** Index of each id's first entry, and whether any id was seen twice (a malformed file). */
  first: Map<string, number>;
  repeated: boolean;
  /** Calls per call id, in branch order (the pairing `pairCalls` makes over the raw branch). */
  calls: Map<string, PairedCall[]>;
  /** The newest call made in each entry with each id, keyed `entryId|callId`. */
  byKey: Map<string, PairedCall>;
  results: Map<string, number>;
  /** Ids with a result before any call, or a result naming another tool than its call. */
  doubtful: Set<string>;
  /** Call ids whose pairing is ambiguous on the branch so far (it only grows as the branch does). */
  ambiguous: Set<string>;
  /** Latest context edit per target, in the order `latestEdits` gives. */
  edits: Map<string, ContextEditEntry>;
  /** Targets whose latest edit replaces content. */
  replaced: Set<string>;
  compactions: CompactionFact[];
  /** Index into `compactions` of the newest one not written by this strategy, or -1. */
  baseAt: number;
  /** Spans of the checkpoints after the base, oldest first. */
  chainSpans: CheckpointSpan[];
  /** Every compaction's recorded files, per cwd (a lab run or a session has one). */
  files: Map<string, FileUnion>;
  /** The ledger state of the branch so far: `reduceBranch(branch, LEDGER_FACTS)`, one fact at a time. */
  state: LedgerState;
}

function validItem(item: unknown): item is SpanItem {
  const i = item as Partial<SpanItem> | undefined;
  return (
    !!i &&
    (i.kind === "user" || i.kind === "other") &&
    typeof i.head === "string" &&
    Array.isArray(i.body) &&
    i.body.every((l) => typeof l === "string")
  );
}

/** Stored spans, validated (details come from disk). */
function storedSpans(spans: unknown[]): CheckpointSpan[] {
  const valid: CheckpointSpan[] = [];
  for (const span of spans) {
    const s = span as Partial<CheckpointSpan> | undefined;
    if (!s || typeof s.n !== "number" || !Array.isArray(s.items)) continue;
    valid.push({ n: s.n, from: s.from ?? null, through: s.through ?? null, items: s.items.filter(validItem) });
  }
  return valid;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((p): p is string => typeof p === "string") : [];
}

/** A compaction's facts, its details read once (each read of a field may parse it again). */
function compactionFact(entry: CompactionEntry): CompactionFact {
  const details = entry.details as
    | {
        v?: unknown;
        strategy?: unknown;
        spans?: unknown;
        files?: { read?: unknown; modified?: unknown };
        readFiles?: unknown;
        modifiedFiles?: unknown;
        startupReads?: unknown;
      }
    | undefined;
  if (!details) return { entry, checkpoint: false, spans: [], read: [], modified: [], startupReads: undefined };
  const spans = details.strategy === "checkpoint" ? details.spans : undefined;
  // The same test as `isCheckpointCompaction`: a ledger compaction of this strategy with a list of spans.
  const checkpoint = details.v === 1 && Array.isArray(spans);
  const files = details.files;
  return {
    entry,
    checkpoint,
    spans: checkpoint ? storedSpans(spans as unknown[]) : [],
    read: [...strings(files?.read), ...strings(details.readFiles)],
    modified: [...strings(files?.modified), ...strings(details.modifiedFiles)],
    startupReads: checkpoint ? details.startupReads : undefined,
  };
}

/** A result's tool name agrees with its call's; legacy results without a name are taken at their id. */
function sameTool(call: PairedCall, toolName: string): boolean {
  return toolName === "" || toolName === call.call.name;
}

function recheck(index: CheckpointIndex, id: string): void {
  const list = index.calls.get(id);
  if (!list || index.ambiguous.has(id)) return;
  if (list.length > 1 || (index.results.get(id) ?? 0) > 1 || index.doubtful.has(id)) index.ambiguous.add(id);
}

function pairStep(index: CheckpointIndex, entry: SessionEntry, at: number): void {
  if (entry.type !== "message") return;
  const message = entry.message;
  for (const call of toolCallsOf(message)) {
    const paired: PairedCall = { call, at, entryId: entry.id, ambiguous: false };
    const list = index.calls.get(call.id);
    if (list) list.push(paired);
    else index.calls.set(call.id, [paired]);
    index.byKey.set(`${entry.id}|${call.id}`, paired);
    recheck(index, call.id);
  }
  const result = toolResultOf(message);
  if (!result) return;
  const id = result.toolCallId;
  index.results.set(id, (index.results.get(id) ?? 0) + 1);
  const open = index.calls.get(id)?.find((c) => !c.result);
  if (!open) index.doubtful.add(id);
  else {
    open.result = { at, entryId: entry.id, view: result };
    if (!sameTool(open, result.toolName)) index.doubtful.add(id);
  }
  recheck(index, id);
}

const checkpointIndex = new PrefixFold<CheckpointIndex>(
  () => ({
    first: new Map(),
    repeated: false,
    calls: new Map(),
    byKey: new Map(),
    results: new Map(),
    doubtful: new Set(),
    ambiguous: new Set(),
    edits: new Map(),
    replaced: new Set(),
    compactions: [],
    baseAt: -1,
    chainSpans: [],
    files: new Map(),
    state: initialLedgerState(),
  }),
  (index, entry, i) => {
    if (index.first.has(entry.id)) index.repeated = true;
    else index.first.set(entry.id, i);
    const fact = LEDGER_FACTS.read(entry);
    if (fact.kind !== "none") index.state = evolve(index.state, fact);
    pairStep(index, entry, i);
    if (entry.type === "context_edit") {
      index.edits.set(entry.targetId, entry);
      if (entry.replacement !== null) index.replaced.add(entry.targetId);
      else index.replaced.delete(entry.targetId);
    } else if (entry.type === "compaction") {
      const fact = compactionFact(entry);
      index.compactions.push(fact);
      if (!fact.checkpoint) {
        index.baseAt = index.compactions.length - 1;
        index.chainSpans = [];
      } else index.chainSpans.push(...fact.spans);
    }
  },
);

/** What {@link planCheckpoint} reads from the whole branch, without a pass over it. */
export interface CheckpointLookup {
  /** Index of the first entry with `id` (what `findIndex` from the root gives), or -1. */
  indexOf(id: string): number;
  /** True when no id appears twice on the branch (always, but in a malformed file). */
  unique: boolean;
  /**
   * Outcome of a call on the raw branch, by the entry that made it: what pairing the whole raw branch gives
   * (`unknown` for an ambiguous id, a call without a result, or one not on the branch).
   */
  rawOutcome(entryId: string, callId: string): Outcome;
  /** Call ids whose pairing is ambiguous anywhere on the branch (`ambiguousCallIds`). */
  ambiguous: ReadonlySet<string>;
  /** The latest context edit per target (`latestEdits`). */
  edits: ReadonlyMap<string, ContextEditEntry>;
  /** Targets whose latest edit replaces content. */
  replaced: ReadonlySet<string>;
  /** The compactions on the branch, oldest first. */
  compactions: readonly CompactionFact[];
  /** The newest compaction not written by this strategy: the opaque base. */
  base: CompactionFact | undefined;
  /** The checkpoints after the base, oldest first, and their spans. */
  checkpoints: readonly CompactionFact[];
  chainSpans: readonly CheckpointSpan[];
  /** Every compaction's recorded file paths, shown relative to `cwd`. */
  priorFiles(cwd: string): { read: string[]; modified: string[] };
  /** The branch's ledger state (`reduceBranch(branch, LEDGER_FACTS)`), kept as the branch grows. */
  state: LedgerState;
}

/** The branch's {@link CheckpointLookup}, brought up to date with the entries appended since the last call. */
export function checkpointLookup(branch: readonly SessionEntry[]): CheckpointLookup {
  const index = checkpointIndex.of(branch);
  return {
    indexOf: (id) => index.first.get(id) ?? -1,
    unique: !index.repeated,
    rawOutcome(entryId, callId) {
      if (index.ambiguous.has(callId)) return "unknown";
      const paired = index.byKey.get(`${entryId}|${callId}`);
      if (!paired?.result) return "unknown";
      return paired.result.view.isError ? "error" : "ok";
    },
    ambiguous: index.ambiguous,
    edits: index.edits,
    replaced: index.replaced,
    compactions: index.compactions,
    base: index.baseAt >= 0 ? index.compactions[index.baseAt] : undefined,
    checkpoints: index.compactions.slice(index.baseAt + 1),
    chainSpans: index.chainSpans,
    state: index.state,
    priorFiles(cwd) {
      let union = index.files.get(cwd);
      if (!union) {
        union = { count: 0, read: new Set(), modified: new Set() };
        index.files.set(cwd, union);
      }
      for (; union.count < index.compactions.length; union.count++) {
        const fact = index.compactions[union.count];
        for (const path of fact.read) union.read.add(displayPath(path, cwd));
        for (const path of fact.modified) union.modified.add(displayPath(path, cwd));
      }
      return { read: [...union.read], modified: [...union.modified] };
    },
  };
}
