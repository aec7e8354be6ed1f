// The compaction lifecycle, one actor per request: a fold the model asked for, a boundary fact a strategy writes at
// turn_end, or a compaction Pi prepared. The chart decides every route from its typed input: which trigger, and the
// strategy's route table for it. One definition serves every strategy: its effects (planner and validator) are
// provided per run with `.provide({ actors: { plan: planningStep(effects) } })`, and every final state declares the
// run's output, which is all the host reads.
import { assign, type DoneActorEvent, emit, fromPromise, setup } from "xstate";
import type {
  Failure,
  LifecycleEvent,
  LifecycleOutput,
  Moment,
  Outcome,
  PlanResult,
  PlannedFacts,
  Route,
  Routes,
  Trigger,
} from "./lifecycle.ts";

export type {
  CompactionTrigger,
  Failure,
  LifecycleEvent,
  LifecycleOutput,
  Outcome,
  PlanResult,
  Route,
  Routes,
  Trigger,
  Validate,
} from "./lifecycle.ts";

export interface LifecycleInput {
  /** The strategy whose chart this is, by registry name (shown by the inspector). */
  strategy: string;
  trigger: Trigger;
  routes: Routes;
  /** The Pi moment the request comes from; the planning step gets it as input. */
  moment: Moment;
  /** Why a tool request was refused when made (the model already heard it). It still claims its step. */
  refused?: string;
  /** False when the strategy does not manage the active model (preserve's model allowlist): Pi compacts. */
  applies?: boolean;
}

/** Plain data only (no live Pi objects), so inspectors and snapshots serialize it as it is. */
export interface LifecycleContext extends LifecycleInput {
  plan?: PlannedFacts;
  /** Why the request did not commit; shown to the model or the user. */
  reason?: string;
  /** The kind of ending, once it is known. */
  failure?: Failure;
  /** Set when a second request arrived in the same step: every request of the step is void. */
  invalidated: boolean;
  /** Set on entering `planning`. */
  attempted: boolean;
}

/** The planning step's result: the planner's, once the strategy's validator has judged it. */
export type Verdict = { ok: true; plan: PlannedFacts } | { ok: false; reason: string; by: "planner" | "validator" };

/** A run's effects as the chart calls them: the moment comes from the chart, anything live from their closure. */
export interface ChartEffects {
  plan(moment: Moment, signal: AbortSignal): Promise<PlanResult>;
  validate?(moment: Moment, plan: PlannedFacts): string | undefined;
}

/**
 * The chart's planning step for `effects`: the planner's result is judged by the validator inside the step, once, so
 * the transitions out of `planning` read a verdict instead of judging the plan in a guard and again in an action.
 */
export function planningStep(effects: ChartEffects) {
  return fromPromise<Verdict, Moment>(async ({ input, signal }) => {
    const result = await effects.plan(input, signal);
    if (!result.ok) return { ok: false, reason: result.reason, by: "planner" };
    const problem = effects.validate?.(input, result.plan);
    return problem === undefined ? result : { ok: false, reason: problem, by: "validator" };
  });
}

/** The output every final state declares, from the context the transition into it recorded. */
function finalOutput(outcome: Outcome) {
  return ({ context }: { context: LifecycleContext }): LifecycleOutput => ({
    outcome,
    ...(context.plan !== undefined ? { plan: context.plan } : {}),
    ...(context.reason !== undefined ? { reason: context.reason } : {}),
    attempted: context.attempted,
    ...(outcome !== "committed" && context.failure !== undefined ? { failure: context.failure } : {}),
  });
}

/** The verdict a planning step's done event carries, as the params of the transitions out of `planning`. */
function judged({ event }: { event: DoneActorEvent<Verdict> }): { verdict: Verdict } {
  return { verdict: event.output };
}

/** The chart as the docs and the inspector guide show it. Its default planning step plans nothing. */
export const compactionMachine = setup({
  types: {
    context: {} as LifecycleContext,
    events: {} as LifecycleEvent,
    input: {} as LifecycleInput,
    output: {} as LifecycleOutput,
    emitted: {} as { type: "validated"; plan: PlannedFacts },
  },
  actors: {
    // Safe default: no planning step provided means nothing to apply.
    plan: planningStep({ plan: async () => ({ ok: false, reason: "no planner configured" }) }),
  },
  guards: {
    isToolRequest: ({ context }) => context.trigger === "tool",
    routedTo: ({ context }, params: { route: Route }) =>
      context.trigger !== "tool" && context.routes[context.trigger] === params.route,
    isRefused: ({ context }) => context.refused !== undefined,
    isInapplicable: ({ context }) => context.applies === false && context.trigger !== "tool",
    isInvalidated: ({ context }) => context.invalidated,
    isStepIntact: ({ event }) => event.type === "host.turnEnded" && !event.aborted && event.sameStep,
    isAccepted: (_, params: { verdict: Verdict }) => params.verdict.ok,
    // A request made during a run writes nothing when it fails; Pi's own compaction only replaces Pi's request.
    isInRun: ({ context }) => context.trigger === "tool" || context.trigger === "turnEnd",
  },
  actions: {
    invalidate: assign({ invalidated: true }),
    attempt: assign({ attempted: true }),
    recordEnding: assign((_, params: { reason: string; failure: Failure }) => params),
    recordVerdict: assign((_, params: { verdict: Verdict }) => {
      const { verdict } = params;
      if (verdict.ok) return { plan: verdict.plan };
      return { reason: verdict.reason, failure: verdict.by === "planner" ? "rejected" : "invalid" } as const;
    }),
    announce: emit(({ context }) => ({ type: "validated" as const, plan: context.plan ?? {} })),
  },
}).createMachine({
  id: "compaction",
  context: ({ input }) => ({ ...input, invalidated: false, attempted: false }),
  initial: "requested",
  // The machine's output is the output its final state declared.
  output: ({ event }) => event.output as LifecycleOutput,
  states: {
    requested: {
      description:
        "A request arrived. The trigger and the strategy's route table decide: a tool request waits for the end of its step; a strategy that does not manage the active model, a route to Pi's own compaction or a declined trigger ends here; anything else is planned now.",
      always: [
        { guard: "isToolRequest", target: "pendingAtTurnEnd" },
        {
          guard: "isInapplicable",
          target: "nativeFallback",
          actions: {
            type: "recordEnding",
            params: { reason: "the strategy does not manage the active model", failure: "routed" },
          },
        },
        {
          guard: { type: "routedTo", params: { route: "pi" } },
          target: "nativeFallback",
          actions: {
            type: "recordEnding",
            params: { reason: "the strategy leaves this trigger to Pi", failure: "routed" },
          },
        },
        {
          guard: { type: "routedTo", params: { route: "cancel" } },
          target: "cancelled",
          actions: {
            type: "recordEnding",
            params: { reason: "the strategy manages the window at step boundaries", failure: "routed" },
          },
        },
        { target: "planning" },
      ],
    },
    pendingAtTurnEnd: {
      description:
        "The model asked for a fold from a tool call. Sibling calls of the same step may still run; nothing changes until turn_end, when every result of the step is stored.",
      on: {
        "tool.compactRequested": { actions: "invalidate" },
        "host.turnEnded": [
          {
            guard: "isInvalidated",
            target: "cancelled",
            actions: {
              type: "recordEnding",
              params: { reason: "more than one context_compact call in the same step", failure: "refused" },
            },
          },
          {
            guard: "isRefused",
            target: "cancelled",
            actions: {
              type: "recordEnding",
              params: ({ context }) => ({ reason: context.refused ?? "refused", failure: "refused" }),
            },
          },
          { guard: "isStepIntact", target: "planning" },
          {
            target: "cancelled",
            actions: {
              type: "recordEnding",
              params: { reason: "the step was interrupted or ended elsewhere", failure: "interrupted" },
            },
          },
        ],
        "host.aborted": {
          target: "cancelled",
          actions: { type: "recordEnding", params: { reason: "the step was aborted", failure: "interrupted" } },
        },
        "host.runEnded": {
          target: "cancelled",
          actions: {
            type: "recordEnding",
            params: { reason: "the request never reached the end of its step", failure: "interrupted" },
          },
        },
        "host.sessionReplaced": {
          target: "cancelled",
          actions: { type: "recordEnding", params: { reason: "the session was replaced", failure: "interrupted" } },
        },
      },
    },
    planning: {
      entry: "attempt",
      description:
        "The strategy plans from the ledger (a fold's range and summary, a deterministic checkpoint, ranked deletions, a tool-state summary). The strategy's validator judges the plan before anything is written.",
      invoke: {
        src: "plan",
        input: ({ context }) => context.moment,
        onDone: [
          {
            guard: { type: "isAccepted", params: judged },
            target: "validated",
            actions: { type: "recordVerdict", params: judged },
          },
          { guard: "isInRun", target: "cancelled", actions: { type: "recordVerdict", params: judged } },
          { target: "nativeFallback", actions: { type: "recordVerdict", params: judged } },
        ],
        onError: [
          {
            guard: "isInRun",
            target: "cancelled",
            actions: {
              type: "recordEnding",
              params: ({ event }) => ({ reason: errorText(event.error), failure: "error" }),
            },
          },
          {
            target: "nativeFallback",
            actions: {
              type: "recordEnding",
              params: ({ event }) => ({ reason: errorText(event.error), failure: "error" }),
            },
          },
        ],
      },
      on: {
        "host.aborted": {
          target: "cancelled",
          actions: {
            type: "recordEnding",
            params: ({ event }) => ({ reason: event.reason ?? "aborted while planning", failure: "interrupted" }),
          },
        },
        "host.sessionReplaced": {
          target: "cancelled",
          actions: { type: "recordEnding", params: { reason: "the session was replaced", failure: "interrupted" } },
        },
      },
    },
    validated: {
      description:
        "The plan passed the strategy's validator and was handed to Pi to store. It commits once Pi confirms the fact is on the branch.",
      entry: "announce",
      on: {
        "pi.appended": { target: "committed" },
        "pi.notAppended": {
          target: "cancelled",
          actions: { type: "recordEnding", params: ({ event }) => ({ reason: event.reason, failure: "notStored" }) },
        },
        "host.sessionReplaced": {
          target: "cancelled",
          actions: {
            type: "recordEnding",
            params: { reason: "the session was replaced before Pi stored the fact", failure: "interrupted" },
          },
        },
      },
    },
    committed: {
      description:
        "The fact is in the ledger (fold summary, boundary fact or compaction entry); the model view is recomputed from it.",
      type: "final",
      output: finalOutput("committed"),
    },
    cancelled: {
      description: "Nothing was written to the ledger except, for folds, a short notice telling the model why.",
      type: "final",
      output: finalOutput("cancelled"),
    },
    nativeFallback: {
      description:
        "The strategy left this compaction to Pi, or could not plan it: Pi's own compaction runs unchanged, so the user is never left without one.",
      type: "final",
      output: finalOutput("nativeFallback"),
    },
  },
});

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
