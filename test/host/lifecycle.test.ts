// The host's side of the chart (`StrategyLifecycle.run`, the kit's `chart.run`): the run's effects close over Pi's
// live extension context, so the chart's context never holds it; the decision comes from the chart's announcement
// of validated facts or from its final output; validated facts are awaited in the session before anyone acts on them.
import type { ExtensionContext, SessionBeforeCompactEvent } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import type { InspectionEvent } from "xstate";
import type {
  ChartRun,
  LifecycleEffects,
  LifecycleRequest,
  Moment,
  PlannedFacts,
  PlanResult,
} from "../../machines/lifecycle.ts";
import { oversizedFacts, StrategyLifecycle } from "../../src/host/lifecycle.ts";
import { strategyNamed } from "../../src/strategies/registry.ts";
import type { StrategyName } from "../../src/strategies/registry.ts";

/**
 * An extension context as live as Pi's, for what matters here: the effects may read `model` and `ui`, and anything
 * that walks it (listing its keys, serializing it) or reads another field throws.
 */
function liveContext(): ExtensionContext {
  const known: Record<string, unknown> = { model: { contextWindow: 128_000 }, ui: { notify: () => undefined } };
  return new Proxy(known, {
    get: (target, key) => {
      if (typeof key !== "string") return undefined;
      if (key in target) return target[key];
      throw new Error(`the live context was read: ${key}`);
    },
    ownKeys: () => {
      throw new Error("the live context was walked");
    },
  }) as Partial<ExtensionContext> as ExtensionContext;
}

const compaction = (): Moment => ({
  type: "session_before_compact",
  // The window bound every plan passes reads Pi's reserve from the preparation.
  event: {
    reason: "manual",
    preparation: { settings: { reserveTokens: 16_384, keepRecentTokens: 20_000 } },
  } as SessionBeforeCompactEvent,
});
const FACTS: PlannedFacts = { declineCompaction: true };

function chartOf(
  strategy: StrategyName,
  effects: LifecycleEffects,
  options: { observe?: (event: InspectionEvent) => void; stored?: Array<[Pick<ChartRun, "send">, PlannedFacts]> } = {},
): StrategyLifecycle {
  const observer = options.observe ? { next: options.observe } : undefined;
  const store = {
    expectStored: (run: Pick<ChartRun, "send">, facts: PlannedFacts) => options.stored?.push([run, facts]),
  };
  return new StrategyLifecycle(
    strategy,
    strategyNamed(strategy).routes,
    effects,
    () => false,
    observer,
    () => store,
  );
}

/** Every value reachable from `root`, non-enumerable properties included. */
function reachable(root: unknown): unknown[] {
  const seen = new Set<unknown>();
  const walk = (value: unknown) => {
    if (value === null || (typeof value !== "object" && typeof value !== "function") || seen.has(value)) return;
    seen.add(value);
    for (const key of Reflect.ownKeys(value as object)) {
      const descriptor = Object.getOwnPropertyDescriptor(value as object, key);
      if (descriptor && "value" in descriptor) walk(descriptor.value);
    }
  };
  walk(root);
  return [...seen];
}

describe("the host's chart runs", () => {
  it("Pi's live context reaches the planner and the validator by closure; the chart's context never holds it", async () => {
    const ctx = liveContext();
    const request: LifecycleRequest = { moment: compaction(), ctx, trace: {} };
    const planned: LifecycleRequest[] = [];
    const judged: LifecycleRequest[] = [];
    const contexts: unknown[] = [];
    const chart = chartOf(
      "checkpoint",
      {
        plan: async (r) => (planned.push(r), { ok: true, plan: FACTS }),
        validate: (r) => (judged.push(r), undefined),
      },
      {
        observe: (event) => {
          if (event.type !== "@xstate.snapshot") return;
          const context = (event.snapshot as { context?: unknown }).context;
          if (context !== undefined) contexts.push(context);
        },
      },
    );
    const run = chart.run("manual", request);
    expect(await run.decision).toEqual({ state: "validated", facts: FACTS });
    expect(planned).toHaveLength(1);
    expect(planned[0]).toBe(request);
    expect(judged[0]).toBe(request);
    expect(planned[0].ctx).toBe(ctx);
    // The request is left as the strategy built it: no property of it was redefined to hide the context.
    expect(Object.getOwnPropertyDescriptor(request, "ctx")?.enumerable).toBe(true);
    expect(contexts.length).toBeGreaterThan(1);
    for (const context of contexts) {
      expect(reachable(context).includes(ctx)).toBe(false);
      expect(() => JSON.stringify(context)).not.toThrow();
    }
  });

  it("validated facts are awaited in the session before the decision reaches the caller; Pi's store commits", async () => {
    const stored: Array<[Pick<ChartRun, "send">, PlannedFacts]> = [];
    const chart = chartOf("checkpoint", { plan: async () => ({ ok: true, plan: FACTS }) }, { stored });
    const run = chart.run("manual", { moment: compaction(), ctx: liveContext(), trace: {} });
    const decision = await run.decision;
    expect(decision).toEqual({ state: "validated", facts: FACTS });
    expect(stored).toHaveLength(1);
    expect(stored[0][0]).toBe(run);
    expect(stored[0][1]).toBe(FACTS);
    stored[0][0].send({ type: "pi.appended" });
    expect(await run.output).toEqual({ outcome: "committed", plan: FACTS, attempted: true });
  });

  it("a trigger routed to Pi decides from the chart's output: never attempted, nothing awaited", async () => {
    const stored: Array<[Pick<ChartRun, "send">, PlannedFacts]> = [];
    let calls = 0;
    const chart = chartOf("native", { plan: async () => (calls++, { ok: true, plan: FACTS }) }, { stored });
    const decision = await chart.run("threshold", { moment: compaction(), ctx: liveContext(), trace: {} }).decision;
    expect(decision).toEqual({
      state: "nativeFallback",
      reason: "the strategy leaves this trigger to Pi",
      attempted: false,
      failure: "routed",
    });
    expect(calls).toBe(0);
    expect(stored).toEqual([]);
  });

  it("a failed attempt says so in the decision, with the kind of failure", async () => {
    const crash = chartOf("checkpoint", {
      plan: async () => {
        throw new Error("planner crashed");
      },
    });
    expect(await crash.run("threshold", { moment: compaction(), ctx: liveContext(), trace: {} }).decision).toEqual({
      state: "nativeFallback",
      reason: "planner crashed",
      attempted: true,
      failure: "error",
    });
    const invalid = chartOf("checkpoint", {
      plan: async () => ({ ok: true, plan: FACTS }),
      validate: () => "the strategy refused its own plan",
    });
    expect(await invalid.run("manual", { moment: compaction(), ctx: liveContext(), trace: {} }).decision).toEqual({
      state: "nativeFallback",
      reason: "the strategy refused its own plan",
      attempted: true,
      failure: "invalid",
    });
  });

  it("Pi's abort signal reaches the chart with the run's reason, and aborts the planner", async () => {
    let seen: AbortSignal | undefined;
    const chart = chartOf("checkpoint", {
      plan: (_r, signal) => ((seen = signal), new Promise<PlanResult>(() => {})),
    });
    const controller = new AbortController();
    const run = chart.run(
      "manual",
      { moment: compaction(), ctx: liveContext(), trace: {} },
      { signal: controller.signal, abortReason: "compaction aborted" },
    );
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    expect(await run.decision).toEqual({
      state: "cancelled",
      reason: "compaction aborted",
      attempted: true,
      failure: "interrupted",
    });
    expect(seen?.aborted).toBe(true);
  });

  it("events sent before the run's actor started arrive, in order", async () => {
    const chart = chartOf("fold", { plan: async () => ({ ok: true, plan: FACTS }) });
    const moment: Moment = {
      type: "tool",
      call: { target: "root", summary: "s" },
      toolCallId: "c",
      requestEntryId: "a",
      requestKey: "a",
    };
    const run = chart.run("tool", { moment, ctx: liveContext(), trace: {} });
    run.send({ type: "tool.compactRequested" });
    run.send({ type: "host.turnEnded", aborted: false, sameStep: true });
    expect(await run.decision).toEqual({
      state: "cancelled",
      reason: "more than one context_compact call in the same step",
      attempted: false,
      failure: "refused",
    });
  });
});

describe("a compaction that leaves no room", () => {
  // Pi compacts again once the context passes window - reserve (111,616 of 128k by default). A compaction whose result
  // already sits just under that line is followed by another within a step or two: on a long task whose protected
  // lines outgrow the window (planned keeps every header), one at nearly every request, each reading the whole tail.
  const request = { moment: compaction(), ctx: liveContext() } as Pick<LifecycleRequest, "moment" | "ctx">;
  // A summary of about 90,000 tokens (the kept lines of a long task), unless a test says otherwise.
  const plan = (estimatedTokensAfter: number, summary = "kept line\n".repeat(36_000)): PlannedFacts => ({
    compaction: {
      summary,
      firstKeptEntryId: "e1",
      tokensBefore: 115_000,
      estimatedTokensAfter,
      details: { v: 1, strategy: "planned" } as never,
    },
  });

  it("is refused, so that Pi compacts natively, when it ends within a tenth of the window of Pi's threshold", () => {
    expect(oversizedFacts(request, plan(109_700))).toMatch(
      /about 109700 tokens right after the compaction, within 12800 of the 111616 at which Pi compacts again/,
    );
    expect(oversizedFacts(request, plan(98_817))).toBeDefined();
    expect(oversizedFacts(request, plan(111_617))).toBeDefined();
  });

  it("passes with a tenth of the window of room, and when the planner gives no estimate", () => {
    expect(oversizedFacts(request, plan(98_816))).toBeUndefined();
    expect(oversizedFacts(request, plan(45_000))).toBeUndefined();
    // A kept tail that alone fills the room is Pi's own cut (a message larger than the window): Pi's summary keeps it too.
    expect(oversizedFacts(request, plan(250_000, "a short summary"))).toBeUndefined();
    const { estimatedTokensAfter: _, ...unestimated } = plan(110_000).compaction!;
    expect(oversizedFacts(request, { compaction: unestimated })).toBeUndefined();
  });

  it("in a small window asks for half the room Pi's own kept tail leaves: 1,808 of a 40k window's 23,616", () => {
    const small = { moment: compaction(), ctx: { model: { contextWindow: 40_000 } } } as unknown as typeof request;
    const tenThousand = "kept line\n".repeat(4_000);
    expect(oversizedFacts(small, plan(21_808, tenThousand))).toBeUndefined();
    expect(oversizedFacts(small, plan(21_809, tenThousand))).toMatch(/within 1808 of the 23616/);
  });
});
