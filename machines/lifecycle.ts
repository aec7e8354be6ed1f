// The compaction lifecycle's vocabulary: what a request carries, what a strategy plugs into its chart, what the chart
// decides and what a run looks like to the code that starts it. A leaf: it imports Pi's types and the log's entry
// shapes only, never a strategy, the host or the lab, so the chart and the strategy contract can both depend on it.
import type {
  ExtensionContext,
  SessionBeforeCompactEvent,
  SessionBoundaryDraft,
  TurnEndEvent,
} from "@earendil-works/pi-coding-agent";
import type { LedgerCompactionDetails } from "../src/log/entries.ts";

/**
 * What started the request: the model's `context_compact` call (`tool`), a strategy at a step boundary (`turnEnd`),
 * or Pi's compaction (`manual` /compact, `threshold`, `overflow`).
 */
export type Trigger = "tool" | "turnEnd" | "manual" | "threshold" | "overflow";
export type CompactionTrigger = Exclude<Trigger, "tool">;
/** What a strategy does with a trigger: plan it, decline it (Pi keeps going without a compaction), or let Pi compact. */
export type Route = "plan" | "cancel" | "pi";
/** A strategy's route for each trigger it can receive; a tool request always waits for its step's end. */
export type Routes = Readonly<Record<CompactionTrigger, Route>>;

/** The arguments of a `context_compact` call, as the model wrote them. */
export interface FoldCall {
  target: string;
  summary: string;
  backupCheckpoint?: string;
}

/** The Pi moment a lifecycle request comes from. */
export type Moment =
  /** The model called `context_compact`; the fold waits for the end of the step that asked. */
  | { type: "tool"; call: FoldCall; toolCallId: string; requestEntryId: string; requestKey: string }
  /** A step ended: its messages are stored; `entries` are the drafts earlier handlers return for this boundary. */
  | { type: "turn_end"; event: TurnEndEvent; entries: readonly SessionBoundaryDraft[] }
  /** Pi prepared a compaction (manual /compact, threshold or overflow). */
  | { type: "session_before_compact"; event: SessionBeforeCompactEvent };

/**
 * What a strategy's effects receive for one request: the moment, Pi's live extension context it arrived with, and
 * the trace the planner fills. The chart holds only the moment; the context reaches the effects through the run's
 * closure, so the chart's own context stays plain data.
 */
export interface LifecycleRequest {
  moment: Moment;
  ctx: ExtensionContext;
  /** Filled by planners that call a model, for the bounded failure record (never transcript text). */
  trace: PlanTrace;
}

/** What a planning attempt used and how it failed, kept beside the request for the failure record. */
export interface PlanTrace {
  /** The planner's own error (the chart carries only its message). */
  failure?: Error;
  /** `provider/model` asked, and its usage. */
  model?: string;
  usage?: { input: number; output: number };
  /** When planning started, for the failure record's duration (host clock, passed in). */
  startedAt?: number;
}

/** A custom message the strategy stores (a fold summary, a tool-state summary, a digest, a notice). */
export interface MessageFact {
  customType: string;
  content: string;
  display: boolean;
  /** Every fact this package writes is versioned. */
  details: { readonly v: 1 };
}

/** What a compaction planner returns, and the entry a strategy asks Pi to store in answer to `session_before_compact`. */
export interface CompactionPlan {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  estimatedTokensAfter?: number;
  details: LedgerCompactionDetails;
}

/** The facts a validated plan asks Pi to store, and how Pi continues. The host translates them into Pi's answer. */
export interface PlannedFacts {
  /** Drafts appended at this step boundary, after the drafts earlier handlers return. */
  entries?: readonly SessionBoundaryDraft[];
  /** Continue the run after this boundary (a fold replaced history mid-run). */
  continue?: boolean;
  /** Custom messages stored outside a step boundary (a compaction between or inside runs). */
  messages?: readonly MessageFact[];
  /** The compaction entry Pi stores. */
  compaction?: CompactionPlan;
  /** Decline Pi's compaction: the strategy already made room, or there is nothing worth a summary. */
  declineCompaction?: boolean;
  /** A checkpoint name to set on an entry once the facts are stored. */
  label?: { entryId: string; name: string };
}

/** What a planner resolves to. A rejected plan carries a reason instead of throwing. */
export type PlanResult = { ok: true; plan: PlannedFacts } | { ok: false; reason: string };

/** A strategy's check of its own plan, run by the chart before `validated`; a string is the rejection reason. */
export type Validate = (request: LifecycleRequest, plan: PlannedFacts) => string | undefined;

/** What a strategy plugs into its chart: the planner, and its own check of a plan before `validated`. */
export interface LifecycleEffects {
  plan(request: LifecycleRequest, signal: AbortSignal): Promise<PlanResult>;
  validate?: Validate;
}

/** How a request ended: its facts are stored, nothing was written, or Pi's own compaction runs. */
export type Outcome = "committed" | "cancelled" | "nativeFallback";

/** Why a request ended without committing, by kind. */
export type Failure =
  /** The route table (or a strategy that does not manage the active model) sent the trigger elsewhere unplanned. */
  | "routed"
  /** The model's request was refused when made, or voided by a second request of the same step. */
  | "refused"
  /** The step, the run or the session ended, or an abort arrived, before the facts were planned or stored. */
  | "interrupted"
  /** The planner found nothing it could write, and said why. */
  | "rejected"
  /** The strategy's validator (or the window bound) refused the plan. */
  | "invalid"
  /** The planner threw. */
  | "error"
  /** Pi did not store the validated facts. */
  | "notStored";

/** What every final state of the chart declares: the host reads nothing else. */
export interface LifecycleOutput {
  outcome: Outcome;
  /** The validated facts (a committed request, or one Pi then failed to store). */
  plan?: PlannedFacts;
  /** Why the request did not commit; shown to the model or the user. */
  reason?: string;
  /** Planning started: only then is a fallback to Pi a failed attempt rather than a route. */
  attempted: boolean;
  /** The kind of ending, when it did not commit. */
  failure?: Failure;
}

export type LifecycleEvent =
  | { type: "host.turnEnded"; aborted: boolean; sameStep: boolean }
  | { type: "tool.compactRequested" }
  | { type: "host.aborted"; reason?: string }
  | { type: "host.runEnded" }
  | { type: "host.sessionReplaced" }
  /** Pi stored the validated fact: it is on the branch (seen by the next sync, or `session_compact`). */
  | { type: "pi.appended" }
  /** Pi did not store it (`session_compact_failed`, or the run settled without the fact on the branch). */
  | { type: "pi.notAppended"; reason: string };

/** The chart's decision on one run: validated facts to hand to Pi, or a final state reached without any. */
export type Decision =
  | { state: "validated"; facts: PlannedFacts }
  | ({ state: Exclude<Outcome, "committed"> } & Pick<LifecycleOutput, "reason" | "attempted" | "failure">);

/** How a run starts, besides its trigger and request. */
export interface RunOptions {
  /** Pi's abort signal for the step or the compaction: its abort reaches the chart as `host.aborted`. */
  signal?: AbortSignal;
  /** The reason the abort reports. */
  abortReason?: string;
  /** Why a tool request was refused when made (the model already heard it). It still claims its step. */
  refused?: string;
  /** False when the strategy does not manage the active model: Pi compacts. */
  applies?: boolean;
}

/** One request's run through the strategy's chart. */
export interface ChartRun {
  /** Tell the chart about a host or Pi event (delivered in order, once the run's actor is started). */
  send(event: LifecycleEvent): void;
  /**
   * Resolves once the chart validated a plan or ended without one. Validated facts are already awaited in the
   * session: the chart commits when Pi stores them, and cancels when Pi says it will not.
   */
  readonly decision: Promise<Decision>;
  /** The chart's final output. */
  readonly output: Promise<LifecycleOutput>;
}

/** The strategy's chart, its effects provided once per extension instance. */
export interface StrategyChart {
  /** Start a run: route, plan, validate, hand the facts over, and commit once Pi stores them. */
  run(trigger: Trigger, request: LifecycleRequest, options?: RunOptions): ChartRun;
}
