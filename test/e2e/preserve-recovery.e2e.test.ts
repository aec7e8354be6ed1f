// The preserve strategy's recovery paths through a real AgentSession on the faux provider, with Pi's DEFAULT settings
// plus `strategy: "preserve"`: the seed's direct-overflow certification (a length stop past the window), Pi's own
// automatic compaction kept off, transient summary errors retried by Pi's retry policy, a tool call written as text,
// and the card of a tool summary. Every provider call is recorded with its options; the tests count model calls.
import { afterEach, describe, expect, it } from "vitest";
import {
  fauxAssistantMessage,
  fauxText,
  fauxThinking,
  fauxToolCall,
  type AssistantMessage,
  type Context,
  type FauxResponseStep,
  type Message,
  type SimpleStreamOptions,
} from "@earendil-works/pi-ai";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionFactory, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { PreserveDetails } from "../../src/strategies/preserve/checkpoint.ts";
import { DELTA_ONLY_SYSTEM } from "../../src/strategies/preserve/prompt.ts";
import { reserveTokens } from "../../src/strategies/preserve/reserve.ts";
import { startHarness, type Harness, type HarnessOptions } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const textOf = (m: Message): string =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("");
const requestText = (r: readonly Message[]) => JSON.stringify(r);
const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const checkpoints = () =>
  branch().filter(
    (e): e is Extract<SessionEntry, { type: "custom_message" }> =>
      e.type === "custom_message" && e.customType === "context-ledger/preserve",
  );
const detailsOf = (n: number) => checkpoints()[n].details as PreserveDetails;
const lastText = (context: Context) => textOf(context.messages.at(-1)!);
const systemOf = (context: Context): string =>
  context.systemPrompt ?? (context.messages[0]?.role === "system" ? textOf(context.messages[0]) : "");
const isCheckpointRequest = (context: Context) =>
  lastText(context).startsWith("[Context maintenance") || lastText(context).includes("<tool-activity>");
const isNativeSummaryRequest = (context: Context) =>
  systemOf(context).startsWith("You are a context summarization assistant");

/** A file of about `tokens` tokens (chars / 4), marked so a request shows whether it is still raw. */
const file = (marker: string, tokens: number) => {
  const line = `  '${marker.toLowerCase()} padding padding padding padding',\n`;
  return `// ${marker}\nexport const data = [\n${line.repeat(Math.ceil((tokens * 4) / line.length))}];\n`;
};
const pathsOf = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag.toLowerCase()}${i + 1}.ts`);
const batchFiles = (tag: string, n: number, tokens: number) =>
  Object.fromEntries(pathsOf(tag, n).map((p) => [p, file(`MARK-${tag}`, tokens)]));
const readBatch = (
  tag: string,
  n: number,
  lead: Parameters<typeof fauxAssistantMessage>[0] = fauxText(`Reading batch ${tag}.`),
) =>
  fauxAssistantMessage(
    [
      ...(Array.isArray(lead) ? lead : [lead as never]),
      ...pathsOf(tag, n).map((path) => fauxToolCall("read", { path })),
    ],
    { stopReason: "toolUse" },
  );

const USER1 = "Find why retries loop forever.";
const USER2 = "Go on.";

interface Call {
  kind: "live" | "checkpoint" | "native-summary";
  context: Context;
  options: SimpleStreamOptions;
}
let calls: Call[] = [];
const callsOf = (kind: Call["kind"]) => calls.filter((c) => c.kind === kind);
type Reply = AssistantMessage;
const modelSummary = (_c: Context, n: number): Reply =>
  fauxAssistantMessage(
    `## Tool Context\n### User message 1\n#### Findings\n- SUMMARY-${n}\n\n#### Changes & Validation\n- (none)\n\n#### Unresolved\n- (none)`,
  );

/** Answers checkpoint requests with `summarize`, Pi's summary requests with a fixed text, the rest from `main`. */
function responder(
  main: FauxResponseStep[],
  summarize: (context: Context, n: number) => Reply = modelSummary,
): FauxResponseStep[] {
  let summaries = 0;
  const step: FauxResponseStep = async (context, options, state, model) => {
    const kind: Call["kind"] = isCheckpointRequest(context)
      ? "checkpoint"
      : isNativeSummaryRequest(context)
        ? "native-summary"
        : "live";
    calls.push({
      kind,
      context: structuredClone({ ...context, tools: undefined }),
      options: { ...(options as SimpleStreamOptions), signal: undefined },
    });
    if (kind === "checkpoint") return summarize(context, ++summaries);
    if (kind === "native-summary") return fauxAssistantMessage("## Goal\nNATIVE-SUMMARY of the early work");
    const next = main.shift();
    if (!next) throw new Error("script exhausted");
    return typeof next === "function" ? next(context, options, state, model) : next;
  };
  return Array.from({ length: 30 }, () => step);
}

/**
 * A test-only extension that plays a provider reporting `tokens` prompt tokens for every length-stopped response (the
 * faux provider counts the prompt's characters; the seed's certification has the provider report a fixed figure).
 */
const reportsPromptOnLength =
  (tokens: number): ExtensionFactory =>
  (pi) => {
    pi.on("message_end", (event) => {
      if (event.message.role !== "assistant" || event.message.stopReason !== "length") return;
      Object.assign(event.message.usage, {
        input: tokens,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: tokens + event.message.usage.output,
      });
    });
  };

async function start(options: Partial<HarnessOptions>): Promise<void> {
  calls = [];
  h = await startHarness({ ...options, ledgerSettings: { strategy: "preserve", ...options.ledgerSettings } });
}

describe("preserve direct-overflow certification (Pi's default settings, 50,000-token window)", () => {
  it("a length stop past the window: tool summary #2 is written delta-only, the dialogue, both summaries and the tail stay, no native summary", async () => {
    // The reserve at 50k is 8,886. The second step (~44k: batch A, the plan, the 40,000-character b1.ts) checkpoints
    // batch A; the third request is reported at 56,172 prompt tokens and stops at length.
    expect(reserveTokens(50_000)).toBe(8_886);
    const B1 = `// MARK-B\n${"b".repeat(39_989)}\n`;
    expect(B1.length).toBe(40_000);
    await start({
      contextWindow: 50_000,
      files: { ...batchFiles("A", 2, 12_000), "b1.ts": B1 },
      extensionsBefore: [reportsPromptOnLength(56_172)],
    });
    const compactionStarts: string[] = [];
    h!.session.subscribe((event) => {
      if (event.type === "compaction_start") compactionStarts.push(event.reason);
    });
    const tail = fauxAssistantMessage("PARTIAL-TAIL: the retry loop never reads the cap", { stopReason: "length" });
    h!.script(
      responder([
        readBatch("A", 2),
        readBatch("B", 1, [fauxThinking("PLAN ".repeat(5_600)), fauxText("Reading b1.ts.")]),
        tail,
        fauxAssistantMessage("DONE"),
      ]),
    );
    await h!.session.prompt(USER1);

    expect(checkpoints().length).toBe(2);
    expect(detailsOf(0)).toMatchObject({ checkpoint: 1, writer: "model", userOrdinals: [1] });
    expect(detailsOf(1)).toMatchObject({ checkpoint: 2, writer: "delta-only", userOrdinals: [1] });
    expect(detailsOf(1).tokens.contextBefore).toBeGreaterThanOrEqual(56_172);

    // The delta-only request: a tiny instruction and exactly the technical delta of batch B.
    const [, deltaOnly] = callsOf("checkpoint");
    expect(systemOf(deltaOnly.context)).toBe(DELTA_ONLY_SYSTEM);
    expect(deltaOnly.context.messages.filter((m) => m.role !== "system").map((m) => m.role)).toEqual(["user"]);
    const body = lastText(deltaOnly.context);
    const call = branch()
      .flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? e.message.content : []))
      .find((b) => b.type === "toolCall" && b.name === "read" && JSON.stringify(b.arguments).includes("b1.ts"));
    expect(call).toBeDefined();
    expect(body).toContain(`[tool call ${(call as { id: string }).id}] read {"path":"b1.ts"}`);
    expect(body).toContain(B1.slice(0, -1));
    expect(body).toContain("=== Work for user message 1 ===");
    for (const absent of [USER1, "SUMMARY-1", "[Tool summary #1", "PARTIAL-TAIL", "MARK-A"])
      expect(body).not.toContain(absent);
    expect(deltaOnly.options).toMatchObject({
      maxTokens: 8_000,
      disableContinuation: true,
      sessionId: h!.session.sessionManager.getSessionId(),
    });
    expect(deltaOnly.options.toolChoice).toBeUndefined();

    // Pi compacted nothing: no native summary request, no compaction entry, not even a compaction that was cancelled.
    expect(callsOf("native-summary")).toEqual([]);
    expect(branch().some((e) => e.type === "compaction")).toBe(false);
    expect(compactionStarts).toEqual([]);

    // The next request: the dialogue verbatim, both tool summaries, the length-stopped tail raw; no raw batch.
    await h!.session.prompt(USER2);
    const next = h!.requests.at(-1)!;
    const texts = next.map(textOf);
    expect(texts).toContain(USER1);
    expect(texts).toContain(USER2);
    expect(texts.filter((t) => t.startsWith("[Tool summary #1:")).length).toBe(1);
    expect(texts.filter((t) => t.startsWith("[Tool summary #2:")).length).toBe(1);
    expect(next.find((m) => m.role === "assistant" && textOf(m).startsWith("PARTIAL-TAIL"))).toBeDefined();
    for (const gone of ["MARK-A", "MARK-B", "PLAN PLAN"]) expect(requestText(next)).not.toContain(gone);
    expect(h!.session.getLastAssistantText()).toBe("DONE");
    // The session file keeps the raw tool traffic.
    expect(JSON.stringify(branch())).toContain("MARK-B");
    // Model calls: four live answers and two summary requests.
    expect(callsOf("live").length).toBe(4);
    expect(callsOf("checkpoint").length).toBe(2);
  });
});

describe("Pi's automatic compaction while preserve is active (Pi's default settings, 128,000-token window)", () => {
  it("a context between Pi's threshold (111,616) and preserve's (113,162) starts no compaction Pi would announce as cancelled", async () => {
    const WINDOW = 128_000;
    expect(WINDOW - reserveTokens(WINDOW)).toBe(113_162);
    expect(WINDOW - 16_384).toBe(111_616);
    await start({
      contextWindow: WINDOW,
      files: { ...batchFiles("A", 5, 12_400), ...batchFiles("B", 3, 12_400), "pad.ts": file("MARK-P", 9_000) },
    });
    const events: { type: string; reason?: string; aborted?: boolean }[] = [];
    h!.session.subscribe((event) => {
      if (event.type === "compaction_start") events.push({ type: event.type, reason: event.reason });
      if (event.type === "compaction_end")
        events.push({ type: event.type, reason: event.reason, aborted: event.aborted });
    });
    const settingsBefore = JSON.stringify(h!.session.settingsManager.getSettings());
    h!.script(
      responder([
        readBatch("A", 5),
        fauxAssistantMessage(
          [
            fauxText("Reading batch B."),
            ...[...pathsOf("B", 3), "pad.ts"].map((path) => fauxToolCall("read", { path })),
          ],
          { stopReason: "toolUse" },
        ),
        fauxAssistantMessage("DONE-1"),
        fauxAssistantMessage("DONE-2"),
      ]),
    );
    await h!.session.prompt(USER1);
    // The last request was between the two thresholds: Pi's automatic compaction would have started there.
    const answer = branch()
      .filter((e) => e.type === "message" && e.message.role === "assistant")
      .at(-1) as { message: AssistantMessage };
    const prompt = answer.message.usage.input + answer.message.usage.cacheRead + answer.message.usage.cacheWrite;
    expect(prompt).toBeGreaterThan(111_616);
    expect(prompt).toBeLessThanOrEqual(113_162);
    expect(h!.session.getLastAssistantText()).toBe("DONE-1");
    // No compaction started, so none was cancelled; preserve had nothing due either.
    expect(events).toEqual([]);
    expect(checkpoints()).toEqual([]);
    expect(branch().some((e) => e.type === "compaction")).toBe(false);
    expect(callsOf("live").length).toBe(3);
    expect(callsOf("checkpoint").length + callsOf("native-summary").length).toBe(0);
    // Only Pi's in-memory reading changed: the user's settings (Pi's and the settings file) are as they were.
    expect(JSON.stringify(h!.session.settingsManager.getSettings())).toBe(settingsBefore);
    expect(readFileSync(join(h!.agentDir, "settings.json"), "utf8")).toBe(
      JSON.stringify({ contextLedger: { strategy: "preserve" } }),
    );
    expect(h!.session.settingsManager.getCompactionSettings(h!.session.model).enabled).toBe(false);
    // Once preserve no longer applies (session shut down), Pi reads its own setting again.
    await h!.session.dispose();
    expect(h!.session.settingsManager.getCompactionSettings(h!.session.model).enabled).toBe(true);
  });
});

/** The 200k setup of the main preserve e2e suite: three batches of five ~12,400-token reads cross preserve's trigger. */
const WIDE = {
  contextWindow: 200_000,
  files: { ...batchFiles("A", 5, 12_400), ...batchFiles("B", 5, 12_400), ...batchFiles("C", 5, 12_400) },
};
const threeBatches = () => [readBatch("A", 5), readBatch("B", 5), readBatch("C", 5), fauxAssistantMessage("DONE-1")];

describe("preserve summary replies and cards (Pi's default settings, 200,000-token window)", () => {
  it("a tool call written as text gets the text-only retry (same prefix, tool choice none) before delta-only", async () => {
    await start(WIDE);
    const written = '<tool_call>{"name":"read","arguments":{"path":"a1.ts"}}</tool_call>';
    h!.script(
      responder(threeBatches(), (context, n) => (n === 1 ? fauxAssistantMessage(written) : modelSummary(context, n))),
    );
    await h!.session.prompt(USER1);
    const [first, retry] = callsOf("checkpoint");
    expect(callsOf("checkpoint").length).toBe(2);
    expect(first.options.toolChoice).toBeUndefined();
    expect(retry.options.toolChoice).toBe("none");
    expect(JSON.stringify(retry.context.messages)).toBe(JSON.stringify(first.context.messages));
    expect(systemOf(retry.context)).not.toBe(DELTA_ONLY_SYSTEM);
    expect(detailsOf(0).writer).toBe("model");
    expect(checkpoints()[0].content).toContain("SUMMARY-2");
    expect(checkpoints()[0].content).not.toContain("tool_call");
  });

  it("a tool summary's card shows its full accounting and the summary, collapsed or expanded", async () => {
    await start(WIDE);
    h!.script(responder(threeBatches()));
    await h!.session.prompt(USER1);
    const [entry] = checkpoints();
    const runner = (
      h!.session as unknown as {
        _extensionRunner: {
          getMessageRenderer: (t: string) => (m: unknown, o: unknown, th: unknown) => { render(w: number): string[] };
        };
      }
    )._extensionRunner;
    const theme = { fg: (_c: string, t: string) => t, bg: (_c: string, t: string) => t, bold: (t: string) => t };
    const message = {
      role: "custom",
      customType: entry.customType,
      content: entry.content,
      display: true,
      details: entry.details,
      timestamp: 0,
    };
    const render = (expanded: boolean) =>
      runner.getMessageRenderer(entry.customType)(message, { expanded }, theme).render(200).join("\n");
    const collapsed = render(false);
    expect(collapsed).toBe(render(true));
    for (const line of [
      /context: ~[\d,]+ tok → ~[\d,]+ tok, headroom ~[\d,]+ tok/,
      /compacted: ~[\d,]+ tok \([\d.]+x\)/,
      /tool results: ~[\d,]+ tok/,
      /raw tail kept: ~[\d,]+ tok/,
      /user messages: ~/,
      /tool summaries: 1 total/,
      /covered user messages: 1/,
      /SUMMARY-1/,
    ])
      expect(collapsed).toMatch(line);
  });
});

describe("preserve summary requests under Pi's retry policy (200,000-token window)", () => {
  const overloaded = () =>
    fauxAssistantMessage("", { stopReason: "error", errorMessage: "529 overloaded_error: Overloaded" });
  /** The waits the extension asked for; none really sleeps. */
  let waits: number[] = [];
  const noSleep = { sleep: async (ms: number) => void waits.push(ms) };
  const notices = () => h!.notices.map((n) => n.message);

  it("with Pi's defaults a transient error is retried after Pi's backoff, on the same cache-friendly request, and the retry is announced", async () => {
    waits = [];
    await start({ ...WIDE, ledgerOptions: noSleep });
    h!.script(responder(threeBatches(), (context, n) => (n === 1 ? overloaded() : modelSummary(context, n))));
    await h!.session.prompt(USER1);
    expect(waits).toEqual([2_000]);
    const [first, retry] = callsOf("checkpoint");
    expect(callsOf("checkpoint").length).toBe(2);
    expect(JSON.stringify(retry.context.messages)).toBe(JSON.stringify(first.context.messages));
    expect(retry.options).toEqual(first.options);
    expect(systemOf(retry.context)).not.toBe(DELTA_ONLY_SYSTEM);
    expect(detailsOf(0).writer).toBe("model");
    expect(notices().filter((m) => /retry \d\/\d/.test(m))).toEqual([
      "context-ledger: preserve: the tool summary request failed (529 overloaded_error: Overloaded); retry 1/3 in 2.0s.",
    ]);
    expect(notices().some((m) => /delta-only/.test(m))).toBe(false);
  });

  it("follows settings.retry (maxRetries, baseDelayMs, maxAgentDelayMs), then announces the switch to delta-only", async () => {
    waits = [];
    await start({
      ...WIDE,
      ledgerOptions: noSleep,
      settings: { retry: { maxRetries: 2, baseDelayMs: 40_000, maxAgentDelayMs: 50_000 } },
    });
    h!.script(responder(threeBatches(), (context, n) => (n <= 3 ? overloaded() : modelSummary(context, n))));
    await h!.session.prompt(USER1);
    expect(waits).toEqual([40_000, 50_000]);
    const requests = callsOf("checkpoint");
    expect(requests.length).toBe(4);
    expect(requests.slice(0, 3).every((c) => systemOf(c.context) !== DELTA_ONLY_SYSTEM)).toBe(true);
    expect(systemOf(requests[3].context)).toBe(DELTA_ONLY_SYSTEM);
    expect(detailsOf(0).writer).toBe("delta-only");
    const told = notices();
    expect(told.filter((m) => /retry \d\/2 in/.test(m)).map((m) => /retry (\d\/2 in [\d.]+s)/.exec(m)![1])).toEqual([
      "1/2 in 40.0s",
      "2/2 in 50.0s",
    ]);
    expect(
      told.some((m) =>
        /cache-friendly summary request failed \(529 overloaded_error: Overloaded\); writing tool summary #1 from its tool activity only \(delta-only\)/.test(
          m,
        ),
      ),
    ).toBe(true);
  });

  it("with settings.retry.enabled false nothing is retried; a non-transient error is never retried", async () => {
    waits = [];
    await start({ ...WIDE, ledgerOptions: noSleep, settings: { retry: { enabled: false } } });
    h!.script(responder(threeBatches(), (context, n) => (n === 1 ? overloaded() : modelSummary(context, n))));
    await h!.session.prompt(USER1);
    expect(waits).toEqual([]);
    expect(callsOf("checkpoint").length).toBe(2);
    expect(detailsOf(0).writer).toBe("delta-only");
    await h!.dispose();
    waits = [];
    await start({ ...WIDE, ledgerOptions: noSleep });
    h!.script(
      responder(threeBatches(), (context, n) =>
        n === 1
          ? fauxAssistantMessage("", { stopReason: "error", errorMessage: "401 invalid x-api-key" })
          : modelSummary(context, n),
      ),
    );
    await h!.session.prompt(USER1);
    expect(waits).toEqual([]);
    expect(callsOf("checkpoint").length).toBe(2);
    expect(detailsOf(0).writer).toBe("delta-only");
  });
});
