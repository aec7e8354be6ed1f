import { describe, expect, it } from "vitest";
import type { AssistantMessage, ToolCall, ToolResultMessage } from "@earendil-works/pi-ai";
import { runLookup, type LookupModel, type LookupRequest } from "../../src/recall/lookup.ts";
import { recallLimits, type RecallSettings } from "../../src/recall/settings.ts";
import { buildTranscript } from "../../src/recall/transcript.ts";
import { Branch, toolCall } from "./fixtures.ts";

const USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

function reply(content: AssistantMessage["content"] | string, extra: Partial<AssistantMessage> = {}): AssistantMessage {
  const blocks = typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
  return {
    role: "assistant",
    content: blocks,
    api: "faux",
    provider: "faux",
    model: "m",
    usage: USAGE,
    stopReason: blocks.some((b) => b.type === "toolCall") ? "toolUse" : "stop",
    timestamp: 0,
    ...extra,
  };
}

let seq = 0;
const call = (name: string, args: Record<string, unknown>): ToolCall => toolCall(name, args, `t${++seq}`);

/** A model driven by a function of the request; records every request. */
function scripted(fn: (req: LookupRequest, n: number) => AssistantMessage | Promise<AssistantMessage>) {
  const requests: LookupRequest[] = [];
  const model: LookupModel = async (req) => {
    requests.push(structuredClone(req));
    return fn(req, requests.length);
  };
  return { model, requests };
}

/** The last tool result the subagent received, as text. */
function lastResult(req: LookupRequest): ToolResultMessage | undefined {
  return [...req.messages].reverse().find((m): m is ToolResultMessage => m.role === "toolResult");
}
const resultText = (m: ToolResultMessage | undefined) => (m?.content[0]?.type === "text" ? m.content[0].text : "");

function history() {
  const b = new Branch();
  b.user("the build broke");
  b.assistant([toolCall("bash", { command: "npm run build" }, "c1")]);
  b.toolResult("c1", "bash", "src/auth.ts(12,5): error TS2304: Cannot find name 'tokn'.");
  for (let i = 0; i < 40; i++) b.toolResult(`n${i}`, "bash", `noise line ${i} needle`);
  b.assistant("fixed");
  return b;
}

const run = (fn: Parameters<typeof scripted>[0], settings: Partial<RecallSettings> = {}, b = history()) => {
  const s = scripted(fn);
  const promise = runLookup({
    question: "What exact build error did we see?",
    index: buildTranscript(b.entries),
    callModel: s.model,
    limits: recallLimits(settings),
    now: 1,
  });
  return { ...s, promise };
};

describe("context_lookup subagent loop", () => {
  it("searches with its own tools and returns findings with entry references", async () => {
    const { promise, requests } = run((req, n) => {
      if (n === 1) return reply([call("grep", { pattern: "error TS\\d+" })]);
      const found = resultText(lastResult(req));
      expect(found).toContain("── entry e3");
      return reply("The build failed with `error TS2304: Cannot find name 'tokn'.` (ENTRY e3).");
    });
    const outcome = await promise;
    expect(outcome).toMatchObject({
      complete: true,
      end: "answered",
      writeUp: "none",
      turnsUsed: 1,
      modelCalls: 2,
      toolCalls: 1,
      references: ["e3"],
    });
    expect(outcome.text).toContain("TS2304");
    // The raw search output stays in the subagent: the answer is only the model's own text.
    expect(outcome.text).not.toContain("── entry");
    expect(requests[0].tools!.map((t) => t.name)).toEqual(["list_entries", "grep", "show_entry"]);
    expect(requests[0].messages[0].content).toContain("Question: What exact build error did we see?");
  });

  it("does not spend the turn budget on page follows, but spends it on replayed cursors and new queries", async () => {
    let cursor: string | undefined;
    let firstCursor: string | undefined;
    const { promise } = run(
      (req, n) => {
        const previous = lastResult(req);
        const next = previous ? /cursor "([^"]+)"/.exec(resultText(previous))?.[1] : undefined;
        if (n === 1) return reply([call("grep", { pattern: "needle", literal: true })]);
        if (n <= 4) {
          cursor = next;
          firstCursor ??= next;
          return reply([call("grep", { pattern: "needle", literal: true, cursor })]); // follows: free
        }
        if (n === 5) return reply([call("grep", { pattern: "needle", literal: true, cursor: firstCursor })]); // replay: spends
        if (n === 6) return reply([call("show_entry", { id: "e3" })]); // new query: spends
        return reply("done: e3");
      },
      { grepMaxResults: 8 },
    );
    const outcome = await promise;
    expect(outcome).toMatchObject({ complete: true, turnsUsed: 3, modelCalls: 7, toolCalls: 6 });
  });

  it("mixed turns spend the budget when any call in them is substantive", async () => {
    const { promise } = run((req, n) => {
      if (n === 1) return reply([call("grep", { pattern: "needle", literal: true })]);
      if (n === 2) {
        const cursor = /cursor "([^"]+)"/.exec(resultText(lastResult(req)))![1];
        return reply([call("grep", { pattern: "needle", literal: true, cursor }), call("list_entries", {})]);
      }
      return reply("ok e3");
    });
    expect(await promise).toMatchObject({ turnsUsed: 2, modelCalls: 3 });
  });

  it("writes up partial findings without tools when the turn budget runs out", async () => {
    const { promise, requests } = run(
      (req, n) => {
        if (req.tools)
          return reply([
            { type: "text", text: `still looking (turn ${n}), saw e3` },
            call("grep", { pattern: `pattern-${n}` }),
          ]);
        return reply("Partial answer: the error was TS2304 in ENTRY e3; the fix was not found.");
      },
      { lookupTurnBudget: 3 },
    );
    const outcome = await promise;
    expect(outcome).toMatchObject({ complete: false, end: "turnBudget", writeUp: "ok", turnsUsed: 3, modelCalls: 4 });
    expect(outcome.text).toContain("Partial answer: the error was TS2304");
    expect(outcome.text).toContain("context_grep");
    const last = requests[requests.length - 1];
    expect(last.tools).toBeUndefined();
    expect(last.messages[last.messages.length - 1]).toMatchObject({
      role: "user",
      content: expect.stringContaining("tools are no longer available"),
    });
  });

  it("stops at three times the turn budget in model calls even when every turn is a free page follow", async () => {
    const b = new Branch();
    b.user("start");
    b.toolResult("big", "bash", Array.from({ length: 400 }, (_, i) => `needle ${i}`).join("\n"));
    const { promise } = run(
      (req, n) => {
        if (!req.tools) return reply("write-up after the ceiling");
        if (n === 1) return reply([call("grep", { pattern: "needle", literal: true })]);
        const cursor = /cursor "([^"]+)"/.exec(resultText(lastResult(req)))![1];
        return reply([call("grep", { pattern: "needle", literal: true, cursor })]);
      },
      { lookupTurnBudget: 2 },
      b,
    );
    const outcome = await promise;
    expect(outcome).toMatchObject({ end: "callCeiling", writeUp: "ok", turnsUsed: 1, modelCalls: 7, complete: false });
    expect(outcome.text).toContain("model-call ceiling (6)");
  });

  it("labels the latest text incomplete when the write-up fails", async () => {
    const { promise } = run(
      async (req, n) => {
        if (!req.tools) throw new Error("provider overloaded");
        return reply([{ type: "text", text: `LATEST FINDING ${n}: TS2304 in e3` }, call("grep", { pattern: `p${n}` })]);
      },
      { lookupTurnBudget: 2 },
    );
    const outcome = await promise;
    expect(outcome).toMatchObject({
      complete: false,
      end: "turnBudget",
      writeUp: "failed",
      error: "provider overloaded",
    });
    expect(outcome.text.startsWith("[incomplete]")).toBe(true);
    expect(outcome.text).toContain("LATEST FINDING 2: TS2304 in e3");
    expect(outcome.text).toContain("context_grep");
    expect(outcome.references).toEqual(["e3"]);
  });

  it("an error reply from the model ends the search with an incomplete result, not an exception", async () => {
    const { promise } = run(() => reply([], { stopReason: "error", errorMessage: "rate limited" }));
    const outcome = await promise;
    expect(outcome).toMatchObject({ complete: false, end: "modelError", error: "rate limited", modelCalls: 1 });
    expect(outcome.text).toMatch(/^\[incomplete\]/);
  });

  it("rejects when aborted", async () => {
    const controller = new AbortController();
    const s = scripted(() => {
      controller.abort();
      throw new Error("aborted by user");
    });
    await expect(
      runLookup({
        question: "q",
        index: buildTranscript(history().entries),
        callModel: s.model,
        limits: recallLimits({}),
        signal: controller.signal,
        now: 1,
      }),
    ).rejects.toThrow("aborted");
  });

  it("bounds each tool result in the subagent and the final answer", async () => {
    const b = new Branch();
    b.toolResult("big", "read", Array.from({ length: 200 }, (_, i) => `line ${i} ${"z".repeat(100)}`).join("\n"));
    const { promise, requests } = run(
      (_req, n) => {
        if (n === 1) return reply([call("show_entry", { id: "e1" })]);
        return reply("A".repeat(5_000));
      },
      { lookupResultChars: 1_000, lookupAnswerChars: 2_000, grepMaxChars: 50_000 },
      b,
    );
    const outcome = await promise;
    const shown = resultText(lastResult(requests[1]));
    expect(shown.length).toBeLessThanOrEqual(1_000 + 40);
    expect(shown).toContain("[cut at 1000 characters]");
    expect(outcome.text.length).toBeLessThanOrEqual(2_000 + 40);
  });

  it("returns tool errors to the subagent instead of failing", async () => {
    const { promise, requests } = run((_req, n) => {
      if (n === 1)
        return reply([call("grep", { pattern: "(a)\\1" }), call("show_entry", { id: "nope" }), call("rm", {})]);
      return reply("nothing found");
    });
    await promise;
    const results = requests[1].messages.filter((m): m is ToolResultMessage => m.role === "toolResult");
    expect(results.map((r) => r.isError)).toEqual([true, true, true]);
    expect(resultText(results[0])).toContain("pattern refused");
  });
});
