// What every compaction strategy shares when its attempt ends in Pi's native compaction: the planning error with its
// category and counts, the bounded failure record and the cards of both. The host reaches them here, so it names no
// strategy. Pure: every record holds categories and numbers only, never transcript or planner text.

/** Counts that describe a planning attempt. Numbers only: never transcript or planner text. */
export interface PlanDiagnostics {
  /** How the planner answered: the `submit_deletion_plan` tool, or the text form. */
  form?: "tool" | "text";
  /** Records the planner sent, accepted, and discarded (tool form only discards individually). */
  records?: number;
  accepted?: number;
  discarded?: number;
  /** Discarded records by category (`shape`, `reversed`, `bounds`). */
  discardedBy?: Record<string, number>;
  /** 1-based index of the first discarded record. */
  firstDiscarded?: number;
  /** Why the planner's reply ended (`stop`, `length`, `toolUse`, `error`, `aborted`), when the provider said. */
  stopReason?: string;
  /** The reply stopped at the output limit and its cut last record was dropped (text form): a recovered plan. */
  truncated?: boolean;
  regionLines?: number;
  regionTokens?: number;
  targetTokens?: number;
}

/** A plan the host must not apply. The message carries numbers and categories only, never transcript text. */
export class PlanError extends Error {
  readonly category: string;
  diagnostics: PlanDiagnostics;
  constructor(category: string, message: string, diagnostics: PlanDiagnostics = {}) {
    super(message);
    this.name = "PlanError";
    this.category = category;
    this.diagnostics = diagnostics;
  }
}

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
export function boundedCounts(diagnostics: PlanDiagnostics): PlanDiagnostics {
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
