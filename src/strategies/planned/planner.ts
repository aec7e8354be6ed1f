// The `planned` strategy: a planner (a model, or the built-in heuristic) ranks line ranges to delete from the
// numbered old region; deterministic code applies them and keeps every other line verbatim. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { CompactionEntry, SessionEntry } from "../../log/entries.ts";
import { textOf, type LedgerCompactionDetails } from "../../log/entries.ts";
import type { BranchProjection, ProjectedEntry } from "../../projection/project.ts";
import { estimateMessagesTokens, estimateTextTokens } from "../../projection/tokens.ts";
import type { CompactionInput, CompactionPlan, ModelReply, StrategyPlanner } from "../contract.ts";
import { type PlanDiagnostics, PlanError } from "../shared/fallback.ts";
import {
  applyPlan,
  DEFAULT_RETENTION,
  type PlanRange,
  regionTarget,
  type AppliedPlan,
  type RetentionOptions,
} from "./apply.ts";
import { rankDeletions, type LaterContext } from "./heuristic.ts";
import { buildPlannerPrompt, readPlanReply } from "./model-plan.ts";
import {
  buildTranscript,
  collectCalls,
  digestOf,
  encodeKinds,
  forgetTranscripts,
  type Provenance,
  rememberSummary,
  type TranscriptLine,
  transcriptsHeld,
} from "./transcript.ts";
import { LEDGER_FACTS } from "../catalog.ts";
import { BranchViews, heldCopy } from "./view.ts";

/** Which planner ranks the deletions. */
export type PlannerKind = "heuristic" | "model";

/** Settings of the strategy (`contextLedger.planned`). */
export interface PlannedOptions extends RetentionOptions {
  /**
   * `model` asks the injected model; `heuristic` ranks deterministically without one. Unset means the model
   * when the host provides one, else the heuristic (the lab and tests have no model).
   */
  planner?: PlannerKind;
  /** Deadline of one model planner call; past it the host aborts the call and Pi compacts natively. */
  timeoutMs?: number;
  /** Output cap of the model planner's reply, in tokens. */
  maxOutputTokens?: number;
  /**
   * Speculative planning (host side): past `speculationRatio` of the window at the end of a run, the planner request
   * is sent ahead, and a compaction whose request matches it exactly reuses the reply.
   */
  speculation?: boolean;
  speculationRatio?: number;
}

export const DEFAULT_PLANNED_OPTIONS = {
  ...DEFAULT_RETENTION,
  timeoutMs: 120_000,
  maxOutputTokens: 4_096,
  speculation: false,
  speculationRatio: 0.7,
} satisfies PlannedOptions;

/** Numbers the compaction card shows. Counts only: no transcript or planner text is stored. */
export type PlannedStats = Omit<AppliedPlan, "summary" | "kinds" | "body"> & { tokensAfter: number };

/** `details` of a planned compaction entry. */
export interface PlannedDetails extends LedgerCompactionDetails {
  v: 1;
  strategy: "planned";
  planner: PlannerKind;
  /** `provider/model` of the model planner. */
  model?: string;
  /** Binds each summary line's kind to the summary text, so the next compaction can trust it. */
  provenance: Provenance;
  stats: PlannedStats;
  /** How the model planner answered: form and record counts (no text). */
  plan?: PlanDiagnostics;
  /** Tokens the planner call used, as the provider reported them. */
  usage?: { input: number; output: number };
  /** The planner's reply was prepared ahead of the compaction and reused. */
  speculative?: boolean;
}

/** The newest compaction in view (its summary is part of the region), as Pi's preparation sees it. */
function priorCompaction(view: readonly ProjectedEntry[]): CompactionEntry | undefined {
  const first = view[0]?.sourceEntry;
  return first?.type === "compaction" ? first : undefined;
}

/**
 * Tool calls for the region's results: the region's own calls when they answer every result there (the usual
 * case, since Pi never cuts between a call and its result); otherwise the whole branch's calls, the region's
 * taking precedence, as before.
 */
function regionCalls(branch: readonly SessionEntry[], region: readonly AgentMessage[]) {
  const own = collectCalls(region);
  const answered = region.every(
    (m) => m.role !== "toolResult" || own.has(String((m as { toolCallId?: unknown }).toolCallId)),
  );
  if (answered) return own;
  const all = collectCalls(branch.flatMap((e) => (e.type === "message" ? [e.message as AgentMessage] : [])));
  return collectCalls(region, all);
}

/** The messages Pi keeps verbatim after the region (from its first kept entry on). */
function keptTail(input: CompactionInput, view: readonly ProjectedEntry[]): AgentMessage[] {
  const at = view.findIndex((e) => e.sourceEntry.id === input.firstKeptEntryId && e.sourceEntry.type !== "compaction");
  return at < 0 ? [] : view.slice(at).flatMap((e) => e.messages);
}

/** What a plan reads of its input: the numbered region, the kept tail, and the tail serialized like the region. */
interface RegionReading {
  lines: TranscriptLine[];
  tail: AgentMessage[];
  /** Built when first asked for: only the heuristic ranking reads it. */
  later?: LaterContext;
}

/**
 * True when two lists hold the same items, compared by identity. Two readings of one region share their line
 * objects (messages are serialized once, a summary comes back as the lines it was rendered from), so this is how
 * the lab's rows, which each read their own compaction of the same session, recognise the same region.
 */
function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The last ranking of the heuristic and the lines it ranked (one slot). */
let lastRanking:
  | { lines: readonly TranscriptLine[]; later: readonly TranscriptLine[]; ranking: PlanRange[] }
  | undefined;

/**
 * `rankDeletions(reading.lines, laterOf(reading))`, ranked again only when the region or the kept tail is not, line
 * for line, the one ranked last: the lab's heuristic row and its scripted model rank the same region of the same
 * session. The ranking is a pure function of those line objects. Shared: do not modify it.
 */
function rankingOf(reading: RegionReading): readonly PlanRange[] {
  const later = laterOf(reading).lines;
  const memo = lastRanking;
  if (memo && sameItems(memo.lines, reading.lines) && sameItems(memo.later, later)) return memo.ranking;
  const ranking = rankDeletions(reading.lines, laterOf(reading));
  lastRanking = { lines: reading.lines, later, ranking };
  return ranking;
}

/** The last plan applied: its lines, ranges (a flat copy: from, to, from, to…), retention and result (one slot). */
interface AppliedMemo {
  lines: readonly TranscriptLine[];
  ranges: Float64Array;
  retainRatio: number;
  minRetainedTokens: number;
  minSavedTokens: number;
  plan: AppliedPlan;
}

let lastApplied: AppliedMemo | undefined;

/** True when `ranges` are, in order, the ranges a memo was applied with. */
function sameRanges(flat: Float64Array, ranges: readonly PlanRange[]): boolean {
  if (flat.length !== ranges.length * 2) return false;
  for (let i = 0; i < ranges.length; i++) {
    if (flat[2 * i] !== ranges[i].from || flat[2 * i + 1] !== ranges[i].to) return false;
  }
  return true;
}

/**
 * `applyPlan(lines, ranges, options)`, applied again only when the lines, the ranges or the retention differ from
 * the last plan's: the lab's two planned rows (the heuristic, and the scripted model answering the heuristic's
 * ranking) apply the same ranges to the same region. The result is a pure function of them, and shared: do not
 * modify it. A plan that throws is not kept (its error is amended by the caller).
 */
function appliedOf(
  lines: readonly TranscriptLine[],
  ranges: readonly PlanRange[],
  options: RetentionOptions,
): AppliedPlan {
  const memo = lastApplied;
  if (
    memo &&
    memo.retainRatio === options.retainRatio &&
    memo.minRetainedTokens === options.minRetainedTokens &&
    memo.minSavedTokens === options.minSavedTokens &&
    sameRanges(memo.ranges, ranges) &&
    sameItems(memo.lines, lines)
  )
    return memo.plan;
  const plan = applyPlan(lines, ranges, options);
  const flat = new Float64Array(ranges.length * 2);
  for (let i = 0; i < ranges.length; i++) {
    flat[2 * i] = ranges[i].from;
    flat[2 * i + 1] = ranges[i].to;
  }
  const { retainRatio, minRetainedTokens, minSavedTokens } = options;
  lastApplied = { lines, ranges: flat, retainRatio, minRetainedTokens, minSavedTokens, plan };
  return plan;
}

function readingOf(input: CompactionInput, view: readonly ProjectedEntry[]): RegionReading {
  const messages = [...input.messagesToSummarize, ...input.turnPrefixMessages];
  const lines = buildTranscript({ prior: priorCompaction(view), messages, calls: regionCalls(input.branch, messages) });
  return { lines, tail: keptTail(input, view) };
}

function laterOf(reading: RegionReading): LaterContext {
  reading.later ??= { lines: buildTranscript({ messages: reading.tail, calls: collectCalls(reading.tail) }) };
  return reading.later;
}

/** A memoized reading and the input it was read from (copies of its lists, so an edit in place is noticed). */
interface RegionMemo {
  branch: readonly SessionEntry[];
  messagesToSummarize: readonly AgentMessage[];
  turnPrefixMessages: readonly AgentMessage[];
  firstKeptEntryId: string;
  reading: RegionReading;
}

/** The view memo every planned compaction of this process reads through (bounded). */
const VIEWS = new BranchViews();
/** Recent readings: the lab's scripted model reads the same compaction the planner then plans (bounded). */
let recentReadings: RegionMemo[] = [];
const READING_SLOTS = 2;

/**
 * Forget what the planned memos hold of the session last planned: its views (each a copy of its branch, so every
 * entry of it), its readings, its last ranking and plan, its serialized messages and rendered summaries. A live
 * session keeps them for its next compaction; the lab calls this between sessions, so a folder's replays do not
 * carry the previous session along.
 */
export function forgetPlannedMemos(): void {
  VIEWS.clear();
  recentReadings = [];
  lastRanking = undefined;
  lastApplied = undefined;
  forgetTranscripts();
}

/** Branches, readings, plans, messages and summaries the planned memos hold now (tests). */
export function plannedMemosHeld(): number {
  return VIEWS.size + recentReadings.length + (lastRanking ? 1 : 0) + (lastApplied ? 1 : 0) + transcriptsHeld();
}

/**
 * The reading of a compaction's input, computed once per compaction: the region's lines, the kept tail and its
 * lines are the same whoever asks (the lab's scripted model, then the planner). The view is read through the
 * branch memo, so its cost follows the entries appended since the last compaction and the view, not the branch.
 */
function regionReading(input: CompactionInput): RegionReading {
  const hit = recentReadings.find(
    (m) =>
      m.firstKeptEntryId === input.firstKeptEntryId &&
      sameItems(m.messagesToSummarize, input.messagesToSummarize) &&
      sameItems(m.turnPrefixMessages, input.turnPrefixMessages) &&
      sameItems(m.branch, input.branch),
  );
  if (hit) return hit.reading;
  const reading = readingOf(input, VIEWS.view(input.branch, LEDGER_FACTS));
  const memo: RegionMemo = {
    branch: heldCopy(input.branch),
    messagesToSummarize: heldCopy(input.messagesToSummarize),
    turnPrefixMessages: heldCopy(input.turnPrefixMessages),
    firstKeptEntryId: input.firstKeptEntryId,
    reading,
  };
  recentReadings = [memo, ...recentReadings].slice(0, READING_SLOTS);
  return reading;
}

/**
 * The compactable region as numbered lines: the previous summary, then Pi's messages and turn prefix. Given a
 * projection of the branch, it is read from that; otherwise from the memoized reading (shared: do not modify it).
 */
export function transcriptOf(input: CompactionInput, projection?: BranchProjection): TranscriptLine[] {
  return (projection ? readingOf(input, projection.entries) : regionReading(input)).lines;
}

/** The user's latest words on the branch: the objective the model planner is asked to protect. */
function objectiveOf(branch: readonly SessionEntry[]): string | undefined {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry.type === "message" && entry.message.role === "user") {
      const text = textOf(entry.message.content);
      if (text.trim()) return text;
    }
  }
  return undefined;
}

/** The kept tail serialized like the region, for the heuristic's "repeated later" checks. */
export function laterContextOf(input: CompactionInput, projection?: BranchProjection): LaterContext {
  return laterOf(projection ? readingOf(input, projection.entries) : regionReading(input));
}

/**
 * The heuristic's ranking of a compaction's region, read through the memoized reading: what
 * `rankDeletions(transcriptOf(input), laterContextOf(input))` gives, ranked once per compaction (shared: do not
 * modify it).
 */
export function heuristicRanking(input: CompactionInput): readonly PlanRange[] {
  return rankingOf(regionReading(input));
}

/** Estimated context after the compaction: summary, kept tail, system prompt. */
function tokensAfter(input: CompactionInput, summary: string, tail: readonly AgentMessage[]): number {
  return (
    estimateTextTokens(summary) +
    estimateMessagesTokens(tail) +
    (input.systemPrompt ? estimateTextTokens(input.systemPrompt) : 0)
  );
}

/** What the model planner adds to a plan's details. */
interface ModelRun {
  model?: string;
  plan: PlanDiagnostics;
  usage?: { input: number; output: number };
  speculative?: boolean;
}

/** Provenance by applied plan: a plan applied once (see {@link appliedOf}) is digested and encoded once. */
const PROVENANCE = new WeakMap<AppliedPlan, Provenance>();

function provenanceOf(applied: AppliedPlan): Provenance {
  let provenance = PROVENANCE.get(applied);
  if (!provenance) {
    provenance = { digest: digestOf(applied.summary), kinds: encodeKinds(applied.kinds) };
    PROVENANCE.set(applied, provenance);
  }
  return provenance;
}

function toPlan(
  input: CompactionInput,
  planner: PlannerKind,
  applied: AppliedPlan,
  tail: readonly AgentMessage[],
  run?: ModelRun,
): CompactionPlan {
  const after = tokensAfter(input, applied.summary, tail);
  const provenance = provenanceOf(applied);
  // The next compaction reads this summary back as its prior: from these lines, not by parsing it again.
  rememberSummary(applied.summary, provenance, applied.body);
  const details: PlannedDetails = {
    v: 1,
    strategy: "planned",
    planner,
    ...(run?.model ? { model: run.model } : {}),
    provenance: { ...provenance },
    stats: {
      regionTokens: applied.regionTokens,
      targetTokens: applied.targetTokens,
      keptTokens: applied.keptTokens,
      removedLines: applied.removedLines,
      pinnedLines: applied.pinnedLines,
      proposedRanges: applied.proposedRanges,
      appliedRanges: applied.appliedRanges,
      trimmed: applied.trimmed,
      tokensAfter: after,
    },
    ...(run ? { plan: run.plan } : {}),
    ...(run?.usage ? { usage: run.usage } : {}),
    ...(run?.speculative ? { speculative: true } : {}),
  };
  return {
    summary: applied.summary,
    firstKeptEntryId: input.firstKeptEntryId,
    tokensBefore: input.tokensBefore,
    estimatedTokensAfter: after,
    details,
  };
}

/** Plan with the heuristic: same input, same bytes. Throws PlanError when the region cannot shrink enough. */
export function planHeuristic(input: CompactionInput, options: RetentionOptions = DEFAULT_RETENTION): CompactionPlan {
  const { reading } = regionOf(input, options);
  return toPlan(input, "heuristic", appliedOf(reading.lines, rankingOf(reading), options), reading.tail);
}

/** The numbered region and its target; throws before any planning when the region cannot give the saving. */
function regionOf(input: CompactionInput, options: RetentionOptions) {
  // One reading of the branch's view serves the prior summary, the later context and the size after the compaction.
  const reading = regionReading(input);
  const { lines } = reading;
  const probe = regionTarget(lines, options);
  // Checked before any model call: a region this small cannot give the required saving whatever the plan.
  if (probe.regionTokens - options.minRetainedTokens < Math.max(options.minSavedTokens, 1)) {
    throw new PlanError(
      "too-small",
      `the region is about ${probe.regionTokens} tokens; keeping ${options.minRetainedTokens} cannot save ${options.minSavedTokens}`,
      {
        regionLines: lines.length,
        regionTokens: probe.regionTokens,
        targetTokens: probe.targetTokens,
      },
    );
  }
  return { lines, probe, reading };
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error("planned compaction aborted");
}

/**
 * Plan with the configured planner. Rejects when the signal aborts, when the model is missing or its reply is
 * not a usable plan, and when the plan saves too little: the host then falls back to Pi's native compaction.
 * Every PlanError leaves with the region's counts in its diagnostics, for the host's bounded failure record.
 */
export async function planPlanned(
  input: CompactionInput,
  options: PlannedOptions,
  signal: AbortSignal,
): Promise<CompactionPlan> {
  if (signal.aborted) throw abortError(signal);
  const kind: PlannerKind = options.planner ?? (input.complete ? "model" : "heuristic");
  let region: PlanDiagnostics = {};
  try {
    const { lines, probe, reading } = regionOf(input, options);
    region = { regionLines: lines.length, regionTokens: probe.regionTokens, targetTokens: probe.targetTokens };
    if (kind === "heuristic")
      return toPlan(input, kind, appliedOf(reading.lines, rankingOf(reading), options), reading.tail);
    if (!input.complete) throw new PlanError("no-model", "the model planner is configured but no model is available");
    const request = buildPlannerPrompt(lines, {
      objective: objectiveOf(input.branch),
      ...probe,
      customInstructions: input.customInstructions,
    });
    const maxOutputTokens = options.maxOutputTokens ?? DEFAULT_PLANNED_OPTIONS.maxOutputTokens;
    const timeoutMs = options.timeoutMs ?? DEFAULT_PLANNED_OPTIONS.timeoutMs;
    const reply: string | ModelReply = await input.complete({ ...request, maxOutputTokens, timeoutMs }, signal);
    if (signal.aborted) throw abortError(signal);
    const run: ModelRun = { plan: {} };
    if (typeof reply !== "string") {
      run.model = reply.model;
      run.usage = reply.usage;
      run.speculative = reply.speculative;
    }
    const read = readPlanReply(reply, lines.length);
    run.plan = read.diagnostics;
    try {
      return toPlan(input, kind, appliedOf(reading.lines, read.ranges, options), reading.tail, run);
    } catch (error) {
      if (error instanceof PlanError) error.diagnostics = { ...read.diagnostics, ...error.diagnostics };
      throw error;
    }
  } catch (error) {
    if (error instanceof PlanError) error.diagnostics = { ...error.diagnostics, ...region };
    throw error;
  }
}

/** The planner for the host, with options read at call time (settings can change between compactions). */
export function createPlannedPlanner(
  getOptions: () => PlannedOptions = () => DEFAULT_PLANNED_OPTIONS,
): StrategyPlanner {
  return {
    name: "planned",
    plan: (input, signal) => planPlanned(input, getOptions(), signal),
  };
}
