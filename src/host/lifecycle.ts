// The host side of the lifecycle chart: one chart per strategy and extension instance, its planner provided once.
// A run is started per request; the host reads the chart's decision (validated, or a final state), hands the
// validated facts to Pi, and tells the chart when Pi confirms they are stored.
import { createActor, fromPromise, toPromise, waitFor, type Actor, type InspectionEvent, type Observer } from "xstate";
import {
  lifecycleMachine,
  type LifecycleEvent,
  type LifecycleOutput,
  type Outcome,
  type PlanResult,
  type Routes,
  type Trigger,
  type Validate,
} from "../../machines/compaction.machine.ts";
import type { StrategyName } from "../strategies/registry.ts";
import type { LifecycleRequest, PlannedFacts } from "../strategies/contract.ts";
import { getInspector } from "./inspector.ts";
import { forTerminal } from "../log/display.ts";

/** What a strategy plugs into its chart. */
export interface LifecycleEffects {
  plan(request: LifecycleRequest, signal: AbortSignal): Promise<PlanResult>;
  validate?: Validate;
}

/** The chart's decision: facts to hand to Pi, or a final state reached without any. */
export type Decision = { state: "validated"; facts: PlannedFacts } | { state: Exclude<Outcome, "committed">; reason?: string };

type LifecycleActor = Actor<ReturnType<typeof lifecycleMachine>>;

/** One request's actor. */
export class LifecycleRun {
  readonly actor: LifecycleActor;
  readonly output: Promise<LifecycleOutput>;

  constructor(actor: LifecycleActor) {
    this.actor = actor;
    this.output = toPromise(actor);
  }

  send(event: LifecycleEvent): void {
    this.actor.send(event);
  }

  /** Resolves once the chart validated a plan or ended without one. */
  async decided(): Promise<Decision> {
    const snapshot = await waitFor(this.actor, (s) => s.value === "validated" || s.status === "done", { timeout: Number.POSITIVE_INFINITY });
    const { context } = snapshot;
    if (snapshot.value === "validated" && context.plan) return { state: "validated", facts: context.plan };
    const outcome = context.outcome === "nativeFallback" ? "nativeFallback" : "cancelled";
    return { state: outcome, ...(context.reason !== undefined ? { reason: context.reason } : {}) };
  }

  /** Forward an abort of `signal` (Pi's, for the step or the compaction) as `host.aborted`, until the run ends. */
  abortOn(signal: AbortSignal | undefined, reason?: string): void {
    if (!signal) return;
    const onAbort = () => this.send({ type: "host.aborted", ...(reason ? { reason } : {}) });
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    void this.output.finally(() => signal.removeEventListener("abort", onAbort));
  }
}

/** One strategy's chart with its effects provided, for one extension instance. */
export class StrategyLifecycle {
  readonly strategy: StrategyName;
  readonly routes: Routes;
  private readonly machine: ReturnType<typeof lifecycleMachine>;
  private readonly inspect: () => boolean;
  private readonly observer: Observer<InspectionEvent> | undefined;

  /** `inspect` turns the Stately inspector on; `observer` (tests) sees every run as well. */
  constructor(strategy: StrategyName, routes: Routes, effects: LifecycleEffects, inspect: () => boolean, observer?: Observer<InspectionEvent>) {
    this.strategy = strategy;
    this.routes = routes;
    this.inspect = inspect;
    this.observer = observer;
    this.machine = lifecycleMachine(effects.validate ?? (() => undefined)).provide({
      actors: {
        plan: fromPromise<PlanResult, LifecycleRequest>(({ input, signal }) => {
          input.trace.attempted = true;
          return effects.plan(input, signal);
        }),
      },
    });
  }

  /**
   * Start a run for `request`; a refused tool request still claims its step, and a strategy that does not manage the
   * active model (`applies: false`) leaves Pi's compaction to Pi (see the chart).
   */
  async start(trigger: Trigger, request: LifecycleRequest, refused?: string, applies = true): Promise<LifecycleRun> {
    const warn = (message: string) => request.ctx.ui.notify(forTerminal(message), "warning");
    // The chart's context holds the request, and inspectors serialize that context by walking its keys: Pi's live
    // extension context must not be walked (its getters throw outside the TUI, and it reaches the whole session).
    Object.defineProperty(request, "ctx", { value: request.ctx, enumerable: false, writable: false, configurable: true });
    const observers = [this.inspect() ? await getInspector(warn) : undefined, this.observer].filter((o) => o !== undefined);
    const inspect = observers.length > 1 ? { next: (event: InspectionEvent) => observers.forEach((o) => o.next?.(event)) } : observers[0];
    const input = { strategy: this.strategy, trigger, routes: this.routes, request, ...(refused !== undefined ? { refused } : {}), ...(applies ? {} : { applies }) };
    const actor = createActor(this.machine, { input, ...(inspect ? { inspect } : {}) });
    const run = new LifecycleRun(actor);
    actor.start();
    return run;
  }
}
