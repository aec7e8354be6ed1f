// The host side of the lifecycle chart: one chart per strategy and extension instance, its effects given once.
// A run is started per request with the run's effects provided to the one chart definition: Pi's live extension
// context stays in their closure, never in the chart's context. The host reads the chart's announcement of validated
// facts and its final output, awaits the facts in the session, and the chart commits when Pi confirms they are stored.
import { createActor, toPromise, type Actor, type InspectionEvent, type Observer } from "xstate";
import { compactionMachine, planningStep, type LifecycleInput } from "../../machines/compaction.machine.ts";
import type {
  ChartRun,
  Decision,
  LifecycleEffects,
  LifecycleEvent,
  LifecycleOutput,
  LifecycleRequest,
  PlannedFacts,
  Routes,
  RunOptions,
  StrategyChart,
  Trigger,
} from "../../machines/lifecycle.ts";
import type { StrategyName } from "../strategies/registry.ts";
import { getInspector } from "./inspector.ts";
import { forTerminal } from "../log/display.ts";
import { textOf } from "../log/entries.ts";
import { estimateTextTokens } from "../projection/tokens.ts";

/** Pi's default reserve, for requests that carry no compaction settings (a step boundary). */
const DEFAULT_RESERVE_TOKENS = 16_384;
/** Pi's default recent tail kept by a compaction, for the same requests. */
const DEFAULT_KEEP_RECENT_TOKENS = 20_000;

/**
 * Why a plan's texts cannot fit the model's window, or undefined. The summary and messages a plan stores lead every
 * later request: past the window minus Pi's reserve (where Pi compacts again) they make every request overflow, so
 * the plan is refused and Pi compacts natively; so is a compaction that leaves the context within a tenth of the window
 * of that line. Whole texts are counted in one pass, so a 10 MB summary costs one estimate. (A fold's summary has its
 * own, tighter bound at the tool.)
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
  if (tokens > limit)
    return `the summary is about ${tokens} tokens (${chars} characters), more than the ${window}-token window holds before Pi compacts again (${limit} tokens)`;
  // A compaction that ends just under Pi's threshold is redone within a step or two, each time planning again over
  // the whole kept tail (and, for a model planner, paying a call): on one long task, at nearly every request. It must
  // leave a tenth of the window of room, or, in a window where Pi's own kept tail leaves less, half of what that tail
  // leaves; otherwise Pi's native compaction runs. Not when the kept tail alone already fills that room: the tail is
  // Pi's own cut (a message larger than the window, say), which Pi's summary would keep as well.
  const after = plan.compaction?.estimatedTokensAfter;
  const threshold = window - reserve;
  const keepRecent =
    request.moment.type === "session_before_compact"
      ? request.moment.event.preparation.settings.keepRecentTokens
      : DEFAULT_KEEP_RECENT_TOKENS;
  const room = Math.min(Math.floor(window / 10), Math.floor((threshold - keepRecent) / 2));
  if (typeof after === "number" && room > 0 && after > threshold - room && after - tokens <= threshold - room)
    return `the context would be about ${after} tokens right after the compaction, within ${room} of the ${threshold} at which Pi compacts again`;
  return undefined;
}

/** Where a run's validated facts are awaited until Pi stores them (the session). */
export interface FactStore {
  expectStored(run: Pick<ChartRun, "send">, facts: PlannedFacts): void;
}

type LifecycleActor = Actor<typeof compactionMachine>;

/** One request's actor, started once the inspector (when on) is ready; events sent before then wait, in order. */
export class LifecycleRun implements ChartRun {
  readonly decision: Promise<Decision>;
  readonly output: Promise<LifecycleOutput>;
  private readonly actor: Promise<LifecycleActor>;

  constructor(actor: Promise<LifecycleActor>, store: FactStore | undefined) {
    // Everything is subscribed before the actor starts: a route to a final state ends within `start()`.
    const started = actor.then((a) => {
      const output = toPromise(a);
      const decided = new Promise<Decision>((resolve, reject) => {
        a.on("validated", ({ plan }) => resolve({ state: "validated", facts: plan }));
        output.then((out) => {
          // `committed` is only reached from `validated`, whose announcement already decided.
          if (out.outcome === "committed") return;
          resolve({
            state: out.outcome,
            attempted: out.attempted,
            ...(out.reason !== undefined ? { reason: out.reason } : {}),
            ...(out.failure !== undefined ? { failure: out.failure } : {}),
          });
        }, reject);
      });
      a.start();
      return { a, output, decided };
    });
    this.actor = started.then((s) => s.a);
    this.output = started.then((s) => s.output);
    this.decision = started
      .then((s) => s.decided)
      .then((decision) => {
        if (decision.state === "validated") store?.expectStored(this, decision.facts);
        return decision;
      });
  }

  send(event: LifecycleEvent): void {
    void this.actor.then((a) => a.send(event));
  }

  /** Forward an abort of `signal` (Pi's, for the step or the compaction) as `host.aborted`, until the run ends. */
  abortOn(signal: AbortSignal | undefined, reason?: string): void {
    if (!signal) return;
    const onAbort = () => this.send({ type: "host.aborted", ...(reason ? { reason } : {}) });
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    const detach = () => signal.removeEventListener("abort", onAbort);
    void this.output.then(detach, detach);
  }
}

/** One strategy's chart with its effects provided, for one extension instance. */
export class StrategyLifecycle implements StrategyChart {
  readonly strategy: StrategyName;
  readonly routes: Routes;
  private readonly effects: LifecycleEffects;
  private readonly inspect: () => boolean;
  private readonly observer: Observer<InspectionEvent> | undefined;
  private readonly store: (() => FactStore) | undefined;

  /**
   * `inspect` turns the Stately inspector on; `observer` (tests) sees every run as well; `store` is where validated
   * facts are awaited (the current session; absent in the lab, which never stores them).
   */
  constructor(
    strategy: StrategyName,
    routes: Routes,
    effects: LifecycleEffects,
    inspect: () => boolean,
    observer?: Observer<InspectionEvent>,
    store?: () => FactStore,
  ) {
    this.strategy = strategy;
    this.routes = routes;
    this.effects = effects;
    this.inspect = inspect;
    this.observer = observer;
    this.store = store;
  }

  /**
   * Run `request` through the chart: the route, the plan, its validation, the facts handed over, and the commit once
   * Pi stores them. A refused tool request still claims its step, and a strategy that does not manage the active
   * model (`applies: false`) leaves Pi's compaction to Pi (see the chart).
   */
  run(trigger: Trigger, request: LifecycleRequest, options: RunOptions = {}): LifecycleRun {
    const run = new LifecycleRun(this.actorFor(trigger, request, options), this.store?.());
    run.abortOn(options.signal, options.abortReason);
    return run;
  }

  private async actorFor(trigger: Trigger, request: LifecycleRequest, options: RunOptions): Promise<LifecycleActor> {
    const warn = (message: string) => request.ctx.ui.notify(forTerminal(message), "warning");
    const observers = [this.inspect() ? await getInspector(warn) : undefined, this.observer].filter(
      (o) => o !== undefined,
    );
    const inspect =
      observers.length > 1
        ? { next: (event: InspectionEvent) => observers.forEach((o) => o.next?.(event)) }
        : observers[0];
    const { effects } = this;
    // The run's effects close over its request: the chart hands them only the moment it holds.
    const machine = compactionMachine.provide({
      actors: {
        plan: planningStep({
          plan: (_moment, signal) => effects.plan(request, signal),
          // Every strategy's facts are bounded against the window before the strategy's own check.
          validate: (_moment, plan) => oversizedFacts(request, plan) ?? effects.validate?.(request, plan),
        }),
      },
    });
    const input: LifecycleInput = {
      strategy: this.strategy,
      trigger,
      routes: this.routes,
      moment: request.moment,
      ...(options.refused !== undefined ? { refused: options.refused } : {}),
      ...(options.applies === false ? { applies: false } : {}),
    };
    return createActor(machine, { input, ...(inspect ? { inspect } : {}) });
  }
}
