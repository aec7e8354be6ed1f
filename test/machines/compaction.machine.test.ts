// The lifecycle chart on its own: routes from the registry's tables, validation inside the chart, commit only on
// Pi's confirmation, and the output every final state declares. The chart holds only the request's moment: Pi's
// extension context never reaches it (the host's effects close over it; see test/host/lifecycle.test.ts).
import { describe, expect, it } from "vitest";
import type { SessionBeforeCompactEvent } from "@earendil-works/pi-coding-agent";
import {
  createActor,
  initialTransition,
  toPromise,
  transition,
  type AnyEventObject,
  type InspectionEvent,
} from "xstate";
import { getShortestPaths } from "xstate/graph";
import {
  compactionMachine,
  planningStep,
  type ChartEffects,
  type CompactionTrigger,
  type LifecycleEvent,
  type LifecycleInput,
  type LifecycleOutput,
  type PlanResult,
  type Trigger,
  type Verdict,
} from "../../machines/compaction.machine.ts";
import type { StrategyName } from "../../src/strategies/registry.ts";
import type { Moment, PlannedFacts } from "../../src/strategies/contract.ts";
import { STRATEGIES, strategyNamed } from "../../src/strategies/registry.ts";

const STATES = [
  "requested",
  "pendingAtTurnEnd",
  "planning",
  "validated",
  "committed",
  "cancelled",
  "nativeFallback",
] as const;
const COMPACTION_TRIGGERS: readonly CompactionTrigger[] = ["manual", "threshold", "overflow"];
const TRIGGERS: readonly Trigger[] = ["tool", "turnEnd", ...COMPACTION_TRIGGERS];

function momentFor(trigger: Trigger): Moment {
  if (trigger === "tool")
    return {
      type: "tool",
      call: { target: "root", summary: "done" },
      toolCallId: "call-1",
      requestEntryId: "a1",
      requestKey: "a1",
    };
  return { type: "session_before_compact", event: {} as SessionBeforeCompactEvent };
}
function inputFor(strategy: StrategyName, trigger: Trigger, refused?: string): LifecycleInput {
  return {
    strategy,
    trigger,
    routes: strategyNamed(strategy).routes,
    moment: momentFor(trigger),
    ...(refused !== undefined ? { refused } : {}),
  };
}

/** Facts the test validator accepts, and facts it rejects. */
const GOOD: PlannedFacts = { continue: true };
const BAD: PlannedFacts = { declineCompaction: true };
const judge: NonNullable<ChartEffects["validate"]> = (_moment, plan) =>
  plan.continue ? undefined : "the validator rejected the plan";
/** The one chart with a planning step: `plan` for the planner, `judge` (or `validate`) for the validator. */
const provided = (plan: ChartEffects["plan"], validate: ChartEffects["validate"] = judge) =>
  compactionMachine.provide({ actors: { plan: planningStep({ plan, validate }) } });
const judged = provided(async () => ({ ok: false, reason: "no plan" }));

const intactTurnEnd: LifecycleEvent = { type: "host.turnEnded", aborted: false, sameStep: true };

/** Start a real actor of `judged` whose planner resolves to `result` (or throws it). */
function start(
  input: LifecycleInput,
  planner: (signal: AbortSignal) => Promise<PlanResult>,
  inspect?: (e: InspectionEvent) => void,
) {
  let calls = 0;
  const machine = provided((_moment, signal) => (calls++, planner(signal)));
  const actor = createActor(machine, { input, ...(inspect ? { inspect } : {}) });
  actor.start();
  return { actor, output: toPromise(actor), calls: () => calls };
}
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("lifecycle chart: routes", () => {
  it("a tool request waits for the end of its step, whatever the strategy", () => {
    for (const { name } of STRATEGIES)
      expect(initialTransition(compactionMachine, inputFor(name, "tool"))[0].value, name).toBe("pendingAtTurnEnd");
  });

  it("every registry route decides the first state: native → nativeFallback, cancel → cancelled, plan → planning", () => {
    const expected = { pi: "nativeFallback", cancel: "cancelled", plan: "planning" } as const;
    for (const { name, routes } of STRATEGIES) {
      for (const trigger of ["turnEnd", ...COMPACTION_TRIGGERS] as const) {
        const [snapshot] = initialTransition(compactionMachine, inputFor(name, trigger));
        expect(snapshot.value, `${name}/${trigger}`).toBe(expected[routes[trigger]]);
      }
    }
  });

  it("native hands every compaction back to Pi without planning", async () => {
    for (const trigger of COMPACTION_TRIGGERS) {
      const run = start(inputFor("native", trigger), async () => ({ ok: true, plan: GOOD }));
      expect(await run.output, trigger).toMatchObject({
        outcome: "nativeFallback",
        reason: "the strategy leaves this trigger to Pi",
      });
      expect(run.calls(), trigger).toBe(0);
    }
  });

  it("preserve declines Pi's threshold compaction and leaves an overflow to Pi", async () => {
    const threshold = start(inputFor("preserve", "threshold"), async () => ({ ok: true, plan: GOOD }));
    expect(await threshold.output).toMatchObject({
      outcome: "cancelled",
      reason: "the strategy manages the window at step boundaries",
    });
    const overflow = start(inputFor("preserve", "overflow"), async () => ({ ok: true, plan: GOOD }));
    expect((await overflow.output).outcome).toBe("nativeFallback");
    expect(threshold.calls() + overflow.calls()).toBe(0);
  });

  it("a strategy that does not manage the active model leaves every compaction to Pi, even a threshold it would decline", async () => {
    for (const trigger of COMPACTION_TRIGGERS) {
      const run = start({ ...inputFor("preserve", trigger), applies: false }, async () => ({ ok: true, plan: GOOD }));
      expect(await run.output, trigger).toMatchObject({
        outcome: "nativeFallback",
        reason: "the strategy does not manage the active model",
      });
      expect(run.calls(), trigger).toBe(0);
    }
    // A tool request is the model's own: it still waits for the end of its step.
    expect(initialTransition(compactionMachine, { ...inputFor("fold", "tool"), applies: false })[0].value).toBe(
      "pendingAtTurnEnd",
    );
  });

  it("fold's table leaves Pi's compaction to Pi (unused: `fold` is no setting value, so its chart only gets tool requests)", () => {
    for (const trigger of COMPACTION_TRIGGERS)
      expect(initialTransition(compactionMachine, inputFor("fold", trigger))[0].value).toBe("nativeFallback");
  });
});

describe("lifecycle chart: pending at turn_end", () => {
  const pending = () => initialTransition(compactionMachine, inputFor("fold", "tool"))[0];

  it("an intact end of the same step moves to planning", () => {
    expect(transition(compactionMachine, pending(), intactTurnEnd)[0].value).toBe("planning");
  });

  it("an aborted step, another step, the run's end or a new session cancel", () => {
    const events: LifecycleEvent[] = [
      { type: "host.turnEnded", aborted: true, sameStep: true },
      { type: "host.turnEnded", aborted: false, sameStep: false },
      { type: "host.aborted" },
      { type: "host.runEnded" },
      { type: "host.sessionReplaced" },
    ];
    for (const event of events) {
      const [snapshot] = transition(compactionMachine, pending(), event);
      expect(snapshot.value, JSON.stringify(event)).toBe("cancelled");
      expect(snapshot.context.reason, JSON.stringify(event)).toBeTruthy();
    }
  });

  it("a second request in the same step voids the first even when the step ends intact", () => {
    let [snapshot] = transition(compactionMachine, pending(), { type: "tool.compactRequested" });
    expect(snapshot.value).toBe("pendingAtTurnEnd");
    [snapshot] = transition(compactionMachine, snapshot, intactTurnEnd);
    expect(snapshot.value).toBe("cancelled");
    expect(snapshot.context.reason).toMatch(/more than one/);
  });

  it("a refused request claims its step and cancels at its end without planning", async () => {
    const run = start(inputFor("fold", "tool", "the target is not in the context"), async () => ({
      ok: true,
      plan: GOOD,
    }));
    run.actor.send(intactTurnEnd);
    expect(await run.output).toMatchObject({ outcome: "cancelled", reason: "the target is not in the context" });
    expect(run.calls()).toBe(0);
  });
});

describe("lifecycle chart: planning and validation", () => {
  it("an accepted plan stops at validated: nothing commits before Pi confirms", async () => {
    const run = start(inputFor("checkpoint", "manual"), async () => ({ ok: true, plan: GOOD }));
    await settle();
    expect(run.actor.getSnapshot().value).toBe("validated");
    expect(run.actor.getSnapshot().status).toBe("active");
    // An abort after the facts were handed to Pi changes nothing: only Pi's answer decides now.
    run.actor.send({ type: "host.aborted" });
    expect(run.actor.getSnapshot().value).toBe("validated");
    run.actor.send({ type: "pi.appended" });
    expect(await run.output).toEqual({ outcome: "committed", plan: GOOD, attempted: true });
  });

  it("validated cancels when Pi does not store the facts, or the session is replaced first", async () => {
    const failed = start(inputFor("checkpoint", "threshold"), async () => ({ ok: true, plan: GOOD }));
    await settle();
    failed.actor.send({ type: "pi.notAppended", reason: "Pi could not store the compaction" });
    expect(await failed.output).toMatchObject({ outcome: "cancelled", reason: "Pi could not store the compaction" });
    const replaced = start(inputFor("preserve", "turnEnd"), async () => ({ ok: true, plan: GOOD }));
    await settle();
    replaced.actor.send({ type: "host.sessionReplaced" });
    expect(await replaced.output).toMatchObject({ outcome: "cancelled", reason: expect.stringMatching(/replaced/) });
  });

  it("the validator judges each planner result once, accepted or rejected", async () => {
    for (const plan of [GOOD, BAD]) {
      let judgements = 0;
      const counting = provided(
        async () => ({ ok: true, plan }),
        (moment, facts) => (judgements++, judge(moment, facts)),
      );
      const actor = createActor(counting, { input: inputFor("checkpoint", "manual") });
      actor.start();
      await settle();
      expect(judgements, plan === GOOD ? "accepted" : "rejected").toBe(1);
      actor.stop();
    }
  });

  it("the validator's rejection cancels an in-run request and hands a compaction to Pi", async () => {
    for (const [strategy, trigger, outcome] of [
      ["fold", "tool", "cancelled"],
      ["preserve", "turnEnd", "cancelled"],
      ["checkpoint", "manual", "nativeFallback"],
      ["planned", "threshold", "nativeFallback"],
      ["checkpoint", "overflow", "nativeFallback"],
    ] as const) {
      const run = start(inputFor(strategy, trigger), async () => ({ ok: true, plan: BAD }));
      if (trigger === "tool") run.actor.send(intactTurnEnd);
      const out = await run.output;
      expect(out, `${strategy}/${trigger}`).toMatchObject({ outcome, reason: "the validator rejected the plan" });
      expect(out.plan, `${strategy}/${trigger}`).toBeUndefined();
    }
  });

  it("the planner and the validator see the moment the chart was started with", async () => {
    const seen: Moment[] = [];
    const input = inputFor("checkpoint", "manual");
    const machine = provided(
      async (moment) => (seen.push(moment), { ok: true, plan: GOOD }),
      (moment) => (seen.push(moment), undefined),
    );
    const actor = createActor(machine, { input }).start();
    await settle();
    expect(actor.getSnapshot().value).toBe("validated");
    expect(seen).toHaveLength(2);
    for (const moment of seen) expect(moment).toBe(input.moment);
  });

  it("a rejected or failing plan: in-run requests cancel, compactions fall back to Pi", async () => {
    const rejected = start(inputFor("digest", "turnEnd"), async () => ({ ok: false, reason: "nothing to digest" }));
    expect(await rejected.output).toMatchObject({ outcome: "cancelled", reason: "nothing to digest" });
    const crashed = start(inputFor("planned", "manual"), async () => {
      throw new Error("planner crashed");
    });
    expect(await crashed.output).toMatchObject({ outcome: "nativeFallback", reason: "planner crashed" });
    const foldCrash = start(inputFor("fold", "tool"), async () => {
      throw new Error("fold planner crashed");
    });
    foldCrash.actor.send(intactTurnEnd);
    expect(await foldCrash.output).toMatchObject({ outcome: "cancelled", reason: "fold planner crashed" });
  });

  it("an abort while planning cancels and aborts the planner's signal", async () => {
    let seen: AbortSignal | undefined;
    const run = start(
      inputFor("checkpoint", "manual"),
      (signal) => ((seen = signal), new Promise<PlanResult>(() => {})),
    );
    run.actor.send({ type: "host.aborted" });
    expect(await run.output).toMatchObject({ outcome: "cancelled", reason: "aborted while planning" });
    expect(seen?.aborted).toBe(true);
  });
});

describe("lifecycle chart: every shortest path", () => {
  const invokeId = () => {
    const planning = judged.states.planning;
    const id = planning.invoke[0]?.id;
    if (!id) throw new Error("planning invokes no planner");
    return id;
  };
  /** Every event the chart can receive, with the planner's results as the done and error events XState sends. */
  function events(): AnyEventObject[] {
    const id = invokeId();
    return [
      intactTurnEnd,
      { type: "host.turnEnded", aborted: true, sameStep: true },
      { type: "tool.compactRequested" },
      { type: "host.aborted" },
      { type: "host.runEnded" },
      { type: "host.sessionReplaced" },
      { type: "pi.appended" },
      { type: "pi.notAppended", reason: "not stored" },
      { type: `xstate.done.actor.${id}`, output: { ok: true, plan: GOOD } satisfies Verdict },
      { type: `xstate.done.actor.${id}`, output: { ok: false, reason: "invalid", by: "validator" } satisfies Verdict },
      { type: `xstate.done.actor.${id}`, output: { ok: false, reason: "no plan", by: "planner" } satisfies Verdict },
      { type: `xstate.error.actor.${id}`, error: new Error("planner crashed") },
    ];
  }

  /** States a strategy's requests can reach, over every trigger the host sends its chart. */
  function reachedBy(strategy: StrategyName, triggers: readonly Trigger[]): Set<string> {
    const reached = new Set<string>();
    for (const trigger of triggers) {
      // `requested` only routes (eventless transitions), so no path rests there: the inspector's microsteps show it.
      const sources: string[] = [];
      const inspect = (e: InspectionEvent) => {
        if (e.type === "@xstate.microstep") for (const t of e._transitions) sources.push(t.source.key);
      };
      createActor(judged, { input: inputFor(strategy, trigger), inspect })
        .start()
        .stop();
      for (const s of sources) reached.add(s);
      const paths = getShortestPaths(judged, {
        input: inputFor(strategy, trigger),
        events: events() as LifecycleEvent[],
      });
      for (const path of paths)
        for (const step of [path.state, ...path.steps.map((s) => s.state)]) reached.add(String(step.value));
    }
    return reached;
  }

  it("reaches every state, and every state is described", () => {
    const reached = new Set<string>();
    for (const { name } of STRATEGIES) for (const state of reachedBy(name, TRIGGERS)) reached.add(state);
    expect([...reached].sort()).toEqual([...STATES].sort());
    for (const key of STATES) expect(compactionMachine.states[key]?.description, key).toBeTruthy();
  });

  it("per strategy, the states its host's triggers reach (the table in docs/machines/README.md)", () => {
    // Tool requests always go to the fold chart; only preserve and digest start runs at turn_end; the configured
    // strategy's chart answers Pi's compaction (manual, threshold, overflow), and `fold` is not a setting value.
    const all = [...STATES].sort();
    const without = (...states: string[]) => all.filter((s) => !states.includes(s));
    const table: Record<StrategyName, { triggers: readonly Trigger[]; states: string[] }> = {
      fold: { triggers: ["tool"], states: without("nativeFallback") },
      checkpoint: { triggers: COMPACTION_TRIGGERS, states: without("pendingAtTurnEnd") },
      planned: { triggers: COMPACTION_TRIGGERS, states: without("pendingAtTurnEnd") },
      preserve: { triggers: ["turnEnd", ...COMPACTION_TRIGGERS], states: without("pendingAtTurnEnd") },
      digest: { triggers: ["turnEnd", ...COMPACTION_TRIGGERS], states: without("pendingAtTurnEnd") },
      native: { triggers: COMPACTION_TRIGGERS, states: ["nativeFallback", "requested"] },
    };
    for (const { name } of STRATEGIES)
      expect([...reachedBy(name, table[name].triggers)].sort(), name).toEqual(table[name].states);
  });
});

describe("lifecycle chart: the output every final state declares", () => {
  /** Run `input` with `planner`, sending `events` once the actor rests, and return the chart's output. */
  async function outputOf(
    input: LifecycleInput,
    planner: (signal: AbortSignal) => Promise<PlanResult>,
    events: LifecycleEvent[] = [],
  ): Promise<LifecycleOutput> {
    const run = start(input, planner);
    for (const event of events) {
      await settle();
      run.actor.send(event);
    }
    return run.output;
  }
  const good = async (): Promise<PlanResult> => ({ ok: true, plan: GOOD });

  it("routes: a trigger sent elsewhere was never attempted", async () => {
    expect(await outputOf(inputFor("native", "threshold"), good)).toEqual({
      outcome: "nativeFallback",
      reason: "the strategy leaves this trigger to Pi",
      attempted: false,
      failure: "routed",
    });
    expect(await outputOf(inputFor("preserve", "threshold"), good)).toEqual({
      outcome: "cancelled",
      reason: "the strategy manages the window at step boundaries",
      attempted: false,
      failure: "routed",
    });
    expect(await outputOf({ ...inputFor("checkpoint", "manual"), applies: false }, good)).toEqual({
      outcome: "nativeFallback",
      reason: "the strategy does not manage the active model",
      attempted: false,
      failure: "routed",
    });
  });

  it("tool requests: refused, voided or interrupted before planning", async () => {
    expect(await outputOf(inputFor("fold", "tool", "bad target"), good, [intactTurnEnd])).toEqual({
      outcome: "cancelled",
      reason: "bad target",
      attempted: false,
      failure: "refused",
    });
    expect(await outputOf(inputFor("fold", "tool"), good, [{ type: "tool.compactRequested" }, intactTurnEnd])).toEqual({
      outcome: "cancelled",
      reason: "more than one context_compact call in the same step",
      attempted: false,
      failure: "refused",
    });
    expect(await outputOf(inputFor("fold", "tool"), good, [{ type: "host.runEnded" }])).toEqual({
      outcome: "cancelled",
      reason: "the request never reached the end of its step",
      attempted: false,
      failure: "interrupted",
    });
  });

  it("planning: the planner's refusal, the validator's rejection and the planner's error are told apart", async () => {
    expect(await outputOf(inputFor("digest", "turnEnd"), async () => ({ ok: false, reason: "nothing new" }))).toEqual({
      outcome: "cancelled",
      reason: "nothing new",
      attempted: true,
      failure: "rejected",
    });
    expect(await outputOf(inputFor("planned", "threshold"), async () => ({ ok: true, plan: BAD }))).toEqual({
      outcome: "nativeFallback",
      reason: "the validator rejected the plan",
      attempted: true,
      failure: "invalid",
    });
    const crash = async (): Promise<PlanResult> => {
      throw new Error("planner crashed");
    };
    expect(await outputOf(inputFor("checkpoint", "overflow"), crash)).toEqual({
      outcome: "nativeFallback",
      reason: "planner crashed",
      attempted: true,
      failure: "error",
    });
    expect(
      await outputOf(inputFor("checkpoint", "manual"), () => new Promise<PlanResult>(() => {}), [
        { type: "host.aborted", reason: "compaction aborted" },
      ]),
    ).toEqual({ outcome: "cancelled", reason: "compaction aborted", attempted: true, failure: "interrupted" });
  });

  it("after validation: committed on Pi's store, or cancelled with the plan when Pi does not store it", async () => {
    expect(await outputOf(inputFor("fold", "tool"), good, [intactTurnEnd, { type: "pi.appended" }])).toEqual({
      outcome: "committed",
      plan: GOOD,
      attempted: true,
    });
    expect(
      await outputOf(inputFor("checkpoint", "manual"), good, [{ type: "pi.notAppended", reason: "not stored" }]),
    ).toEqual({ outcome: "cancelled", plan: GOOD, reason: "not stored", attempted: true, failure: "notStored" });
  });

  it("the chart announces validated facts once, before Pi is asked to store them", async () => {
    const run = start(inputFor("preserve", "turnEnd"), good);
    const announced: PlannedFacts[] = [];
    run.actor.on("validated", (event) => announced.push(event.plan));
    await settle();
    expect(announced).toEqual([GOOD]);
    expect(announced[0]).toBe(GOOD);
    run.actor.send({ type: "pi.appended" });
    await run.output;
    expect(announced).toHaveLength(1);
  });

  it("every final state declares its output; no entry action sets the outcome", () => {
    for (const key of ["committed", "cancelled", "nativeFallback"] as const) {
      const node = compactionMachine.states[key];
      expect(node.type, key).toBe("final");
      expect(node.output, key).toBeTypeOf("function");
      expect(node.entry, key).toEqual([]);
    }
  });

  it("the chart's context is plain data: it survives a JSON round trip at every step", async () => {
    const seen: unknown[] = [];
    const run = start(inputFor("fold", "tool"), good, (event) => {
      // The planning step's own snapshots (a promise actor's) carry no context.
      if (event.type !== "@xstate.snapshot") return;
      const context = (event.snapshot as { context?: unknown }).context;
      if (context !== undefined) seen.push(context);
    });
    await settle();
    run.actor.send(intactTurnEnd);
    await settle();
    run.actor.send({ type: "pi.appended" });
    await run.output;
    expect(seen.length).toBeGreaterThan(2);
    for (const context of seen) expect(JSON.parse(JSON.stringify(context))).toEqual(context);
  });
});
