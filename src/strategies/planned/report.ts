// Bounded records of the `planned` strategy's outcomes: the failure record a fallback leaves, the card lines shown
// for it and for the native compaction that followed, and the planner usage `/context` reports. Pure: no I/O; every
// record holds categories and numbers only, never transcript or planner text.
import type { SessionEntry } from "../../log/entries.ts";
import { isLedgerCompaction } from "../../log/entries.ts";
import { LedgerType } from "../catalog.ts";
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

/** customType of the card a successful planned compaction leaves (custom entry: shown, never sent to the model). */
export const PLANNED_REPORT = "context-ledger/planned-report";

/** `data` of a `context-ledger/planned-report` entry: the numbers of one successful planned compaction. */
export interface PlannedReportDetails {
  v: 1;
  compactionEntryId: string;
  trigger: "manual" | "threshold" | "overflow";
  planner: "model" | "heuristic";
  /** `provider/model` of the model planner. */
  model?: string;
  tokensBefore: number;
  /** Estimated context after the compaction. */
  tokensAfter: number;
  regionTokens: number;
  keptTokens: number;
  removedLines: number;
  pinnedLines: number;
  durationMs: number;
  /** How the planner's reply read: records sent, accepted, discarded, and whether a cut record was dropped. */
  plan?: Pick<PlanDiagnostics, "form" | "records" | "accepted" | "discarded" | "truncated" | "stopReason">;
  usage?: { input: number; output: number };
  speculative?: boolean;
}

/** The card record of a stored planned compaction, from its details and the host's timing. */
export function plannedReport(
  entry: { id: string; tokensBefore: number; details?: unknown },
  facts: { trigger: PlannedReportDetails["trigger"]; durationMs: number },
): PlannedReportDetails | undefined {
  const details = entry.details as Partial<PlannedDetails> | undefined;
  if (details?.v !== 1 || details.strategy !== "planned" || !details.stats) return undefined;
  const s = details.stats;
  const plan = details.plan ? boundedCounts(details.plan) : undefined;
  return {
    v: 1,
    compactionEntryId: entry.id,
    trigger: facts.trigger,
    planner: details.planner === "model" ? "model" : "heuristic",
    ...(details.model ? { model: details.model } : {}),
    tokensBefore: entry.tokensBefore,
    tokensAfter: s.tokensAfter,
    regionTokens: s.regionTokens,
    keptTokens: s.keptTokens,
    removedLines: s.removedLines,
    pinnedLines: s.pinnedLines,
    durationMs: Math.max(0, Math.round(facts.durationMs)),
    ...(plan
      ? {
          plan: {
            form: plan.form,
            records: plan.records,
            accepted: plan.accepted,
            discarded: plan.discarded,
            truncated: plan.truncated,
            stopReason: plan.stopReason,
          },
        }
      : {}),
    ...(details.usage ? { usage: { input: details.usage.input, output: details.usage.output } } : {}),
    ...(details.speculative ? { speculative: true } : {}),
  };
}

const plural = (n: number, word: string) => `${fmt(n)} ${word}${n === 1 ? "" : "s"}`;

/** The plan counts of a recovered plan (records were discarded), or undefined when every record was used. */
function recoveredLine(plan: PlannedReportDetails["plan"]): string | undefined {
  if (!plan?.discarded) return undefined;
  return `recovered plan (${plan.form ?? "?"} form): ${plural(plan.records ?? 0, "record")}, ${fmt(plan.accepted ?? 0)} accepted, ${fmt(plan.discarded)} discarded${plan.truncated ? " (the last one was cut by the output limit)" : ""}`;
}

/** Card lines of a successful planned compaction; always in full (numbers only). */
export function plannedCardLines(r: PlannedReportDetails): string[] {
  const kept = r.regionTokens > 0 ? ` (${Math.round((r.keptTokens / r.regionTokens) * 100)}% of the region kept)` : "";
  const who = r.planner === "model" ? (r.model ?? "model planner") : "heuristic planner";
  const lines = [
    "planned compaction",
    `  ${fmt(r.tokensBefore)} → ~${fmt(r.tokensAfter)} tokens${kept} · ${plural(r.removedLines, "line")} removed`,
    `  ${plural(r.pinnedLines, "pinned line")} · ${who} · ${seconds(r.durationMs)} · ${r.trigger}${r.speculative ? " · prepared ahead" : ""}`,
  ];
  const recovered = recoveredLine(r.plan);
  if (recovered) lines.push(`  ${recovered}`);
  if (r.usage) lines.push(`  planner tokens: ${fmt(r.usage.input)} in, ${fmt(r.usage.output)} out`);
  return lines;
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

const NUMBER_KEYS: ReadonlyArray<keyof PlanDiagnostics> = [
  "records",
  "accepted",
  "discarded",
  "firstDiscarded",
  "regionLines",
  "regionTokens",
  "targetTokens",
];

/** Stop reasons a provider reports (pi-ai's `StopReason`); anything else is not kept. */
const STOP_REASONS: ReadonlySet<string> = new Set([
  "stop",
  "length",
  "toolUse",
  "error",
  "aborted",
  "pending",
  "deferred",
]);

/** Copy only the numeric counts and known category names: nothing of an error's free text survives. */
function boundedCounts(diagnostics: PlanDiagnostics): PlanDiagnostics {
  const out: PlanDiagnostics = {};
  if (diagnostics.form === "tool" || diagnostics.form === "text") out.form = diagnostics.form;
  for (const key of NUMBER_KEYS) {
    const value = diagnostics[key];
    if (typeof value === "number" && Number.isFinite(value)) (out as Record<string, number>)[key] = value;
  }
  if (typeof diagnostics.stopReason === "string" && STOP_REASONS.has(diagnostics.stopReason))
    out.stopReason = diagnostics.stopReason;
  if (diagnostics.truncated === true) out.truncated = true;
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
  facts: {
    strategy: string;
    trigger: PlannerFailureDetails["trigger"];
    durationMs: number;
    model?: string;
    usage?: { input: number; output: number };
    reason?: string;
  },
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
  if (c.regionLines !== undefined)
    lines.push(
      `  region: ${fmt(c.regionLines)} lines, ~${fmt(c.regionTokens ?? 0)} tokens, target ~${fmt(c.targetTokens ?? 0)}`,
    );
  if (c.records !== undefined) {
    const by = Object.entries(c.discardedBy ?? {}).map(([k, n]) => `${k} ${n}`);
    lines.push(
      `  plan (${c.form ?? "?"} form): ${c.records} records, ${c.accepted ?? 0} accepted, ${c.discarded ?? 0} discarded${by.length ? ` (${by.join(", ")}; first #${c.firstDiscarded})` : ""}`,
    );
  }
  if (c.stopReason)
    lines.push(`  planner reply ended with: ${c.stopReason}${c.truncated ? " (cut record dropped)" : ""}`);
  if (details.usage) lines.push(`  planner tokens: ${fmt(details.usage.input)} in, ${fmt(details.usage.output)} out`);
  return lines;
}

/** Card line of the native compaction that followed a failure. */
export function nativeCardLines(details: NativeCompactionDetails): string[] {
  return [
    `native compaction · ${fmt(details.tokensBefore)} → ~${fmt(details.summaryTokens)} tokens · ${details.trigger} (after ${details.after} failed)`,
  ];
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
  /** Planner calls and tokens by `provider/model`. */
  byModel: Record<string, { compactions: number; fallbacks: number; input: number; output: number }>;
  /** The newest successful planned compaction's card record on the branch. */
  lastRun?: PlannedReportDetails;
}

/** Fold the branch's planned compactions and failure records into counts. */
export function plannedUsage(branch: Iterable<SessionEntry>): PlannedUsage {
  // Categories and models come from the session file: records without a prototype count "constructor" like any other name.
  const usage: PlannedUsage = {
    compactions: 0,
    byPlanner: {},
    trimmed: 0,
    modelInput: 0,
    modelOutput: 0,
    fallbacks: 0,
    byCategory: Object.create(null) as Record<string, number>,
    byModel: Object.create(null) as PlannedUsage["byModel"],
  };
  const perModel = (model: unknown) => {
    const key = typeof model === "string" && model ? model.slice(0, 100) : undefined;
    if (!key) return undefined;
    return (usage.byModel[key] ??= { compactions: 0, fallbacks: 0, input: 0, output: 0 });
  };
  for (const entry of branch) {
    if (isLedgerCompaction(entry) && entry.details?.strategy === "planned") {
      const details = entry.details as Partial<PlannedDetails>;
      usage.compactions++;
      const planner = details.planner === "model" || details.planner === "heuristic" ? details.planner : "unknown";
      usage.byPlanner[planner] = (usage.byPlanner[planner] ?? 0) + 1;
      if (details.stats?.trimmed) usage.trimmed++;
      usage.modelInput += finite(details.usage?.input);
      usage.modelOutput += finite(details.usage?.output);
      const m = perModel(details.model);
      if (m) {
        m.compactions++;
        m.input += finite(details.usage?.input);
        m.output += finite(details.usage?.output);
      }
    } else if (entry.type === "custom" && entry.customType === PLANNED_REPORT) {
      const data = entry.data as Partial<PlannedReportDetails> | undefined;
      if (data?.v === 1 && typeof data.tokensBefore === "number") usage.lastRun = data as PlannedReportDetails;
    } else if (entry.type === "custom" && entry.customType === LedgerType.plannerFailure) {
      const data = entry.data as Partial<PlannerFailureDetails> | undefined;
      if (data?.strategy !== "planned") continue;
      usage.fallbacks++;
      const category = typeof data.category === "string" ? data.category.slice(0, 40) : "unknown";
      usage.byCategory[category] = (usage.byCategory[category] ?? 0) + 1;
      usage.modelInput += finite(data.usage?.input);
      usage.modelOutput += finite(data.usage?.output);
      const m = perModel(data.model);
      if (m) {
        m.fallbacks++;
        m.input += finite(data.usage?.input);
        m.output += finite(data.usage?.output);
      }
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
  const lines = [
    `  planned: ${usage.compactions} compaction${usage.compactions === 1 ? "" : "s"}${planners.length ? ` (${planners.join(", ")})` : ""}, ${usage.trimmed} trimmed at the target; planner tokens ${fmt(usage.modelInput)} in, ${fmt(usage.modelOutput)} out`,
    `  planned fallbacks to native: ${usage.fallbacks}${categories.length ? ` (${categories.join(", ")})` : ""}`,
  ];
  for (const [model, m] of Object.entries(usage.byModel)) {
    lines.push(
      `    planner ${model}: ${plural(m.compactions, "compaction")}, ${plural(m.fallbacks, "fallback")}; ${fmt(m.input)} in, ${fmt(m.output)} out`,
    );
  }
  const r = usage.lastRun;
  if (r) {
    const who = r.planner === "model" ? (r.model ?? "model planner") : "heuristic planner";
    lines.push(
      `  planned last run: ${fmt(r.tokensBefore)} → ~${fmt(r.tokensAfter)} tokens, ${plural(r.removedLines, "line")} removed, ${plural(r.pinnedLines, "pinned line")}, ${who}, ${seconds(r.durationMs)}, ${r.trigger}`,
    );
    const recovered = recoveredLine(r.plan);
    if (recovered) lines.push(`    ${recovered}`);
  }
  return lines;
}
