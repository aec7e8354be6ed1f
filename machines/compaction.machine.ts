// The compaction lifecycle, one actor per request: a fold the model asked for, a boundary fact a strategy writes at
// turn_end, or a compaction Pi prepared. The chart decides every route from its typed input: which trigger, and the
// strategy's route table for it. Effects are injected: the planner with `.provide()`, the validator at construction.
import { assign, fromPromise, setup, type DoneActorEvent } from "xstate";
import type { StrategyName } from "../src/strategies/registry.ts";
import type { LifecycleRequest, PlannedFacts } from "../src/strategies/contract.ts";

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

export interface LifecycleInput {
  strategy: StrategyName;
  trigger: Trigger;
  routes: Routes;
  request: LifecycleRequest;
  /** Why a tool request was refused when made (the model already heard it). It still claims its step. */
  refused?: string;
  /** False when the strategy does not manage the active model (preserve's model allowlist): Pi compacts. */
  applies?: boolean;
}

/** What a planner resolves to. A rejected plan carries a reason instead of throwing. */
export type PlanResult = { ok: true; plan: PlannedFacts } | { ok: false; reason: string };

export type Outcome = "committed" | "cancelled" | "nativeFallback";

export interface LifecycleContext extends LifecycleInput {
  plan?: PlannedFacts;
  /** Why the request did not commit; shown to the model or the user. */
  reason?: string;
  /** Set when a second request arrived in the same step: every request of the step is void. */
  invalidated: boolean;
  /** Set on entering a final state; read by the output. */
  outcome?: Outcome;
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

/** Final result the host reads from the actor's output. */
export interface LifecycleOutput {
  outcome: Outcome;
  plan?: PlannedFacts;
  reason?: string;
}

/** A strategy's check of its own plan, run by the chart before `validated`; a string is the rejection reason. */
export type Validate = (request: LifecycleRequest, plan: PlannedFacts) => string | undefined;

/** The planner's result after validation. */
type Verdict = PlanResult;

/** Build the lifecycle chart of one strategy, whose plans `validate` judges. The planner is provided once, by the host. */
export function lifecycleMachine(validate: Validate) {
  /**
   * The planner's result once the validator has judged it (params of the `planning` exits). The guard and the action
   * of one exit both read it, so each done event is judged once and remembered by that event.
   */
  const verdicts = new WeakMap<DoneActorEvent<PlanResult>, Verdict>();
  const judged = ({ context, event }: { context: LifecycleContext; event: DoneActorEvent<PlanResult> }) => {
    let found = verdicts.get(event);
    if (!found) verdicts.set(event, (found = verdict(context.request, event.output)));
    return { verdict: found };
  };
  const verdict = (request: LifecycleRequest, result: PlanResult): Verdict => {
    if (!result.ok) return result;
    const problem = validate(request, result.plan);
    return problem === undefined ? result : { ok: false, reason: problem };
  };
  return setup({
    types: {
      context: {} as LifecycleContext,
      events: {} as LifecycleEvent,
      input: {} as LifecycleInput,
      output: {} as LifecycleOutput,
    },
    actors: {
      // Safe default: no planner provided means nothing to apply.
      plan: fromPromise<PlanResult, LifecycleRequest>(async () => ({ ok: false, reason: "no planner configured" })),
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
      recordReason: assign({ reason: (_, params: { reason: string }) => params.reason }),
      recordVerdict: assign((_, params: { verdict: Verdict }) =>
        params.verdict.ok ? { plan: params.verdict.plan } : { reason: params.verdict.reason },
      ),
      settle: assign({ outcome: (_, outcome: Outcome) => outcome }),
    },
  }).createMachine({
    id: "compaction",
    context: ({ input }) => ({ ...input, invalidated: false }),
    initial: "requested",
    output: ({ context }) => ({ outcome: context.outcome ?? "cancelled", plan: context.plan, reason: context.reason }),
    states: {
      requested: {
        description:
          "A request arrived. The trigger and the strategy's route table decide: a tool request waits for the end of its step; a strategy that does not manage the active model, a route to Pi's own compaction or a declined trigger ends here; anything else is planned now.",
        always: [
          { guard: "isToolRequest", target: "pendingAtTurnEnd" },
          {
            guard: "isInapplicable",
            target: "nativeFallback",
            actions: { type: "recordReason", params: { reason: "the strategy does not manage the active model" } },
          },
          {
            guard: { type: "routedTo", params: { route: "pi" } },
            target: "nativeFallback",
            actions: { type: "recordReason", params: { reason: "the strategy leaves this trigger to Pi" } },
          },
          {
            guard: { type: "routedTo", params: { route: "cancel" } },
            target: "cancelled",
            actions: { type: "recordReason", params: { reason: "the strategy manages the window at step boundaries" } },
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
                type: "recordReason",
                params: { reason: "more than one context_compact call in the same step" },
              },
            },
            {
              guard: "isRefused",
              target: "cancelled",
              actions: { type: "recordReason", params: ({ context }) => ({ reason: context.refused ?? "refused" }) },
            },
            { guard: "isStepIntact", target: "planning" },
            {
              target: "cancelled",
              actions: { type: "recordReason", params: { reason: "the step was interrupted or ended elsewhere" } },
            },
          ],
          "host.aborted": {
            target: "cancelled",
            actions: { type: "recordReason", params: { reason: "the step was aborted" } },
          },
          "host.runEnded": {
            target: "cancelled",
            actions: { type: "recordReason", params: { reason: "the request never reached the end of its step" } },
          },
          "host.sessionReplaced": {
            target: "cancelled",
            actions: { type: "recordReason", params: { reason: "the session was replaced" } },
          },
        },
      },
      planning: {
        description:
          "The strategy plans from the ledger (a fold's range and summary, a deterministic checkpoint, ranked deletions, a tool-state summary). The strategy's validator judges the plan before anything is written.",
        invoke: {
          src: "plan",
          input: ({ context }) => context.request,
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
              actions: { type: "recordReason", params: ({ event }) => ({ reason: errorText(event.error) }) },
            },
            {
              target: "nativeFallback",
              actions: { type: "recordReason", params: ({ event }) => ({ reason: errorText(event.error) }) },
            },
          ],
        },
        on: {
          "host.aborted": {
            target: "cancelled",
            actions: {
              type: "recordReason",
              params: ({ event }) => ({ reason: event.reason ?? "aborted while planning" }),
            },
          },
          "host.sessionReplaced": {
            target: "cancelled",
            actions: { type: "recordReason", params: { reason: "the session was replaced" } },
          },
        },
      },
      validated: {
        description:
          "The plan passed the strategy's validator and was handed to Pi to store. It commits once Pi confirms the fact is on the branch.",
        on: {
          "pi.appended": { target: "committed" },
          "pi.notAppended": {
            target: "cancelled",
            actions: { type: "recordReason", params: ({ event }) => ({ reason: event.reason }) },
          },
          "host.sessionReplaced": {
            target: "cancelled",
            actions: { type: "recordReason", params: { reason: "the session was replaced before Pi stored the fact" } },
          },
        },
      },
      committed: {
        entry: { type: "settle", params: "committed" },
        description:
          "The fact is in the ledger (fold summary, boundary fact or compaction entry); the model view is recomputed from it.",
        type: "final",
      },
      cancelled: {
        entry: { type: "settle", params: "cancelled" },
        description: "Nothing was written to the ledger except, for folds, a short notice telling the model why.",
        type: "final",
      },
      nativeFallback: {
        entry: { type: "settle", params: "nativeFallback" },
        description:
          "The strategy left this compaction to Pi, or could not plan it: Pi's own compaction runs unchanged, so the user is never left without one.",
        type: "final",
      },
    },
  });
}

/** The chart as the docs and the inspector guide show it: the validator accepts every plan. */
export const compactionMachine = lifecycleMachine(() => undefined);

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
