// Lifecycle races on a real AgentSession: fast-check's scheduler holds Pi at extension hooks, inside the
// checkpoint planner and in sibling tools, and fires an abort, a second fold request or a session replacement
// between them. Whatever the order, the ledger gets a complete fact or none, and the file only grows.
import { existsSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import type { ExtensionAPI, SessionEntry } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { registerContextLedger } from "../../src/host/extension.ts";
import { startHarness, type Harness } from "./harness.ts";
import { runs } from "../support/fast-check.ts";

// Every run starts and disposes a real AgentSession (with a session file): 30 runs at the default count, still
// scaled by FC_RUNS.
const RUNS = runs(0.15);

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.dispose();
});

async function start(options: Parameters<typeof startHarness>[0]): Promise<Harness> {
  const h = await startHarness(options);
  open.push(h);
  return h;
}

const bytes = (file: string | undefined): Buffer => (file && existsSync(file) ? readFileSync(file) : Buffer.alloc(0));
const entriesOf = (file: string | undefined): SessionEntry[] =>
  bytes(file)
    .toString("utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as SessionEntry);
const isFold = (e: SessionEntry) => e.type === "custom_message" && e.customType === "context-ledger/fold";
const isNotice = (e: SessionEntry) => e.type === "custom_message" && e.customType === "context-ledger/notice";

function expectAppendOnly(before: Buffer, after: Buffer): void {
  expect(after.length).toBeGreaterThanOrEqual(before.length);
  expect(after.subarray(0, before.length).equals(before), "earlier bytes were rewritten").toBe(true);
  // Every line is whole: nothing half-written.
  for (const line of after.toString("utf8").split("\n").filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
}

/**
 * A test extension that holds Pi at its hooks until the scheduler releases it. `current` is swapped per run
 * because Pi loads the extension once per session.
 */
function pacer(
  slot: { current?: fc.Scheduler },
  events: readonly ("tool_call" | "tool_result" | "context" | "session_before_compact" | "session_compact")[],
) {
  return (pi: ExtensionAPI) => {
    const hold = (label: string) => slot.current?.schedule(Promise.resolve(label), label) ?? Promise.resolve(label);
    for (const event of events) {
      // Returns nothing: our own handler's answer stands.
      pi.on(event as "context", async () => {
        await hold(event);
        return undefined;
      });
    }
    pi.registerTool({
      name: "pace",
      label: "pace",
      description: "waits for the scheduler",
      parameters: Type.Object({ n: Type.Number() }),
      execute: async (_id, params, signal) => {
        await Promise.race([
          hold(`pace ${params.n}`),
          new Promise((resolve) => signal?.addEventListener("abort", resolve, { once: true })),
        ]);
        return { content: [{ type: "text", text: `paced ${params.n}` }], details: undefined };
      },
    });
  };
}

/** Two small tasks so Pi has something to compact and a fold has a target. */
async function twoTasks(h: Harness): Promise<void> {
  h.script([fauxAssistantMessage(`one done ${"pad ".repeat(40)}`)]);
  await h.session.prompt("task ONE");
  h.script([
    fauxAssistantMessage([fauxToolCall("bash", { command: "echo OUT-TWO" })], { stopReason: "toolUse" }),
    fauxAssistantMessage(`two done ${"pad ".repeat(40)}`),
  ]);
  await h.session.prompt("task TWO");
}

const userId = (h: Harness, needle: string) =>
  h.session.sessionManager
    .getBranch()
    .find(
      (e) => e.type === "message" && e.message.role === "user" && JSON.stringify(e.message.content).includes(needle),
    )!.id;

describe("lifecycle races e2e", () => {
  it("checkpoint compaction raced against abortCompaction leaves a complete checkpoint entry or none", async () => {
    const slot: { current?: fc.Scheduler } = {};
    let outcomes = { compacted: 0, cancelled: 0 };
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), async (s) => {
        slot.current = undefined;
        // The real checkpoint planner, held by the scheduler before it starts and before its plan is returned.
        const held = (pi: Parameters<typeof registerContextLedger>[0]) =>
          registerContextLedger(pi, {
            wrapPlanner: (real) => ({
              ...real,
              plan: async (input, signal) => {
                if (!slot.current) return real.plan(input, signal);
                await s.schedule(Promise.resolve("planner start"), "planner start");
                const plan = await real.plan(input, signal);
                return s.schedule(Promise.resolve(plan), "planner result");
              },
            }),
          });
        const h = await start({
          persist: true,
          withLedger: false,
          settings: { compaction: { keepRecentTokens: 20 } },
          extensions: [held, pacer(slot, ["session_before_compact", "session_compact"])],
        });
        await twoTasks(h);
        slot.current = s;
        const before = bytes(h.sessionFile());
        const abort = s.schedule(Promise.resolve("abort"), "abortCompaction").then(() => h.session.abortCompaction());
        const compact = h.session.compact().then(
          () => "compacted" as const,
          (error: Error) => error.message,
        );
        const result = await s.waitFor(compact);
        await s.waitFor(abort);
        await s.waitIdle();
        slot.current = undefined;

        const after = bytes(h.sessionFile());
        expectAppendOnly(before, after);
        const compactions = entriesOf(h.sessionFile()).filter((e) => e.type === "compaction");
        if (result === "compacted") {
          outcomes.compacted++;
          expect(compactions).toHaveLength(1);
          const [entry] = compactions;
          expect(entry.type === "compaction" && entry.summary.length).toBeGreaterThan(0);
          expect(entry.type === "compaction" && entry.details).toMatchObject({
            v: 1,
            strategy: "checkpoint",
            spans: expect.any(Array),
          });
          expect(entry.type === "compaction" && entry.fromHook).toBe(true);
        } else {
          outcomes.cancelled++;
          expect(result).toBe("Compaction cancelled");
          expect(compactions).toHaveLength(0);
        }
        // The in-memory branch agrees with the file.
        expect(h.session.sessionManager.getBranch().filter((e) => e.type === "compaction")).toHaveLength(
          compactions.length,
        );
        open.splice(open.indexOf(h), 1);
        await h.dispose();
      }),
      { numRuns: RUNS },
    );
    // Both endings must be reachable, or the race was never run.
    if (RUNS >= 10) {
      expect(outcomes.compacted).toBeGreaterThan(0);
      expect(outcomes.cancelled).toBeGreaterThan(0);
    }
    outcomes = { compacted: 0, cancelled: 0 };
  });

  it("two context_compact calls in one step cancel both, in any order and interleaving", async () => {
    const slot: { current?: fc.Scheduler } = {};
    const callsArb = fc.tuple(fc.nat({ max: 2 }), fc.boolean()).chain(([paces, oneFirst]) =>
      fc
        .shuffledSubarray(["A", "B", ...Array.from({ length: paces }, (_, i) => `pace${i}`)], {
          minLength: 2 + paces,
        })
        .map((order) => ({ order, oneFirst })),
    );
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), callsArb, async (s, { order }) => {
        slot.current = undefined;
        const h = await start({ persist: true, extensions: [pacer(slot, ["tool_call", "tool_result", "context"])] });
        await twoTasks(h);
        const one = userId(h, "ONE");
        const calls = order.map((name) =>
          name === "A" || name === "B"
            ? fauxToolCall(
                "context_compact",
                { target: name === "A" ? one : "root", summary: `SUM-${name}` },
                { id: `call-${name}` },
              )
            : fauxToolCall("pace", { n: Number(name.slice(4)) }, { id: `call-${name}` }),
        );
        h.script([fauxAssistantMessage(calls, { stopReason: "toolUse" }), fauxAssistantMessage("after both")]);
        slot.current = s;
        const before = bytes(h.sessionFile());
        await s.waitFor(h.session.prompt("fold twice"));
        await s.waitIdle();
        slot.current = undefined;

        expectAppendOnly(before, bytes(h.sessionFile()));
        const entries = entriesOf(h.sessionFile());
        expect(entries.filter(isFold)).toHaveLength(0);
        const notices = entries.filter(isNotice).map((e) => JSON.stringify(e));
        expect(notices.some((n) => n.includes("more than one context_compact call"))).toBe(true);
        // The later of the two calls was refused outright.
        const results = entries.flatMap((e) =>
          e.type === "message" && e.message.role === "toolResult" ? [e.message] : [],
        );
        const second = order.filter((n) => n === "A" || n === "B")[1];
        const refused = results.find((m) => m.role === "toolResult" && m.toolCallId === `call-${second}`);
        expect(refused?.role === "toolResult" && refused.isError).toBe(true);
        // Nothing was folded: the next request still carries the whole history.
        const seen = JSON.stringify(h.requests.at(-1));
        expect(seen).toContain("task ONE");
        expect(seen).toContain("OUT-TWO");
        open.splice(open.indexOf(h), 1);
        await h.dispose();
      }),
      { numRuns: RUNS },
    );
  });

  // Regression case, found while writing the race above: a first request that failed validation (here: an unknown
  // target) was never stored as pending, so the step was not voided and a second, valid request of the same step
  // committed a fold. Every compact request of a step now counts, refused or not.
  it("a refused first context_compact still voids a second one in the same step", async () => {
    const h = await start({ persist: true });
    await twoTasks(h);
    const one = userId(h, "ONE");
    h.script([
      fauxAssistantMessage(
        [
          fauxToolCall("context_compact", { target: "no-such-checkpoint", summary: "SUM-BAD" }, { id: "call-bad" }),
          fauxToolCall("context_compact", { target: one, summary: "SUM-GOOD" }, { id: "call-good" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("after both"),
    ]);
    await h.session.prompt("fold twice, first one wrong");
    expect(entriesOf(h.sessionFile()).filter(isFold)).toHaveLength(0);
  });

  it("a fold pending while the session is replaced leaves no fold entry", async () => {
    const slot: { current?: fc.Scheduler } = {};
    const probe: { boundary: boolean } = { boundary: false };
    // Loaded before our extension, so it runs (and is held) before our turn_end handler decides: once it has
    // started, the fold may be decided at any moment; before it, nothing may have been written. (Run after ours,
    // a replacement could slip in between our decision and the probe's mark and be judged "before the boundary".)
    const boundaryProbe = (pi: ExtensionAPI): void => {
      pi.on("turn_end", async () => {
        probe.boundary = true;
        await (slot.current?.schedule(Promise.resolve("turn_end"), "turn_end") ?? Promise.resolve());
        return undefined;
      });
    };
    let pendingAtReplacement = 0;
    const when = fc.constantFrom("start" as const, "requested" as const);
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.constantFrom("runtime", "dispose"),
        when,
        fc.nat({ max: 2 }),
        async (s, how, trigger, paces) => {
          slot.current = undefined;
          const h = await start({
            persist: true,
            extensionsBefore: [boundaryProbe],
            extensions: [pacer(slot, ["tool_call", "tool_result", "context"])],
          });
          await twoTasks(h);
          const one = userId(h, "ONE");
          const calls = [
            fauxToolCall("context_compact", { target: one, summary: "SUM-PENDING" }, { id: "call-fold" }),
            ...Array.from({ length: paces }, (_, i) => fauxToolCall("pace", { n: i }, { id: `pace-${i}` })),
          ];
          h.script([fauxAssistantMessage(calls, { stopReason: "toolUse" }), fauxAssistantMessage("after fold")]);
          probe.boundary = false;
          let boundaryAtReplacement = false;
          let requested = false;
          const replace = async () => {
            boundaryAtReplacement = probe.boundary;
            if (requested && !probe.boundary) pendingAtReplacement++;
            if (how === "runtime") {
              // What AgentSessionRuntime does on /new, /resume and /fork.
              await h.session.abort();
              await h.session.extensionRunner.emit({ type: "session_shutdown", reason: "new" });
            }
            h.session.dispose();
          };
          // The replacement is queued at the start, or once the fold request went through; the scheduler then
          // decides when it runs relative to the held hooks and sibling tools.
          let replaced: Promise<void> | undefined;
          const queueReplacement = () =>
            (replaced ??= s.schedule(Promise.resolve("replace session"), "replace session").then(replace));
          h.session.subscribe((event) => {
            if (event.type === "tool_execution_end" && event.toolName === "context_compact" && !event.isError) {
              requested = true;
              if (trigger === "requested") queueReplacement();
            }
          });
          slot.current = s;
          const file = h.sessionFile();
          const before = bytes(file);
          if (trigger === "start") queueReplacement();
          await s.waitFor(h.session.prompt("fold, then get replaced").catch(() => undefined));
          await s.waitFor(queueReplacement());
          await s.waitIdle();
          slot.current = undefined;

          expectAppendOnly(before, bytes(file));
          const folds = entriesOf(file).filter(isFold);
          // Before the step's boundary nothing may be written; after it the fold may already have committed.
          if (!boundaryAtReplacement) expect(folds).toHaveLength(0);
          else expect(folds.length).toBeLessThanOrEqual(1);
          // The replacement session (same file, fresh extension) agrees with the file and works.
          const next = await start({ root: h.root, sessionFile: file });
          expect(next.session.sessionManager.getBranch().filter(isFold)).toHaveLength(folds.length);
          next.script([fauxAssistantMessage("fresh")]);
          await next.session.prompt("hello again");
          if (folds.length === 0) expect(JSON.stringify(next.requests.at(-1))).toContain("OUT-TWO");
          for (const x of [next, h]) open.splice(open.indexOf(x), 1);
          await next.dispose();
          await h.dispose();
        },
      ),
      { numRuns: RUNS },
    );
    if (RUNS >= 10) expect(pendingAtReplacement, "runs where the fold was pending at replacement").toBeGreaterThan(0);
  });
});
