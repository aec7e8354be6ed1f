// Model-based race test of the lifecycle chart: real actors of `compactionMachine`, one per request, started with the
// registry's route tables and driven by host and Pi events, while fast-check's scheduler decides when each planner's
// result reaches its actor. The model is a table of what a host expects; it knows nothing of guards or actions.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SessionBeforeCompactEvent } from "@earendil-works/pi-coding-agent";
import { createActor, type Actor } from "xstate";
import {
  compactionMachine,
  planningStep,
  type CompactionTrigger,
  type LifecycleEvent,
  type Outcome,
  type PlanResult,
  type Trigger,
} from "../../machines/compaction.machine.ts";
import type { StrategyName } from "../../src/strategies/registry.ts";
import type { Moment, PlannedFacts } from "../../src/strategies/contract.ts";
import { strategyNamed } from "../../src/strategies/registry.ts";
import { runs } from "../support/fast-check.ts";

type Phase = "pendingAtTurnEnd" | "planning" | "validated" | Outcome;
/** How a planner ends: an accepted plan, a plan the validator rejects, a refusal, or an exception. */
type PlanEnding = "ok" | "invalid" | "rejects" | "throws";
type Stimulus = LifecycleEvent["type"] | `plan.${PlanEnding}`;

/** The facts the test's validator accepts, and those it rejects. */
const PLAN: PlannedFacts = { continue: true };
const INVALID: PlannedFacts = { declineCompaction: true };
const validate = (_moment: Moment, plan: PlannedFacts) =>
  plan === PLAN ? undefined : "the validator rejected the plan";
const machine = compactionMachine;

interface ModelRequest {
  strategy: StrategyName;
  trigger: Trigger;
  refused: boolean;
  phase: Phase;
  /** A second compact request of the same step was seen while pending. */
  voided: boolean;
  /** A PlanResolves command already chose this planner's ending. */
  resolutionIssued: boolean;
  /** The planner was started (its step ended intact, or the route planned at once). */
  planned: boolean;
  /** What ended planning: its own result, or a host event that cut it short. */
  decidedBy?: "plan" | "event";
  /** The chart validated a plan (output then carries it, whatever Pi answers). */
  validated: boolean;
  log: Stimulus[];
}

interface Model {
  requests: ModelRequest[];
}

interface RealRequest {
  actor: Actor<typeof machine>;
  /** Signal of the planner invocation, once planning started. */
  signal?: AbortSignal;
  /** Hands the planner its (scheduled) result. */
  settle?: (result: Promise<PlanResult>) => void;
  completions: number;
  finalValues: string[];
}

interface Real {
  scheduler: fc.Scheduler;
  requests: RealRequest[];
}

const FINAL: readonly Phase[] = ["committed", "cancelled", "nativeFallback"];
const isFinal = (phase: Phase) => FINAL.includes(phase);
const inRun = (trigger: Trigger) => trigger === "tool" || trigger === "turnEnd";

/** The first phase of a request: a table of the registry's routes, not the chart's guards. */
function firstPhase(strategy: StrategyName, trigger: Trigger): Phase {
  if (trigger === "tool") return "pendingAtTurnEnd";
  const route = strategyNamed(strategy).routes[trigger];
  return route === "pi" ? "nativeFallback" : route === "cancel" ? "cancelled" : "planning";
}

/** The model's reaction to a host or Pi event. */
function applyEvent(request: ModelRequest, event: LifecycleEvent): void {
  request.log.push(event.type);
  const { phase } = request;
  if (phase === "pendingAtTurnEnd") {
    if (event.type === "tool.compactRequested") request.voided = true;
    else if (event.type === "host.turnEnded") {
      const plans = !request.voided && !request.refused && !event.aborted && event.sameStep;
      request.phase = plans ? "planning" : "cancelled";
      request.planned = plans;
    } else if (event.type === "host.aborted" || event.type === "host.runEnded" || event.type === "host.sessionReplaced")
      request.phase = "cancelled";
  } else if (phase === "planning" && (event.type === "host.aborted" || event.type === "host.sessionReplaced")) {
    request.phase = "cancelled";
    request.decidedBy = "event";
  } else if (phase === "validated") {
    if (event.type === "pi.appended") request.phase = "committed";
    else if (event.type === "pi.notAppended" || event.type === "host.sessionReplaced") request.phase = "cancelled";
  }
}

function applyPlan(request: ModelRequest, ending: PlanEnding): void {
  request.log.push(`plan.${ending}`);
  if (request.phase !== "planning") return; // the actor already left; a late result is ignored
  request.decidedBy = "plan";
  if (ending === "ok") {
    request.phase = "validated";
    request.validated = true;
  } else request.phase = inRun(request.trigger) ? "cancelled" : "nativeFallback";
}

function momentFor(trigger: Trigger): Moment {
  if (trigger === "tool")
    return {
      type: "tool",
      call: { target: "root", summary: "s" },
      toolCallId: "c",
      requestEntryId: "a",
      requestKey: "a",
    };
  return { type: "session_before_compact", event: {} as SessionBeforeCompactEvent };
}

function startRequest(model: Model, real: Real, strategy: StrategyName, trigger: Trigger, refused = false): void {
  const phase = firstPhase(strategy, trigger);
  const modelRequest: ModelRequest = {
    strategy,
    trigger,
    refused,
    phase,
    planned: phase === "planning",
    voided: false,
    resolutionIssued: false,
    validated: false,
    log: [],
  };
  const entry: Partial<RealRequest> & Pick<RealRequest, "completions" | "finalValues"> = {
    completions: 0,
    finalValues: [],
  };
  const provided = machine.provide({
    actors: {
      plan: planningStep({
        plan: (_moment, signal) => {
          entry.signal = signal;
          return new Promise<PlanResult>((resolve, reject) => {
            entry.settle = (result) => result.then(resolve, reject);
          });
        },
        validate,
      }),
    },
  });
  const input = {
    strategy,
    trigger,
    routes: strategyNamed(strategy).routes,
    moment: momentFor(trigger),
    ...(refused ? { refused: "refused at the call" } : {}),
  };
  const actor = createActor(provided, { input });
  actor.subscribe({
    next: (snapshot) => {
      if (snapshot.status === "done") entry.finalValues.push(String(snapshot.value));
    },
    complete: () => entry.completions++,
  });
  const started: RealRequest = Object.assign(entry, { actor });
  actor.start();
  model.requests.push(modelRequest);
  real.requests.push(started);
}

/** Indices of requests a command may target; the command's `pick` chooses among them. */
function targets(model: Readonly<Model>, accept: (r: ModelRequest) => boolean): number[] {
  return model.requests.flatMap((r, i) => (accept(r) ? [i] : []));
}

const describeRequest = (m: ModelRequest, i: number) =>
  `request ${i} (${m.strategy}/${m.trigger}${m.refused ? ", refused" : ""}) after ${m.log.join(", ") || "start"}`;

/** After every command: each actor is where the model says, and settled actors show the right output. */
function expectAgreement(model: Model, real: Real): void {
  model.requests.forEach((m, i) => {
    const snapshot = real.requests[i].actor.getSnapshot();
    const where = describeRequest(m, i);
    if (isFinal(m.phase)) {
      expect(snapshot.status, where).toBe("done");
      expect(snapshot.output?.outcome, where).toBe(m.phase);
      // The plan is carried exactly when the chart validated one.
      expect(snapshot.output?.plan, where).toBe(m.validated ? PLAN : undefined);
      // A fallback counts as a failed attempt exactly when the planner was started.
      expect(snapshot.output?.attempted, where).toBe(m.planned);
    } else {
      expect(snapshot.status, where).toBe("active");
      expect(snapshot.value, where).toBe(m.phase);
    }
    const r = real.requests[i];
    // A planner runs only when the model says planning started.
    expect(r.signal !== undefined, `${where}: planner started`).toBe(m.planned);
    if (m.decidedBy === "event") expect(r.signal?.aborted, `${where}: planner signal`).toBe(true);
  });
}

abstract class HostCommand implements fc.AsyncCommand<Model, Real> {
  abstract check(model: Readonly<Model>): boolean;
  abstract run(model: Model, real: Real): Promise<void>;
  abstract toString(): string;
}

/** The model called context_compact (refused at the call when its arguments were bad): it waits for its step's end. */
class RequestFold extends HostCommand {
  readonly refused: boolean;
  constructor(refused: boolean) {
    super();
    this.refused = refused;
  }
  check = () => true;
  async run(model: Model, real: Real) {
    startRequest(model, real, "fold", "tool", this.refused);
    expectAgreement(model, real);
  }
  toString = () => `RequestFold(${this.refused ? "refused" : "ok"})`;
}

/** Pi prepared a compaction, or a step ended where a strategy writes: the strategy's chart routes it. */
class Request extends HostCommand {
  readonly strategy: StrategyName;
  readonly trigger: Exclude<Trigger, "tool">;
  constructor(strategy: StrategyName, trigger: Exclude<Trigger, "tool">) {
    super();
    this.strategy = strategy;
    this.trigger = trigger;
  }
  check = () => true;
  async run(model: Model, real: Real) {
    startRequest(model, real, this.strategy, this.trigger);
    expectAgreement(model, real);
  }
  toString = () => `Request(${this.strategy}, ${this.trigger})`;
}

/** A host or Pi event sent to one live request, chosen by `pick`. */
class Send extends HostCommand {
  readonly pick: number;
  readonly event: LifecycleEvent;
  constructor(pick: number, event: LifecycleEvent) {
    super();
    this.pick = pick;
    this.event = event;
  }
  private target(model: Readonly<Model>): number | undefined {
    const live = targets(model, (r) => !isFinal(r.phase));
    return live.length ? live[live.length - 1 - (this.pick % live.length)] : undefined;
  }
  check = (model: Readonly<Model>) => this.target(model) !== undefined;
  async run(model: Model, real: Real) {
    // A planner result may land between check and run; the target is chosen again, and may be gone.
    const i = this.target(model);
    if (i === undefined) return;
    applyEvent(model.requests[i], this.event);
    real.requests[i].actor.send(this.event);
    expectAgreement(model, real);
  }
  toString = () => `Send(#${this.pick}, ${JSON.stringify(this.event)})`;
}

const secondRequest = (pick: number) => new Send(pick, { type: "tool.compactRequested" });
const turnEnded = (pick: number, aborted = false, sameStep = true) =>
  new Send(pick, { type: "host.turnEnded", aborted, sameStep });
const abort = (pick: number) => new Send(pick, { type: "host.aborted", reason: "test abort" });
const sessionReplaced = (pick: number) => new Send(pick, { type: "host.sessionReplaced" });
const appended = (pick: number) => new Send(pick, { type: "pi.appended" });
const notAppended = (pick: number) => new Send(pick, { type: "pi.notAppended", reason: "Pi did not store it" });

/**
 * The planner of one planning request produces its ending now; the scheduler decides when that ending reaches
 * the actor, so later host events may overtake it.
 */
class PlanResolves extends HostCommand {
  readonly pick: number;
  readonly ending: PlanEnding;
  constructor(pick: number, ending: PlanEnding) {
    super();
    this.pick = pick;
    this.ending = ending;
  }
  private target(model: Readonly<Model>): number | undefined {
    const planning = targets(model, (r) => r.phase === "planning" && !r.resolutionIssued);
    return planning.length ? planning[planning.length - 1 - (this.pick % planning.length)] : undefined;
  }
  check = (model: Readonly<Model>) => this.target(model) !== undefined;
  async run(model: Model, real: Real) {
    const i = this.target(model);
    if (i === undefined) return;
    const request = model.requests[i];
    request.resolutionIssued = true;
    const ending = this.ending;
    const delivered = real.scheduler.schedule(Promise.resolve(ending), `plan #${i} ${ending}`).then((): PlanResult => {
      // The model learns the ending when the actor does: at the scheduler's chosen moment.
      applyPlan(request, ending);
      if (ending === "ok") return { ok: true, plan: PLAN };
      if (ending === "invalid") return { ok: true, plan: INVALID };
      if (ending === "rejects") return { ok: false, reason: "plan rejected by the strategy" };
      throw new Error("planner crashed");
    });
    real.requests[i].settle!(delivered);
    expectAgreement(model, real);
  }
  toString = () => `PlanResolves(#${this.pick}, ${this.ending})`;
}

// Most picks hit the newest live request, so one request often sees a whole story (request, turn end, plan, store).
const pickArb = fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.nat({ max: 7 }), weight: 1 });
const planEndingArb = fc.constantFrom<PlanEnding>("ok", "ok", "invalid", "rejects", "throws");
const compactionTriggerArb = fc.constantFrom<CompactionTrigger>("manual", "threshold", "overflow");
const strategyArb = fc.constantFrom<StrategyName>("fold", "checkpoint", "planned", "preserve", "digest", "native");
// Arbitraries repeat to weight them: folds need a request, an intact turn end, a plan and Pi's store to commit.
const commandArbs = [
  fc.constant(new RequestFold(false)),
  fc.constant(new RequestFold(false)),
  fc.constant(new RequestFold(false)),
  fc.constant(new RequestFold(true)),
  fc.tuple(strategyArb, compactionTriggerArb).map(([s, t]) => new Request(s, t)),
  fc.constantFrom<StrategyName>("preserve", "digest").map((s) => new Request(s, "turnEnd")),
  pickArb.map(secondRequest),
  fc.tuple(pickArb, fc.boolean(), fc.boolean()).map(([p, a, s]) => turnEnded(p, a, s)),
  pickArb.map((p) => turnEnded(p)),
  pickArb.map((p) => turnEnded(p)),
  pickArb.map((p) => turnEnded(p)),
  pickArb.map(abort),
  pickArb.map((p) => new Send(p, { type: "host.runEnded" })),
  pickArb.map(sessionReplaced),
  // Pi's confirmation only counts once the plan reached the actor, so it is sent often.
  ...Array.from({ length: 6 }, () => pickArb.map(appended)),
  pickArb.map(notAppended),
  // Planning is where most stories end early (an abort, a new session), so planners answer often.
  ...Array.from({ length: 6 }, () => fc.tuple(pickArb, planEndingArb).map(([p, e]) => new PlanResolves(p, e))),
];

/** Settle whatever is still live the way a host teardown does, then check the run-wide invariants. */
async function closeOut(model: Model, real: Real): Promise<void> {
  await real.scheduler.waitIdle();
  model.requests.forEach((m, i) => {
    if (isFinal(m.phase)) return;
    applyEvent(m, { type: "host.sessionReplaced" });
    real.requests[i].actor.send({ type: "host.sessionReplaced" });
  });
  // Planner results still in flight reach actors that are already done: they must change nothing.
  model.requests.forEach((m, i) => {
    if (m.phase === "cancelled" && m.decidedBy === "event" && !m.resolutionIssued)
      real.requests[i].settle?.(Promise.resolve({ ok: true, plan: PLAN }));
  });
  await real.scheduler.waitIdle();
  await new Promise((resolve) => setImmediate(resolve));
  expectAgreement(model, real);
  model.requests.forEach((m, i) => {
    const r = real.requests[i];
    const where = describeRequest(m, i);
    // Exactly one final state per actor.
    expect(r.completions, where).toBe(1);
    expect(r.finalValues, where).toHaveLength(1);
    expect(r.finalValues[0], where).toBe(m.phase);
    const output = r.actor.getSnapshot().output!;
    // Only Pi's own compaction can fall back to Pi; a request made during a run writes nothing instead.
    if (output.outcome === "nativeFallback") expect(inRun(m.trigger), where).toBe(false);
    if (output.outcome === "committed") {
      expect(output.plan, where).toBe(PLAN);
      // Committed only after Pi confirmed the store, and after a validated plan.
      expect(m.log.at(-1), where).toBe("pi.appended");
      expect(m.log, where).toContain("plan.ok");
    }
    if (output.outcome === "committed" && m.trigger === "tool") {
      // A committed fold saw an intact end of its own step, and no second request before that.
      const turnEnd = m.log.indexOf("host.turnEnded");
      expect(turnEnd, where).toBeGreaterThanOrEqual(0);
      expect(m.refused, where).toBe(false);
      expect(m.log.slice(0, turnEnd), where).not.toContain("tool.compactRequested");
      expect(
        m.log
          .slice(0, turnEnd)
          .some((s) => s === "host.aborted" || s === "host.runEnded" || s === "host.sessionReplaced"),
        where,
      ).toBe(false);
    }
    if (m.decidedBy === "event") expect(r.signal?.aborted, `${where}: planner signal`).toBe(true);
  });
}

/** How often the property reached each race; a property that never races proves nothing. */
const reached = {
  cutShortWhilePlanning: 0,
  lateResult: 0,
  voidedFold: 0,
  committedFold: 0,
  committedCompaction: 0,
  notStored: 0,
  invalidPlan: 0,
};

function countRaces(model: Model): void {
  for (const m of model.requests) {
    if (m.decidedBy === "event") reached.cutShortWhilePlanning++;
    if (m.decidedBy === "event" && m.log.some((s) => s.startsWith("plan."))) reached.lateResult++;
    if (m.trigger === "tool" && m.voided) reached.voidedFold++;
    if (m.trigger === "tool" && m.phase === "committed") reached.committedFold++;
    if (m.trigger !== "tool" && m.phase === "committed") reached.committedCompaction++;
    if (m.validated && m.phase === "cancelled") reached.notStored++;
    if (m.decidedBy === "plan" && m.log.includes("plan.invalid")) reached.invalidPlan++;
  }
}

async function runScenario(scheduler: fc.Scheduler, commands: Iterable<fc.AsyncCommand<Model, Real>>): Promise<void> {
  const model: Model = { requests: [] };
  const real: Real = { scheduler, requests: [] };
  await fc.scheduledModelRun(scheduler, () => ({ model, real }), commands);
  await closeOut(model, real);
  countRaces(model);
}

describe("lifecycle chart: model-based with scheduled planner results", () => {
  it("agrees with the model under any interleaving of host events, Pi's answers and planner results", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.commands(commandArbs, { maxCommands: 40, size: "large" }), (s, cmds) =>
        runScenario(s, cmds),
      ),
    );
    if (process.env.LIFECYCLE_STATS) console.log(reached);
    // Late results (plan ready after the actor left) are rarer; the named cases below pin them down.
    if (runs() >= 100)
      for (const race of [
        "cutShortWhilePlanning",
        "voidedFold",
        "committedFold",
        "committedCompaction",
        "notStored",
        "invalidPlan",
      ] as const)
        expect(reached[race], race).toBeGreaterThan(0);
  });

  // Named cases. Commands run in the given order; scheduled planner results are only delivered at close-out, after
  // every command, so each case pins one interleaving.
  it("an abort during planning cancels, aborts the signal, and a late ok plan is ignored", async () => {
    const { model, real } = await runInOrder([
      new Request("checkpoint", "manual"),
      new PlanResolves(0, "ok"),
      abort(0),
    ]);
    expect(real.requests[0].actor.getSnapshot().output).toMatchObject({ outcome: "cancelled", reason: "test abort" });
    expect(model.requests[0].log).toEqual(["host.aborted", "plan.ok"]);
  });

  it("a second request in the same step cancels the first even though its step ends intact", async () => {
    const { real } = await runInOrder([new RequestFold(false), secondRequest(0), turnEnded(0)]);
    expect(real.requests[0].actor.getSnapshot().output).toMatchObject({
      outcome: "cancelled",
      reason: expect.stringMatching(/more than one/),
    });
  });

  it("a session switch while a fold plans cancels it before the plan arrives", async () => {
    const { model, real } = await runInOrder([
      new RequestFold(false),
      turnEnded(0),
      new PlanResolves(0, "ok"),
      sessionReplaced(0),
    ]);
    expect(real.requests[0].actor.getSnapshot().output).toMatchObject({
      outcome: "cancelled",
      reason: "the session was replaced",
    });
    expect(real.requests[0].signal?.aborted).toBe(true);
    expect(model.requests[0].log).toEqual(["host.turnEnded", "host.sessionReplaced", "plan.ok"]);
  });

  it("a plan delivered before the abort is validated, the abort is ignored, and Pi's store commits it", async () => {
    const model: Model = { requests: [] };
    const real: Real = { scheduler: fixedScheduler(), requests: [] };
    await new Request("planned", "threshold").run(model, real);
    await new PlanResolves(0, "ok").run(model, real);
    await real.scheduler.waitIdle();
    await new Promise((resolve) => setImmediate(resolve));
    expect(real.requests[0].actor.getSnapshot().value).toBe("validated");
    await abort(0).run(model, real);
    expect(real.requests[0].actor.getSnapshot().value).toBe("validated");
    await appended(0).run(model, real);
    await closeOut(model, real);
    expect(real.requests[0].actor.getSnapshot().output).toEqual({
      outcome: "committed",
      plan: PLAN,
      attempted: true,
    });
  });

  it("a validated plan Pi never stores ends cancelled at teardown, never committed", async () => {
    const model: Model = { requests: [] };
    const real: Real = { scheduler: fixedScheduler(), requests: [] };
    await new Request("preserve", "turnEnd").run(model, real);
    await new PlanResolves(0, "ok").run(model, real);
    await closeOut(model, real);
    expect(real.requests[0].actor.getSnapshot().output).toMatchObject({ outcome: "cancelled", plan: PLAN });
  });
});

/** A scheduler with a fixed seed: named cases do not depend on the property's random source. */
function fixedScheduler(): fc.Scheduler {
  return fc.sample(fc.scheduler(), { seed: 1, numRuns: 1 })[0];
}

async function runInOrder(commands: HostCommand[]): Promise<{ model: Model; real: Real }> {
  const model: Model = { requests: [] };
  const real: Real = { scheduler: fixedScheduler(), requests: [] };
  for (const command of commands) {
    expect(command.check(model), `${command} applies`).toBe(true);
    await command.run(model, real);
  }
  await closeOut(model, real);
  return { model, real };
}
