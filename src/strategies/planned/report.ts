// Bounded records of the `planned` strategy's outcomes: the card of a successful compaction and the planner usage
// `/context` reports (the failure record every strategy shares is in ../shared/fallback.ts). Pure: no I/O; every
// record holds categories and numbers only, never transcript or planner text.
import type { SessionEntry } from "../../log/entries.ts";
import { isLedgerCompaction } from "../../log/entries.ts";
import { LedgerType } from "../catalog.ts";
import { boundedCounts, type PlanDiagnostics, type PlannerFailureDetails } from "../shared/fallback.ts";
import type { PlannedDetails } from "./planner.ts";

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

const fmt = (n: number) => n.toLocaleString("en-US");
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
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
