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
import { textOf } from "../log/entries.ts";
import { estimateTextTokens } from "../projection/tokens.ts";

/** Pi's default reserve, for requests that carry no compaction settings (a step boundary). */
const DEFAULT_RESERVE_TOKENS = 16_384;

/**
 * Why a plan's texts cannot fit the model's window, or undefined. The summary and messages a plan stores lead every
 * later request: past the window minus Pi's reserve (where Pi compacts again) they make every request overflow, so
 * the plan is refused and Pi compacts natively. Whole texts are counted in one pass, so a 10 MB summary costs one
 * estimate. (A fold's summary has its own, tighter bound at the tool.)
 */
export function oversizedFacts(
  request: Pick<LifecycleRequest, "moment" | "ctx">,
  plan: PlannedFacts,
): string | undefined {
  const window = request.ctx.model?.contextWindow ?? 128_000;
  const reserve =
    request.moment.type === "session_before_compact"
      ? request.moment.event.preparation.settings.reserveTokens
      : DEFAULT_RESERVE_TOKENS;
  const limit = Math.max(Math.floor(window / 2), window - reserve);
  const texts: unknown[] = [plan.compaction?.summary];
  for (const message of plan.messages ?? []) texts.push(textOf(message.content));
  for (const draft of plan.entries ?? []) if (draft.type === "custom_message") texts.push(textOf(draft.content));
  let chars = 0;
  let tokens = 0;
  for (const text of texts) {
    if (typeof text !== "string") continue;
    chars += text.length;
    tokens += estimateTextTokens(text);
  }
  if (tokens <= limit) return undefined;
  return `the summary is about ${tokens} tokens (${chars} characters), more than the ${window}-token window holds before Pi compacts again (${limit} tokens)`;
}

/** What a strategy plugs into its chart. */
export interface LifecycleEffects {
  plan(request: LifecycleRequest, signal: AbortSignal): Promise<PlanResult>;
  validate?: Validate;
}

/** The chart's decision: facts to hand to Pi, or a final state reached without any. */
export type Decision =
  | { state: "validated"; facts: PlannedFacts }
  | { state: Exclude<Outcome, "committed">; reason?: string };

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
    const snapshot = await waitFor(this.actor, (s) => s.value === "validated" || s.status === "done", {
      timeout: Number.POSITIVE_INFINITY,
    });
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
  constructor(
    strategy: StrategyName,
    routes: Routes,
    effects: LifecycleEffects,
    inspect: () => boolean,
    observer?: Observer<InspectionEvent>,
  ) {
    this.strategy = strategy;
    this.routes = routes;
    this.inspect = inspect;
    this.observer = observer;
    const own = effects.validate;
    // Every strategy's facts are bounded against the window before the strategy's own check.
    this.machine = lifecycleMachine((request, plan) => oversizedFacts(request, plan) ?? own?.(request, plan)).provide({
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
    Object.defineProperty(request, "ctx", {
      value: request.ctx,
      enumerable: false,
      writable: false,
      configurable: true,
    });
    const observers = [this.inspect() ? await getInspector(warn) : undefined, this.observer].filter(
      (o) => o !== undefined,
    );
    const inspect =
      observers.length > 1
        ? { next: (event: InspectionEvent) => observers.forEach((o) => o.next?.(event)) }
        : observers[0];
    const input = {
      strategy: this.strategy,
      trigger,
      routes: this.routes,
      request,
      ...(refused !== undefined ? { refused } : {}),
      ...(applies ? {} : { applies }),
    };
    const actor = createActor(this.machine, { input, ...(inspect ? { inspect } : {}) });
    const run = new LifecycleRun(actor);
    actor.start();
    return run;
  }
}
