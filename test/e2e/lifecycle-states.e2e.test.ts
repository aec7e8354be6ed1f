// Per strategy, the chart states its runs pass through when REAL Pi events drive them: a real AgentSession on the faux
// provider, Pi's default settings plus only the strategy, and an XState inspection observer on every lifecycle actor.
// Each case also counts model calls, so a walk that "commits" by calling a model it should not is caught.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxText, fauxToolCall, type Context, type Message } from "@earendil-works/pi-ai";
import type { ExtensionAPI, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { InspectionEvent, Observer } from "xstate";
import type { LifecycleContext, Trigger } from "../../machines/compaction.machine.ts";
import type { StrategyName } from "../../src/strategies/registry.ts";
import { PLANNER_SYSTEM } from "../../src/strategies/planned/model-plan.ts";
import { startHarness, userEntryId, type Harness, type HarnessOptions } from "./harness.ts";

/** One lifecycle run as the inspector saw it: which chart, what started it, and the states it entered in order. */
interface Walk {
  strategy: StrategyName;
  trigger: Trigger;
  states: string[];
  /** Why the run did not commit (the chart's own words), once it ended. */
  reason?: string;
}

function hasLifecycleContext(snapshot: unknown): snapshot is { context: LifecycleContext } {
  return (
    typeof snapshot === "object" &&
    snapshot !== null &&
    "context" in snapshot &&
    typeof (snapshot as { context: unknown }).context === "object"
  );
}

/** Collect every run's walk from XState's microsteps (`requested` only routes, so only a microstep shows it). */
function walkRecorder(): { observer: Observer<InspectionEvent>; walks: Walk[] } {
  const byActor = new Map<string, Walk>();
  const walks: Walk[] = [];
  const observer: Observer<InspectionEvent> = {
    next: (event) => {
      if (event.type !== "@xstate.microstep" || !hasLifecycleContext(event.snapshot)) return;
      let walk = byActor.get(event.actorRef.sessionId);
      if (!walk) {
        const { strategy, trigger } = event.snapshot.context;
        // The chart knows a strategy only by its name (it imports no registry).
        walk = { strategy: strategy as StrategyName, trigger, states: [] };
        byActor.set(event.actorRef.sessionId, walk);
        walks.push(walk);
      }
      for (const t of event._transitions) {
        if (!t.target?.length) continue; // an action without a move (a second request voiding the first)
        if (!walk.states.length) walk.states.push(t.source.key);
        for (const target of t.target) walk.states.push(target.key);
      }
      if (event.snapshot.context.reason !== undefined) walk.reason = event.snapshot.context.reason;
    },
  };
  return { observer, walks };
}

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.dispose();
});

async function start(
  strategy: StrategyName | undefined,
  options: HarnessOptions = {},
): Promise<{ h: Harness; walks: Walk[] }> {
  const { observer, walks } = walkRecorder();
  const h = await startHarness({
    ...options,
    ...(strategy ? { ledgerSettings: { strategy, ...options.ledgerSettings } } : {}),
    ledgerOptions: { inspect: observer },
  });
  open.push(h);
  return { h, walks };
}

const dropUndefined = <T extends object>(o: T): T => JSON.parse(JSON.stringify(o)) as T;

/** Every run ended: none is left waiting in `validated` for a confirmation that never came. */
function expectAllSettled(walks: readonly Walk[]): void {
  for (const w of walks)
    expect(
      ["committed", "cancelled", "nativeFallback"],
      `${w.strategy}/${w.trigger}: ${w.states.join(" → ")}`,
    ).toContain(w.states.at(-1));
}

const textOf = (m: Message): string =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("");
const branch = (h: Harness): SessionEntry[] => h.session.sessionManager.getBranch();
const systemOf = (context: Context): string => context.systemPrompt ?? "";

/** About 10,000 tokens each: three reads pass Pi's default keepRecentTokens (20,000), so /compact has work to do. */
const tenK = (marker: string) =>
  Array.from({ length: 400 }, (_, i) => `${marker} line ${i} ${"filler ".repeat(12)}`).join("\n");
const LARGE_FILES = { "a.txt": tenK("FILE-A"), "b.txt": tenK("FILE-B"), "c.txt": tenK("FILE-C") };
const readStep = (path: string) =>
  fauxAssistantMessage([fauxText(`Reading ${path}.`), fauxToolCall("read", { path })], { stopReason: "toolUse" });

/** Three reads in one run, then a second short run: the session Pi's /compact works on. Four live model calls. */
async function largeSession(h: Harness): Promise<void> {
  h.script([readStep("a.txt"), readStep("b.txt"), readStep("c.txt"), fauxAssistantMessage("read all three")]);
  await h.session.prompt("read a.txt, b.txt and c.txt");
}

describe("lifecycle states with real Pi events", () => {
  it("fold: a context_compact call walks requested → pendingAtTurnEnd → planning → validated → committed", async () => {
    const { h, walks } = await start(undefined);
    h.script([fauxAssistantMessage("finished task one")]);
    await h.session.prompt("task one: KEEP-ONE");
    h.script([
      () =>
        fauxAssistantMessage(
          [fauxToolCall("context_compact", { target: userEntryId(h.session, "KEEP-ONE"), summary: "SUMMARY-OF-TWO" })],
          { stopReason: "toolUse" },
        ),
      fauxAssistantMessage("after fold"),
    ]);
    await h.session.prompt("task two: FOLD-ME");
    expect(walks).toEqual(
      [
        {
          strategy: "fold",
          trigger: "tool",
          states: ["requested", "pendingAtTurnEnd", "planning", "validated", "committed"],
          reason: undefined,
        },
      ].map(dropUndefined),
    );
    // The fold calls no model: one provider request per scripted reply, the last already folded.
    expect(h.requests).toHaveLength(3);
    expect(JSON.stringify(h.requests[2])).toContain("SUMMARY-OF-TWO");
    expect(JSON.stringify(h.requests[2])).not.toContain("FOLD-ME");
  });

  it("fold: a refused request and two requests in one step cancel at the end of their step", async () => {
    const { h, walks } = await start(undefined);
    h.script([
      fauxAssistantMessage([fauxToolCall("context_compact", { target: "nowhere", summary: "S" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(
        [
          fauxToolCall("context_compact", { target: "root", summary: "S1" }),
          fauxToolCall("context_compact", { target: "root", summary: "S2" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("fold twice");
    // The refused call claims its step; in the second step the first call's run is the step's one record, and the
    // second call voids it instead of starting a run of its own.
    expect(walks).toEqual([
      {
        strategy: "fold",
        trigger: "tool",
        states: ["requested", "pendingAtTurnEnd", "cancelled"],
        reason: expect.stringContaining("nowhere"),
      },
      {
        strategy: "fold",
        trigger: "tool",
        states: ["requested", "pendingAtTurnEnd", "cancelled"],
        reason: "more than one context_compact call in the same step",
      },
    ]);
    expect(h.requests).toHaveLength(3);
    expect(branch(h).some((e) => e.type === "custom_message" && e.customType === "context-ledger/fold")).toBe(false);
  });

  it("fold: when Pi never stores the validated fold (a later extension drops it), the run cancels when the run settles", async () => {
    const dropFolds = (pi: ExtensionAPI): void => {
      pi.on("turn_end", (event) => {
        const kept = event.entries.filter(
          (d) => !(d.type === "custom_message" && d.customType === "context-ledger/fold"),
        );
        return kept.length === event.entries.length ? undefined : { entries: kept };
      });
    };
    const { h, walks } = await start(undefined, { extensions: [dropFolds] });
    h.script([
      fauxAssistantMessage([fauxToolCall("context_compact", { target: "root", summary: "LOST" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("carried on"),
    ]);
    await h.session.prompt("fold everything");
    expect(walks).toEqual([
      {
        strategy: "fold",
        trigger: "tool",
        states: ["requested", "pendingAtTurnEnd", "planning", "validated", "cancelled"],
        reason: "Pi did not store the fact before the run settled",
      },
    ]);
    expect(branch(h).some((e) => e.type === "custom_message" && e.customType === "context-ledger/fold")).toBe(false);
    expect(h.requests).toHaveLength(2);
  });

  it("checkpoint (default): /compact walks requested → planning → validated → committed, confirmed by Pi's store, with no model call", async () => {
    const { h, walks } = await start(undefined, { files: LARGE_FILES });
    await largeSession(h);
    const before = h.requests.length;
    await h.session.compact();
    expect(walks).toEqual([
      { strategy: "checkpoint", trigger: "manual", states: ["requested", "planning", "validated", "committed"] },
    ]);
    expect(h.requests.length).toBe(before);
    expect(branch(h).at(-1)).toMatchObject({ type: "compaction", details: { v: 1, strategy: "checkpoint" } });
  });

  it("planned: a garbage plan walks requested → planning → nativeFallback, and Pi's own summary follows", async () => {
    const { h, walks } = await start("planned", { files: LARGE_FILES });
    await largeSession(h);
    const isPlanner = (context: Context) =>
      systemOf(context).includes(PLANNER_SYSTEM) ||
      context.messages.map(textOf).join("\n").includes("\n<transcript>\n");
    let plannerCalls = 0;
    const answer = (context: Context) => {
      if (!isPlanner(context)) return fauxAssistantMessage("NATIVE-SUMMARY");
      plannerCalls++;
      return fauxAssistantMessage("Sure! I would delete the big files.");
    };
    h.script([answer, answer, answer]);
    const before = h.requests.length;
    await h.session.compact();
    expect(walks).toEqual([
      {
        strategy: "planned",
        trigger: "manual",
        states: ["requested", "planning", "nativeFallback"],
        reason: expect.any(String),
      },
    ]);
    // One planner call, then Pi's own summary (its history and split-turn requests).
    expect(plannerCalls).toBe(1);
    expect(h.requests.length - before).toBeGreaterThan(1);
    expect(
      branch(h)
        .filter((e) => e.type === "compaction")
        .at(-1),
    ).toMatchObject({ summary: expect.stringContaining("NATIVE-SUMMARY") });
  });

  it("planned: a plan the validator accepts walks requested → planning → validated → committed on Pi's store", async () => {
    const { h, walks } = await start("planned", { files: LARGE_FILES });
    await largeSession(h);
    let plannerCalls = 0;
    // Delete the numbered lines of the first file but its first ten, as a planner would.
    const plan = (context: Context) => {
      plannerCalls++;
      const numbers = context.messages
        .map(textOf)
        .join("\n")
        .split("\n")
        .flatMap((line) => /^(\d+)\| .*FILE-A line/.exec(line)?.[1] ?? [])
        .map(Number);
      return fauxAssistantMessage(`\`\`\`\n${Math.min(...numbers) + 10},${Math.max(...numbers)}\n\`\`\``);
    };
    h.script([plan]);
    const before = h.requests.length;
    await h.session.compact();
    expect(walks).toEqual([
      { strategy: "planned", trigger: "manual", states: ["requested", "planning", "validated", "committed"] },
    ]);
    expect(plannerCalls).toBe(1);
    expect(h.requests.length - before).toBe(1);
    // Pi's compaction entry, then the card the strategy appends once Pi confirmed it.
    expect(branch(h).at(-2)).toMatchObject({ type: "compaction", details: { v: 1, strategy: "planned" } });
    expect(branch(h).at(-1)).toMatchObject({ type: "custom", customType: "context-ledger/planned-report" });
  });

  it("planned: an abort during planning walks requested → planning → cancelled and writes nothing", async () => {
    const { h, walks } = await start("planned", { files: LARGE_FILES });
    await largeSession(h);
    let started!: () => void;
    const planning = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    h.script([
      async () => {
        started();
        await gate;
        return fauxAssistantMessage("```\n1,2\n```");
      },
    ]);
    const before = h.requests.length;
    const pending = h.session.compact().then(
      () => "compacted",
      () => "cancelled",
    );
    await planning;
    h.session.abortCompaction();
    release();
    expect(await pending).toBe("cancelled");
    expect(walks).toEqual([
      {
        strategy: "planned",
        trigger: "manual",
        states: ["requested", "planning", "cancelled"],
        reason: "compaction aborted",
      },
    ]);
    expect(h.requests.length - before).toBe(1);
    expect(branch(h).some((e) => e.type === "compaction")).toBe(false);
  });

  it("native: /compact walks requested → nativeFallback; Pi writes its own summary", async () => {
    const { h, walks } = await start("native", { files: LARGE_FILES });
    await largeSession(h);
    const before = h.requests.length;
    h.script([fauxAssistantMessage("NATIVE-SUMMARY"), fauxAssistantMessage("NATIVE-SUMMARY of the split turn")]);
    await h.session.compact();
    expect(walks).toEqual([
      {
        strategy: "native",
        trigger: "manual",
        states: ["requested", "nativeFallback"],
        reason: "the strategy leaves this trigger to Pi",
      },
    ]);
    const calls = h.requests.length - before;
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(branch(h).at(-1)).toMatchObject({ type: "compaction", summary: expect.stringContaining("NATIVE-SUMMARY") });
  });

  it("digest: a due boundary walks requested → planning → validated → committed at turn_end, with no model call", async () => {
    const big = (marker: string) =>
      [`// ${marker}`]
        .concat(Array.from({ length: 320 }, (_, i) => `const ${marker.toLowerCase()}Padding${i} = "padding padding";`))
        .join("\n");
    const files = Object.fromEntries(
      ["a", "b", "c", "d", "e"].map((m) => [`src/${m}.ts`, big(`MARK${m.toUpperCase()}`)]),
    );
    const { h, walks } = await start("digest", { files });
    h.script([...["a", "b", "c", "d", "e"].map((f) => readStep(`src/${f}.ts`)), fauxAssistantMessage("DONE-1")]);
    await h.session.prompt("read the five files");
    expect(walks.length).toBeGreaterThan(0);
    // The host's cheap bound starts a run at each boundary that may be due; the exact plan declines the ones below a
    // batch (cancelled: nothing is written) and digests the one that is.
    const declined = {
      strategy: "digest",
      trigger: "turnEnd",
      states: ["requested", "planning", "cancelled"],
      reason: "below batch",
    };
    expect(walks).toEqual([
      declined,
      { strategy: "digest", trigger: "turnEnd", states: ["requested", "planning", "validated", "committed"] },
      declined,
    ]);
    expect(h.requests).toHaveLength(6);
  });

  it("preserve: a checkpoint at turn_end commits; Pi's automatic compaction is off, so no threshold request reaches the chart", async () => {
    // A common large-model window: preserve's own trigger comes before Pi's, as in the preserve suite.
    const line = (marker: string) => `  '${marker.toLowerCase()} padding padding padding padding',\n`;
    const file = (marker: string) =>
      `// ${marker}\n${line(marker).repeat(Math.ceil((12_400 * 4) / line(marker).length))}`;
    const files: Record<string, string> = {};
    for (const tag of ["A", "B", "C"])
      for (let i = 1; i <= 5; i++) files[`${tag.toLowerCase()}${i}.ts`] = file(`MARK-${tag}`);
    const { h, walks } = await start("preserve", { files, contextWindow: 200_000 });
    const batch = (tag: string) =>
      fauxAssistantMessage(
        [
          fauxText(`Reading ${tag}.`),
          ...[1, 2, 3, 4, 5].map((i) => fauxToolCall("read", { path: `${tag.toLowerCase()}${i}.ts` })),
        ],
        { stopReason: "toolUse" },
      );
    const live = [batch("A"), batch("B"), batch("C"), fauxAssistantMessage("DONE-1")];
    let checkpointCalls = 0;
    const step = (context: Context) => {
      const last = textOf(context.messages.at(-1)!);
      if (last.startsWith("[Context maintenance") || last.includes("<tool-activity>")) {
        checkpointCalls++;
        return fauxAssistantMessage(
          `## Tool Context\n### User message 1\n#### Findings\n- SUMMARY-${checkpointCalls}\n\n#### Changes & Validation\n- (none)\n\n#### Unresolved\n- (none)`,
        );
      }
      return live.shift() ?? fauxAssistantMessage("unexpected");
    };
    h.script(Array.from({ length: 8 }, () => step));
    await h.session.prompt("Find why retries loop forever.");
    const boundary = walks.filter((w) => w.trigger === "turnEnd");
    expect(boundary.length).toBeGreaterThan(0);
    for (const w of boundary) expect(w.states).toEqual(["requested", "planning", "validated", "committed"]);
    expect(checkpointCalls).toBe(boundary.length);
    expect(h.requests).toHaveLength(4 + checkpointCalls);
    // The reads still leave the context past Pi's threshold when the run ends, but Pi's automatic compaction reads as
    // off while preserve is active: Pi never asks, so nothing is started and cancelled. (Were the switch missing, the
    // route would decline a threshold request: see the chart's route tests.)
    expect(walks.filter((w) => w.trigger === "threshold")).toEqual([]);
    expectAllSettled(walks);
  });
});
