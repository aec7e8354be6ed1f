// The compaction lifecycle, one actor per request: a fold asked for by the model, or a compaction Pi prepared.
// Effects (planning) are injected with `.provide()`; the defaults are safe and never call a model.
import { assign, fromPromise, setup } from "xstate";

/** Who asked: the model through `context_compact` (fold), or Pi through `session_before_compact`. */
export type CompactionKind = "fold" | "compaction";

export interface CompactionInput {
  kind: CompactionKind;
  /** Strategy that plans it: `fold`, a compaction strategy, or `native` (Pi compacts itself). */
  strategy: string;
  /** The request as the host captured it; opaque to the machine. */
  request: unknown;
}

/** What a planner actor resolves to. A rejected plan carries a reason instead of throwing. */
export type PlanResult = { ok: true; plan: unknown } | { ok: false; reason: string };

export interface CompactionContext extends CompactionInput {
  plan?: unknown;
  /** Why the request did not commit; shown to the model or the user. */
  reason?: string;
  /** Set when a second request arrived in the same step: both are void. */
  invalidated: boolean;
  /** Set on entering a final state; read by the output. */
  outcome?: CompactionOutcome["outcome"];
}

export type CompactionEvent =
  | { type: "host.turnEnded"; aborted: boolean; sameStep: boolean }
  | { type: "tool.compactRequested" }
  | { type: "host.aborted"; reason?: string }
  | { type: "host.runEnded" }
  | { type: "host.sessionReplaced" };

/** Final result the host reads from the actor's output. */
export interface CompactionOutcome {
  outcome: "committed" | "cancelled" | "nativeFallback";
  plan?: unknown;
  reason?: string;
}

export const compactionMachine = setup({
  types: {
    context: {} as CompactionContext,
    events: {} as CompactionEvent,
    input: {} as CompactionInput,
    output: {} as CompactionOutcome,
  },
  actors: {
    // Safe default: no planner configured means nothing to apply.
    planCompaction: fromPromise<PlanResult, CompactionContext>(async () => ({ ok: false, reason: "no planner configured" })),
  },
  guards: {
    isFold: ({ context }) => context.kind === "fold",
    isNative: ({ context }) => context.strategy === "native",
    isInvalidated: ({ context }) => context.invalidated,
    isStepIntact: ({ event }) => event.type === "host.turnEnded" && !event.aborted && event.sameStep,
    isPlanAccepted: ({ event }) => planOf(event)?.ok === true,
  },
  actions: {
    invalidate: assign({ invalidated: true }),
    recordCancelReason: assign({ reason: (_, reason: string) => reason }),
    recordPlan: assign({ plan: ({ event }) => (planOf(event) as { plan?: unknown } | undefined)?.plan }),
    recordRejection: assign({ reason: ({ event }) => (planOf(event) as { reason?: string } | undefined)?.reason ?? "plan rejected" }),
    settle: assign({ outcome: (_, outcome: CompactionOutcome["outcome"]) => outcome }),
    recordError: assign({ reason: ({ event }) => errorText((event as { error?: unknown }).error) }),
  },
}).createMachine({
  id: "compaction",
  context: ({ input }) => ({ ...input, invalidated: false }),
  initial: "requested",
  output: ({ context }) => ({ outcome: context.outcome ?? "cancelled", plan: context.plan, reason: context.reason }),
  states: {
    requested: {
      description: "A request arrived and is routed by its kind: folds wait for the end of their step, compactions plan now, and the native strategy hands back to Pi.",
      always: [
        { guard: "isFold", target: "pendingAtTurnEnd" },
        { guard: "isNative", target: "nativeFallback" },
        { target: "planning" },
      ],
    },
    pendingAtTurnEnd: {
      description: "A fold was requested by a tool call; sibling tool calls of the same step may still run. Nothing changes until turn_end, when every result of the step is persisted.",
      on: {
        "tool.compactRequested": { actions: "invalidate" },
        "host.turnEnded": [
          {
            guard: "isInvalidated",
            target: "cancelled",
            actions: { type: "recordCancelReason", params: "more than one context_compact call in the same step" },
          },
          { guard: "isStepIntact", target: "planning" },
          {
            target: "cancelled",
            actions: { type: "recordCancelReason", params: "the step was interrupted or ended elsewhere" },
          },
        ],
        "host.aborted": { target: "cancelled", actions: { type: "recordCancelReason", params: "the step was aborted" } },
        "host.runEnded": { target: "cancelled", actions: { type: "recordCancelReason", params: "the request never reached the end of its step" } },
        "host.sessionReplaced": { target: "cancelled", actions: { type: "recordCancelReason", params: "the session was replaced" } },
      },
    },
    planning: {
      description: "The strategy's planner builds the plan from the ledger (fold: range rule and summary; checkpoint: deterministic render; planned: ranked deletions). Host code validates it before anything is written.",
      invoke: {
        src: "planCompaction",
        input: ({ context }) => context,
        onDone: [
          { guard: "isPlanAccepted", target: "validated", actions: "recordPlan" },
          { guard: "isFold", target: "cancelled", actions: "recordRejection" },
          { target: "nativeFallback", actions: "recordRejection" },
        ],
        onError: [
          { guard: "isFold", target: "cancelled", actions: "recordError" },
          { target: "nativeFallback", actions: "recordError" },
        ],
      },
      on: {
        "host.aborted": { target: "cancelled", actions: { type: "recordCancelReason", params: "aborted while planning" } },
        "host.sessionReplaced": { target: "cancelled", actions: { type: "recordCancelReason", params: "the session was replaced" } },
      },
    },
    validated: {
      description: "The plan passed host validation and is ready to be appended to the ledger as one constant-size fact.",
      always: { target: "committed" },
    },
    committed: {
      entry: { type: "settle", params: "committed" },
      description: "The host appended the fact (fold summary or compaction entry). The model view is recomputed from the ledger.",
      type: "final",
    },
    cancelled: {
      entry: { type: "settle", params: "cancelled" },
      description: "Nothing was written to the ledger except, for folds, a short notice telling the model why.",
      type: "final",
    },
    nativeFallback: {
      entry: { type: "settle", params: "nativeFallback" },
      description: "Our strategy declined or failed; Pi's own compaction runs unchanged, so the user is never left without one.",
      type: "final",
    },
  },
});

/** The planner's result carried by a done event (the machine's event union does not list actor events). */
function planOf(event: unknown): PlanResult | undefined {
  return (event as { output?: PlanResult }).output;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
