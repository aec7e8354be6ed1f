// The `checkpoint` strategy: a deterministic verbatim checkpoint at Pi's chosen boundary, built without a
// model call. Earlier checkpoint spans are re-rendered from their details, never re-summarized. Pure: no I/O.
import type { CompactionEntry, SessionEntry } from "../../log/entries.ts";
import { isLedgerCompaction, type LedgerCompactionDetails } from "../../log/entries.ts";
import { projectBranch, projectView } from "../../projection/project.ts";
import { CHARS_PER_TOKEN, estimateMessagesTokens, estimateTextTokens } from "../../projection/tokens.ts";
import type { CompactionInput, CompactionPlan, StrategyPlanner } from "../contract.ts";
import { capSpans } from "./cap.ts";
import {
  pairCalls,
  outcomeOf,
  textBlocks,
  toolResultOf,
  type Outcome,
  type ToolCallView,
} from "../shared/conversation.ts";
import {
  annotateFiles,
  mergeFileLists,
  spanFileOps,
  type FileLists,
  type StartupEvidence,
} from "../shared/file-evidence.ts";
import { checkpointLookup } from "./branch-index.ts";
import { footLines, headLines, renderSummary, type RenderableStartupRead } from "./render.ts";
import { buildSpan, type CheckpointSpan } from "./spans.ts";
import { readStoredState, selectStartupReads, type StartupReadState } from "../shared/startup-reads.ts";
import { LEDGER_FACTS } from "../catalog.ts";

/** Settings of the strategy (from `contextLedger`). */
export interface CheckpointOptions {
  /** Cap on the checkpoint as a percentage of the context window; null or 0 turns the cap off. */
  capPercent: number | null;
  /** Retain startup reads named by the project instructions. */
  startupReads: boolean;
}

export const DEFAULT_CHECKPOINT_OPTIONS: CheckpointOptions = { capPercent: 25, startupReads: true };

/** Numbers the checkpoint card and the recap show. */
export interface CheckpointStats {
  spans: number;
  startupReads: string[];
  removedItems: number;
  shortenedItems: number;
  trimmedSpans: number;
  /** Cap in tokens, or null when the cap is off. */
  budgetTokens: number | null;
  summaryTokens: number;
  tokensAfter: number;
}

/** `details` of a checkpoint compaction entry. */
export interface CheckpointDetails extends LedgerCompactionDetails {
  v: 1;
  strategy: "checkpoint";
  /** This checkpoint's own span, uncapped. Earlier spans live in earlier checkpoints' details. */
  spans: CheckpointSpan[];
  /** Startup-read selection, carried forward once closed. Absent when the feature is off. */
  startupReads?: StartupReadState;
  /** Cumulative file lists (paths only: labels are recomputed each time). */
  files: FileLists;
  stats: CheckpointStats;
  warnings?: string[];
}

/** True for a compaction written by this strategy with details this version can re-render. */
export function isCheckpointCompaction(entry: SessionEntry): entry is CompactionEntry<CheckpointDetails> {
  return isLedgerCompaction(entry) && entry.details?.strategy === "checkpoint" && Array.isArray(entry.details.spans);
}

/** Text of a branch entry's tool result (for retained startup reads). */
function resultText(entry: SessionEntry | undefined): string | undefined {
  if (entry?.type !== "message") return undefined;
  const result = toolResultOf(entry.message);
  return result ? textBlocks(result.content).join("\n") : undefined;
}

function lineChars(lines: readonly string[]): number {
  let total = 0;
  for (const line of lines) total += line.length + 1;
  return total;
}

/**
 * Plan a checkpoint compaction. Same input, same bytes: no clocks, no randomness, no model.
 * The boundary is Pi's `firstKeptEntryId`, unchanged.
 */
export function planCheckpoint(
  input: CompactionInput,
  options: CheckpointOptions = DEFAULT_CHECKPOINT_OPTIONS,
): CompactionPlan {
  const { branch, cwd } = input;
  // Whole-branch facts (positions, raw pairing, edits, prior compactions, the ledger state) come from an index kept
  // per branch and found again by its entries (each compaction gets a fresh copy of the branch), so a plan reads the
  // entries appended since the last one and the view, not the whole branch again.
  const lookup = checkpointLookup(branch);
  const edits = lookup.edits;
  // The view from the index's state and positions walks the view only (from the newest compaction's cut on); the
  // index gives an id's first position, a one-shot projection its last, so a file with repeated ids gets the latter.
  const positions = { indexOf: lookup.indexOf, get: (id: string) => branch[lookup.indexOf(id)] };
  const entries = lookup.unique
    ? projectView(branch, lookup.state, LEDGER_FACTS, () => positions)
    : projectBranch(branch, LEDGER_FACTS).entries;

  // The span runs from after the newest compaction's slot to Pi's boundary; the tail is the rest.
  const spanStart = entries[0]?.sourceEntry.type === "compaction" ? 1 : 0;
  let tailStart = entries.findIndex((entry, i) => i >= spanStart && entry.sourceEntry.id === input.firstKeptEntryId);
  if (tailStart < 0) tailStart = entries.length;
  let rawTailStart = lookup.indexOf(input.firstKeptEntryId);
  if (rawTailStart < 0) rawTailStart = branch.length;

  // Outcomes come from the visible result, or from the raw session when an edit hid it.
  const outcomes = new Map<string, Outcome>();
  for (const paired of pairCalls(entries, spanStart)) outcomes.set(`${paired.at}|${paired.call.id}`, outcomeOf(paired));
  // The raw fallback pairs by the same rules over the whole branch, so an id that is ambiguous anywhere on the
  // branch stays unknown instead of borrowing whichever result came last.
  const ambiguous = lookup.ambiguous;
  const outcome = (call: ToolCallView, at: number): Outcome => {
    if (ambiguous.has(call.id)) return "unknown";
    const seen = outcomes.get(`${at}|${call.id}`);
    if (seen && seen !== "unknown") return seen;
    return lookup.rawOutcome(entries[at].sourceEntry.id, call.id);
  };

  const { base, checkpoints } = lookup;
  const priorSpans = lookup.chainSpans;
  const ownSpan = buildSpan(entries, spanStart, tailStart, priorSpans.length + 1, outcome, cwd);
  const allSpans = [...priorSpans, ownSpan];

  const files = mergeFileLists(lookup.priorFiles(cwd), spanFileOps(pairCalls(entries, spanStart, tailStart), cwd));

  let startupState: StartupReadState | undefined;
  const retained: RenderableStartupRead[] = [];
  const startupEvidence = new Map<string, StartupEvidence>();
  if (options.startupReads) {
    const previous = readStoredState(checkpoints[checkpoints.length - 1]?.startupReads);
    startupState = selectStartupReads(previous, {
      branch,
      cwd,
      contextFiles: input.contextFiles,
      systemPrompt: input.systemPrompt,
      edits,
    });
    // A position is an id's last entry on the branch; the kept index gives the first, the same when ids are unique
    // (a malformed file with repeated ids gets the whole-branch map).
    let position = (id: string): number | undefined => {
      const at = lookup.indexOf(id);
      return at < 0 ? undefined : at;
    };
    if (!lookup.unique && startupState.reads.length) {
      const last = new Map<string, number>();
      branch.forEach((entry, i) => last.set(entry.id, i));
      position = (id) => last.get(id);
    }
    for (const ref of startupState.reads) {
      const index = position(ref.entryId);
      // Reads still in the verbatim tail are already in view; they join the checkpoint once the cut passes them.
      if (index === undefined || index >= rawTailStart) continue;
      const text = resultText(branch[index]);
      if (text === undefined) continue;
      retained.push({
        entryId: ref.entryId,
        path: ref.path,
        offset: ref.offset,
        limit: ref.limit,
        completeness: ref.completeness,
        text,
      });
      const known = startupEvidence.get(ref.path);
      if (!known || (known.completeness !== "full" && ref.completeness === "full"))
        startupEvidence.set(ref.path, { completeness: ref.completeness, index });
    }
  }

  const annotated = annotateFiles({
    branch,
    entries,
    tailStart,
    rawTailStart,
    replaced: lookup.replaced,
    cwd,
    lists: files,
    startup: startupEvidence,
    ambiguous,
  });

  const baseBlock = base ? { entryId: base.entry.id, summary: base.entry.summary } : undefined;
  const overheadChars =
    lineChars(headLines(baseBlock)) + lineChars(footLines({ startupReads: retained, ...annotated }));
  const capOn = options.capPercent !== null && options.capPercent > 0;
  const budgetTokens = capOn ? Math.floor((input.contextWindow * options.capPercent!) / 100) : null;
  const warnings: string[] = [];
  let spanBudget = Number.POSITIVE_INFINITY;
  if (budgetTokens !== null) {
    const budgetChars = budgetTokens * CHARS_PER_TOKEN;
    spanBudget = budgetChars - overheadChars;
    if (overheadChars > budgetChars) {
      warnings.push(
        `Retained startup reads, file lists and the inherited summary alone take about ${Math.ceil(overheadChars / CHARS_PER_TOKEN)} tokens, over the checkpoint cap of ${budgetTokens}; they are kept in full.`,
      );
    }
  }
  const capped = capSpans(allSpans, spanBudget);

  const summary = renderSummary({ base: baseBlock, spans: capped.spans, startupReads: retained, ...annotated });
  const summaryTokens = estimateTextTokens(summary);
  const tailMessages = entries.slice(tailStart).flatMap((entry) => entry.messages);
  const tokensAfter =
    summaryTokens +
    estimateMessagesTokens(tailMessages) +
    (input.systemPrompt ? estimateTextTokens(input.systemPrompt) : 0);

  const details: CheckpointDetails = {
    v: 1,
    strategy: "checkpoint",
    spans: [ownSpan],
    ...(startupState ? { startupReads: startupState } : {}),
    files,
    stats: {
      spans: allSpans.length,
      startupReads: retained.map((read) => read.path),
      removedItems: capped.removedItems,
      shortenedItems: capped.shortenedItems,
      trimmedSpans: capped.trimmedSpans,
      budgetTokens,
      summaryTokens,
      tokensAfter,
    },
    ...(warnings.length ? { warnings } : {}),
  };
  return {
    summary,
    firstKeptEntryId: input.firstKeptEntryId,
    tokensBefore: input.tokensBefore,
    estimatedTokensAfter: tokensAfter,
    details,
  };
}

/** Builds the planner for the host, with options read at call time (settings can change between compactions). */
export function createCheckpointPlanner(
  getOptions: () => CheckpointOptions = () => DEFAULT_CHECKPOINT_OPTIONS,
): StrategyPlanner {
  return {
    name: "checkpoint",
    // No model and no await: the plan is ready as soon as it is asked for.
    plan: async (input) => planCheckpoint(input, getOptions()),
  };
}

/** The checkpoint planner with default options. */
export const checkpointPlanner: StrategyPlanner = createCheckpointPlanner();
