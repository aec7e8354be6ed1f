// Bounded records of the `planned` strategy's outcomes: the failure record a fallback leaves, the card lines shown
// for it and for the native compaction that followed, and the planner usage `/context` reports. Pure: no I/O; every
// record holds categories and numbers only, never transcript or planner text.
import type { SessionEntry } from "../../log/entries.ts";
import { isLedgerCompaction, LedgerType } from "../../log/entries.ts";
import { PlanError, type PlanDiagnostics } from "./apply.ts";
import type { PlannedDetails } from "./planner.ts";

/** Longest reason a failure record keeps. Our own reasons are short and carry numbers only. */
const REASON_CHARS = 200;

/** `data` of a `context-ledger/planner-failure` entry. */
export interface PlannerFailureDetails {
  v: 1;
  strategy: string;
  trigger: "manual" | "threshold" | "overflow";
  /** `timeout`, `model-unresolved`, `no-valid-records`, `too-little`, … or `error` for anything unexpected. */
  category: string;
  reason: string;
  counts: PlanDiagnostics;
  /** `provider/model` the planner asked, when it asked one. */
  model?: string;
  durationMs: number;
  /** Tokens of the failed planner call, when the provider reported them. */
  usage?: { input: number; output: number };
}

/** `data` of a `context-ledger/native-compaction` entry. */
export interface NativeCompactionDetails {
  v: 1;
  trigger: "manual" | "threshold" | "overflow";
  compactionEntryId: string;
  tokensBefore: number;
  /** Estimated tokens of Pi's summary. */
  summaryTokens: number;
  /** The strategy that failed before it. */
  after: string;
}

const NUMBER_KEYS: ReadonlyArray<keyof PlanDiagnostics> = ["records", "accepted", "discarded", "firstDiscarded", "regionLines", "regionTokens", "targetTokens"];

/** Copy only the numeric counts and known category names: nothing of an error's free text survives. */
function boundedCounts(diagnostics: PlanDiagnostics): PlanDiagnostics {
  const out: PlanDiagnostics = {};
  if (diagnostics.form === "tool" || diagnostics.form === "text") out.form = diagnostics.form;
  for (const key of NUMBER_KEYS) {
    const value = diagnostics[key];
    if (typeof value === "number" && Number.isFinite(value)) (out as Record<string, number>)[key] = value;
  }
  if (diagnostics.discardedBy) {
    const by: Record<string, number> = {};
    for (const name of ["shape", "reversed", "bounds"]) {
      const n = diagnostics.discardedBy[name];
      if (typeof n === "number" && n > 0) by[name] = n;
    }
    out.discardedBy = by;
  }
  return out;
}

/**
 * The failure record for an attempt that ended in Pi's native compaction. A PlanError keeps its category, its
 * (numbers-only) message and counts; a plan the host refused keeps the host's own reason (`invalid-plan`); any other
 * error, whose text may come from a provider, becomes `error` without its text.
 */
export function failureDetails(
  error: unknown,
  facts: { strategy: string; trigger: PlannerFailureDetails["trigger"]; durationMs: number; model?: string; usage?: { input: number; output: number }; reason?: string },
): PlannerFailureDetails {
  const known = error instanceof PlanError;
  const reason = known ? error.message : (facts.reason ?? "the planner failed");
  return {
    v: 1,
    strategy: facts.strategy,
    trigger: facts.trigger,
    category: known ? error.category : error === undefined && facts.reason ? "invalid-plan" : "error",
    reason: reason.length > REASON_CHARS ? `${reason.slice(0, REASON_CHARS - 1)}…` : reason,
    counts: known ? boundedCounts(error.diagnostics) : {},
    ...(facts.model ? { model: facts.model } : {}),
    durationMs: Math.max(0, Math.round(facts.durationMs)),
    ...(facts.usage ? { usage: { input: facts.usage.input, output: facts.usage.output } } : {}),
  };
}

const fmt = (n: number) => n.toLocaleString("en-US");
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** Card lines of a failed attempt: one line collapsed, the counts when expanded. */
export function failureCardLines(details: PlannerFailureDetails, expanded: boolean): string[] {
  const head = `${details.strategy} compaction failed (${details.category}) · ${[details.model, seconds(details.durationMs), details.trigger].filter(Boolean).join(" · ")} → Pi compacted natively`;
  if (!expanded) return [head];
  const c = details.counts;
  const lines = [head, `  ${details.reason}`];
  if (c.regionLines !== undefined) lines.push(`  region: ${fmt(c.regionLines)} lines, ~${fmt(c.regionTokens ?? 0)} tokens, target ~${fmt(c.targetTokens ?? 0)}`);
  if (c.records !== undefined) {
    const by = Object.entries(c.discardedBy ?? {}).map(([k, n]) => `${k} ${n}`);
    lines.push(
      `  plan (${c.form ?? "?"} form): ${c.records} records, ${c.accepted ?? 0} accepted, ${c.discarded ?? 0} discarded${by.length ? ` (${by.join(", ")}; first #${c.firstDiscarded})` : ""}`,
    );
  }
  if (details.usage) lines.push(`  planner tokens: ${fmt(details.usage.input)} in, ${fmt(details.usage.output)} out`);
  return lines;
}

/** Card line of the native compaction that followed a failure. */
export function nativeCardLines(details: NativeCompactionDetails): string[] {
  return [`native compaction · ${fmt(details.tokensBefore)} → ~${fmt(details.summaryTokens)} tokens · ${details.trigger} (after ${details.after} failed)`];
}

/** Planner usage and fallbacks on a branch, for `/context`. */
export interface PlannedUsage {
  compactions: number;
  byPlanner: Record<string, number>;
  /** Compactions whose range was trimmed at the target. */
  trimmed: number;
  modelInput: number;
  modelOutput: number;
  fallbacks: number;
  byCategory: Record<string, number>;
}

/** Fold the branch's planned compactions and failure records into counts. */
export function plannedUsage(branch: Iterable<SessionEntry>): PlannedUsage {
  // Categories come from the session file: a record without a prototype counts "constructor" like any other name.
  const usage: PlannedUsage = { compactions: 0, byPlanner: {}, trimmed: 0, modelInput: 0, modelOutput: 0, fallbacks: 0, byCategory: Object.create(null) as Record<string, number> };
  for (const entry of branch) {
    if (isLedgerCompaction(entry) && entry.details?.strategy === "planned") {
      const details = entry.details as Partial<PlannedDetails>;
      usage.compactions++;
      const planner = details.planner === "model" || details.planner === "heuristic" ? details.planner : "unknown";
      usage.byPlanner[planner] = (usage.byPlanner[planner] ?? 0) + 1;
      if (details.stats?.trimmed) usage.trimmed++;
      usage.modelInput += finite(details.usage?.input);
      usage.modelOutput += finite(details.usage?.output);
    } else if (entry.type === "custom" && entry.customType === LedgerType.plannerFailure) {
      const data = entry.data as Partial<PlannerFailureDetails> | undefined;
      if (data?.strategy !== "planned") continue;
      usage.fallbacks++;
      const category = typeof data.category === "string" ? data.category.slice(0, 40) : "unknown";
      usage.byCategory[category] = (usage.byCategory[category] ?? 0) + 1;
      usage.modelInput += finite(data.usage?.input);
      usage.modelOutput += finite(data.usage?.output);
    }
  }
  return usage;
}

const finite = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) ? n : 0);

/** The `/context` lines for planned usage; none when the branch never used the strategy. */
export function usageLines(usage: PlannedUsage): string[] {
  if (!usage.compactions && !usage.fallbacks) return [];
  const planners = Object.entries(usage.byPlanner).map(([k, n]) => `${k} ${n}`);
  const categories = Object.entries(usage.byCategory).map(([k, n]) => `${k} ${n}`);
  return [
    `  planned: ${usage.compactions} compaction${usage.compactions === 1 ? "" : "s"}${planners.length ? ` (${planners.join(", ")})` : ""}, ${usage.trimmed} trimmed at the target; planner tokens ${fmt(usage.modelInput)} in, ${fmt(usage.modelOutput)} out`,
    `  planned fallbacks to native: ${usage.fallbacks}${categories.length ? ` (${categories.join(", ")})` : ""}`,
  ];
}
