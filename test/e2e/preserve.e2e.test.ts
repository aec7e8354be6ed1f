// The preserve strategy end to end: a real AgentSession on the faux provider with Pi's DEFAULT compaction settings
// (nothing tuned), strategy `preserve`, and windows where the reserve curve triggers naturally. Assertions read what
// the provider was actually sent: messages and request options, and count model calls.
import { afterEach, describe, expect, it } from "vitest";
import { convertToLlm } from "@earendil-works/pi-coding-agent";
import {
  fauxAssistantMessage,
  fauxText,
  fauxThinking,
  fauxToolCall,
  type Context,
  type FauxResponseStep,
  type Message,
  type SimpleStreamOptions,
} from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { projectBranch } from "../../src/projection/project.ts";
import type { PreserveDetails } from "../../src/strategies/preserve/checkpoint.ts";
import { DELTA_ONLY_SYSTEM } from "../../src/strategies/preserve/prompt.ts";
import { summaryReport } from "../../src/strategies/preserve/report.ts";
import { reserveTokens } from "../../src/strategies/preserve/reserve.ts";
import { captureNotices, startHarness, type Harness, type HarnessOptions } from "./harness.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";

let h: Harness | undefined;
let restoreNotices: (() => void) | undefined;
afterEach(async () => {
  restoreNotices?.();
  restoreNotices = undefined;
  await h?.dispose();
  h = undefined;
});

/** A common large-model window; with Pi's defaults preserve's trigger (181,177) comes before Pi's own (183,616). */
const WINDOW = 200_000;
/** A file of about `tokens` tokens (chars / 4), marked so a request shows whether it is still raw. Pi's read tool
 * returns at most 50 KB, so large tool traffic comes as batches of parallel reads. */
const file = (marker: string, tokens: number) => {
  const line = `  '${marker.toLowerCase()} padding padding padding padding',\n`;
  return `// ${marker}\nexport const data = [\n${line.repeat(Math.ceil((tokens * 4) / line.length))}];\n`;
};
/** Paths of batch `tag`: `<tag>1.ts` … `<tag>n.ts`. */
const pathsOf = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag.toLowerCase()}${i + 1}.ts`);
/** `n` files of `tokens` each for batch `tag`, all carrying the marker MARK-<tag>. */
const batchFiles = (tag: string, n: number, tokens: number) =>
  Object.fromEntries(pathsOf(tag, n).map((p) => [p, file(`MARK-${tag}`, tokens)]));
/** Five reads of ~12,400 tokens: ~62k per batch, so three batches cross preserve's trigger at 200k. */
const FILES: Record<string, string> = {
  ...batchFiles("A", 5, 12_400),
  ...batchFiles("B", 5, 12_400),
  ...batchFiles("C", 5, 12_400),
  ...batchFiles("D", 5, 12_400),
  ...batchFiles("E", 5, 12_400),
  ...batchFiles("H", 12, 12_400),
  "small.ts": file("MARK-S", 300),
};
const USER1 = "Find why retries loop forever.  Keep my wording: ünïcødé ✓ ";
const USER2 = "Now check d.ts as well.";

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
const isCheckpointRequest = (context: Context) =>
  lastText(context).startsWith("[Context maintenance") || lastText(context).includes("<tool-activity>");
/** The request's system prompt, whether given as `systemPrompt` or as the leading system message. */
const systemOf = (context: Context): string =>
  context.systemPrompt ?? (context.messages[0]?.role === "system" ? textOf(context.messages[0]) : "");
const isNativeSummaryRequest = (context: Context) =>
  systemOf(context).startsWith("You are a context summarization assistant");
const cpIndex = (r: readonly Message[], n: number) => r.findIndex((m) => textOf(m).startsWith(`[Tool summary #${n}:`));

/** One provider call as the faux provider saw it. */
interface Call {
  kind: "live" | "checkpoint" | "native-summary";
  model: string;
  context: Context;
  options: SimpleStreamOptions;
}
let calls: Call[] = [];
const callsOf = (kind: Call["kind"]) => calls.filter((c) => c.kind === kind);

type Reply = ReturnType<typeof fauxAssistantMessage>;

/** Answers checkpoint requests with `summarize`, Pi's native summary requests with a fixed summary, the rest from `main`. */
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
      model: model.id,
      context: structuredClone({ ...context, tools: undefined }),
      options: { ...(options as SimpleStreamOptions) },
    });
    if (kind === "checkpoint") return summarize(context, ++summaries);
    if (kind === "native-summary") return fauxAssistantMessage("## Goal\nNATIVE-SUMMARY of the early work");
    const next = main.shift();
    if (!next) throw new Error("script exhausted");
    return typeof next === "function" ? next(context, options, state, model) : next;
  };
  return Array.from({ length: 30 }, () => step);
}

const modelSummary = (_c: Context, n: number) =>
  fauxAssistantMessage(
    `## Tool Context\n### User message ${n}\n#### Findings\n- SUMMARY-${n}\n\n#### Changes & Validation\n- (none)\n\n#### Unresolved\n- (none)`,
  );

const read = (path: string) =>
  fauxAssistantMessage([fauxText(`Reading ${path}.`), fauxToolCall("read", { path })], { stopReason: "toolUse" });
/** One assistant turn reading every file of batch `tag` in parallel. */
const readBatch = (tag: string, n = 5) =>
  fauxAssistantMessage(
    [fauxText(`Reading batch ${tag}.`), ...pathsOf(tag, n).map((path) => fauxToolCall("read", { path }))],
    { stopReason: "toolUse" },
  );
/** The usual first request: three batches, then an answer. */
const threeBatches = () => [readBatch("A"), readBatch("B"), readBatch("C"), fauxAssistantMessage("DONE-1")];

async function start(options: Partial<HarnessOptions> = {}): Promise<void> {
  calls = [];
  h = await startHarness({
    files: FILES,
    contextWindow: WINDOW,
    ...options,
    ledgerSettings: { strategy: "preserve", ...options.ledgerSettings },
  });
}

describe("preserve e2e (Pi's default settings)", () => {
  it("keeps the dialogue verbatim, replaces older tool traffic with append-only tool summaries and keeps tool summary #1 byte-stable", async () => {
    expect(reserveTokens(WINDOW)).toBe(18_823);
    await start();
    const compactionEvents: { type: string; reason?: string }[] = [];
    h!.session.subscribe((event) => {
      if (event.type === "compaction_start" || event.type === "compaction_end") compactionEvents.push(event);
    });
    h!.script(responder([...threeBatches(), readBatch("D"), readBatch("E"), fauxAssistantMessage("DONE-2")]));
    await h!.session.prompt(USER1);

    expect(checkpoints().length).toBe(1);
    const d1 = detailsOf(0);
    expect(d1).toMatchObject({
      v: 1,
      strategy: "preserve",
      checkpoint: 1,
      writer: "model",
      userOrdinals: [1],
      range: { afterId: null, keepDialogue: true },
    });
    expect(d1.tokens.hidden).toBeGreaterThan(120_000);
    expect(d1.tokens.checkpoint).toBeLessThan(200);

    // The summary request continued the live conversation: same messages as the previous request, one ask appended.
    const summaryAt = calls.findIndex((c) => c.kind === "checkpoint");
    expect(summaryAt).toBeGreaterThan(0);
    expect(calls[summaryAt - 1].kind).toBe("live");
    expect(JSON.stringify(calls[summaryAt].context.messages.slice(0, -1))).toBe(
      JSON.stringify(calls[summaryAt - 1].context.messages),
    );
    expect(lastText(calls[summaryAt].context)).toContain("user message(s) 1");

    // The next live request: user message verbatim, checkpoint, current batch raw, no older tool result.
    const after1 = calls[summaryAt + 1].context.messages;
    expect(after1[0].role).toBe("system");
    expect(textOf(after1[1])).toBe(USER1);
    expect(cpIndex(after1, 1)).toBe(2);
    expect(requestText(after1)).toContain("MARK-C");
    expect(requestText(after1)).not.toContain("MARK-A");
    expect(requestText(after1)).not.toContain("MARK-B");

    await h!.session.prompt(USER2);
    expect(checkpoints().length).toBe(2);
    expect(detailsOf(1).range.afterId).toBe(d1.range.throughId);
    const last = h!.requests.at(-1)!;
    const texts = last.map(textOf);
    expect(texts).toContain(USER1);
    expect(texts).toContain(USER2);
    expect(texts).toContain("DONE-1");
    expect(requestText(last)).toContain("MARK-E");
    for (const gone of ["MARK-A", "MARK-B", "MARK-C", "MARK-D"]) expect(requestText(last)).not.toContain(gone);
    // Invariant 5 on real provider payloads: everything up to checkpoint #1 is byte-identical after checkpoint #2.
    const k = cpIndex(after1, 1);
    expect(cpIndex(last, 1)).toBe(k);
    expect(JSON.stringify(last.slice(0, k + 1))).toBe(JSON.stringify(after1.slice(0, k + 1)));
    expect(cpIndex(last, 2)).toBeGreaterThan(k);

    // Model calls: 7 answers the user caused plus one checkpoint request per checkpoint; no Pi summary.
    expect(callsOf("live").length).toBe(7);
    expect(callsOf("checkpoint").length).toBe(2);
    expect(callsOf("native-summary").length).toBe(0);
    expect(branch().some((e) => e.type === "compaction")).toBe(false);
    expect(compactionEvents.filter((e) => e.type === "compaction_start" && e.reason !== "threshold")).toEqual([]);
  });

  it("the checkpoint request carries the live request's cache-relevant options", async () => {
    await start({
      reasoning: true,
      settings: {
        defaultThinkingLevel: "high",
        transport: "websocket",
        retry: { provider: { timeoutMs: 45_000, maxRetries: 2 } },
        websocketConnectTimeoutMs: 7_000,
      },
    });
    h!.script(responder(threeBatches()));
    await h!.session.prompt(USER1);
    const at = calls.findIndex((c) => c.kind === "checkpoint");
    const live = calls[at - 1].options;
    const checkpoint = calls[at].options;
    const KEYS = [
      "sessionId",
      "reasoning",
      "cacheRetention",
      "transport",
      "timeoutMs",
      "maxRetries",
      "maxRetryDelayMs",
      "websocketConnectTimeoutMs",
      "thinkingBudgets",
      "toolChoice",
    ] as const;
    const pick = (o: SimpleStreamOptions) => Object.fromEntries(KEYS.map((key) => [key, o[key]]));
    expect(live).toMatchObject({
      sessionId: h!.session.sessionManager.getSessionId(),
      reasoning: "high",
      transport: "websocket",
      timeoutMs: 45_000,
      maxRetries: 2,
    });
    expect(pick(checkpoint)).toEqual(pick(live));
    // Its own output cap, and no server-side continuation state replaced by this side request.
    expect(checkpoint.maxTokens).toBeGreaterThan(0);
    expect(checkpoint.maxTokens).toBeLessThanOrEqual(8_000);
    expect(checkpoint.disableContinuation).toBe(true);
  });

  it("global settings choose the reasoning effort and cache retention of checkpoint requests", async () => {
    await start({
      reasoning: true,
      settings: { defaultThinkingLevel: "high" },
      ledgerSettings: { preserve: { reasoningEffort: "low", cacheRetention: "long" } },
    });
    h!.script(responder(threeBatches()));
    await h!.session.prompt(USER1);
    const at = calls.findIndex((c) => c.kind === "checkpoint");
    expect(calls[at - 1].options).toMatchObject({ reasoning: "high" });
    expect(calls[at - 1].options.cacheRetention).toBeUndefined();
    expect(calls[at].options).toMatchObject({
      reasoning: "low",
      cacheRetention: "long",
      sessionId: calls[at - 1].options.sessionId,
    });
  });

  it("a summary model other than the live one skips the cached continuation and writes from the delta only", async () => {
    await start({ extraModels: ["faux-small"], ledgerSettings: { preserve: { summaryModel: "faux/faux-small" } } });
    h!.script(responder(threeBatches()));
    await h!.session.prompt(USER1);
    const [request] = callsOf("checkpoint");
    expect(callsOf("checkpoint").length).toBe(1);
    expect(request.model).toBe("faux-small");
    expect(systemOf(request.context)).toBe(DELTA_ONLY_SYSTEM);
    expect(detailsOf(0).writer).toBe("delta-only");
    expect(callsOf("live").every((c) => c.model === "faux-1")).toBe(true);
  });

  it("an unknown summary model warns, naming the setting, and the active model writes", async () => {
    await start({ ledgerSettings: { preserve: { summaryModel: "nowhere/none" } } });
    const { notices, restore } = captureNotices(h!);
    restoreNotices = restore;
    h!.script(responder(threeBatches()));
    await h!.session.prompt(USER1);
    expect(notices.map((n) => n.message).join("\n")).toMatch(
      /contextLedger\.preserve\.summaryModel "nowhere\/none" is not available/,
    );
    expect(detailsOf(0).writer).toBe("model");
  });

  it("retries a summary that stopped at length once as delta-only, with exactly the technical delta", async () => {
    await start();
    const summary = (context: Context, n: number) =>
      n === 1
        ? fauxAssistantMessage("## Tool Context\n### User message 1\n- cut", { stopReason: "length" })
        : modelSummary(context, 1);
    h!.script(responder(threeBatches(), summary));
    await h!.session.prompt(USER1);
    expect(detailsOf(0).writer).toBe("delta-only");
    const deltaOnly = callsOf("checkpoint")[1].context;
    // A tiny system prompt and one user message: nothing of the live conversation.
    expect(systemOf(deltaOnly)).toBe(DELTA_ONLY_SYSTEM);
    expect(deltaOnly.messages.filter((m) => m.role !== "system").map((m) => m.role)).toEqual(["user"]);
    const body = lastText(deltaOnly);
    expect(body).toMatch(/\[tool call [^\]]+\] read \{"path":"a1\.ts"\}/);
    expect(body).toContain(FILES["a1.ts"]);
    expect(body).toContain("=== Work for user message 1 ===");
    expect(body).not.toContain(USER1.trim());
    expect(body).not.toContain("MARK-C"); // the current batch stays raw
    expect(callsOf("checkpoint").length).toBe(2);
  });

  it("a reply that calls a tool gets one text-only retry (same prefix, tool choice none) before delta-only", async () => {
    await start();
    const summary = (context: Context, n: number) =>
      n === 1
        ? fauxAssistantMessage([fauxToolCall("read", { path: "a1.ts" })], { stopReason: "toolUse" })
        : modelSummary(context, 1);
    h!.script(responder(threeBatches(), summary));
    await h!.session.prompt(USER1);
    const [first, retry] = callsOf("checkpoint");
    expect(callsOf("checkpoint").length).toBe(2);
    expect(first.options.toolChoice).toBeUndefined();
    expect(retry.options.toolChoice).toBe("none");
    expect(JSON.stringify(retry.context.messages)).toBe(JSON.stringify(first.context.messages));
    expect(detailsOf(0).writer).toBe("model");
  });

  it("a reply without visible text is retried once, then the delta-only request writes", async () => {
    await start();
    const summary = (context: Context, n: number) =>
      n <= 2 ? fauxAssistantMessage([fauxThinking("thinking only")]) : modelSummary(context, 1);
    h!.script(responder(threeBatches(), summary));
    await h!.session.prompt(USER1);
    const requests = callsOf("checkpoint");
    expect(requests.length).toBe(3);
    expect(requests[1].options.toolChoice).toBe("none");
    expect(systemOf(requests[2].context)).toBe(DELTA_ONLY_SYSTEM);
    expect(detailsOf(0).writer).toBe("delta-only");
  });

  it("rejects a reply larger than the output cap (1 MB under the right headings) and falls back", async () => {
    await start();
    const huge = `## Tool Context\n### User message 1\n#### Findings\n${"- padding padding padding padding\n".repeat(32_000)}`;
    expect(huge.length).toBeGreaterThan(1_000_000);
    const summary = (context: Context, n: number) => (n === 1 ? fauxAssistantMessage(huge) : modelSummary(context, 1));
    h!.script(responder(threeBatches(), summary));
    await h!.session.prompt(USER1);
    expect(detailsOf(0).writer).toBe("delta-only");
    expect(checkpoints()[0].content.length).toBeLessThan(1_000);
    expect(callsOf("checkpoint").length).toBe(2);
  });

  it("falls back to the extractive writer when the model fails twice", async () => {
    await start();
    const failing = () => fauxAssistantMessage("", { stopReason: "error", errorMessage: "provider down" });
    h!.script(responder(threeBatches(), failing));
    await h!.session.prompt(USER1);
    const [cp] = checkpoints();
    expect((cp.details as PreserveDetails).writer).toBe("extractive");
    expect(cp.content).toContain("### User message 1");
    expect(cp.content).toContain("Read `a1.ts`");
    expect(requestText(h!.requests.at(-1)!)).not.toContain("MARK-A");
    expect(callsOf("checkpoint").length).toBe(2);
  });

  it("a unit too large for any summary request is written without a model, and the user is told", async () => {
    await start();
    const { notices, restore } = captureNotices(h!);
    restoreNotices = restore;
    // The cached continuation fails; the delta-only request cannot hold the one 12-read step (bytes / 3 above its budget).
    const failing = () => fauxAssistantMessage("", { stopReason: "error", errorMessage: "provider down" });
    h!.script(responder([readBatch("H", 12), readBatch("D", 4), fauxAssistantMessage("DONE-1")], failing));
    await h!.session.prompt(USER1);
    const [cp] = checkpoints();
    const details = cp.details as PreserveDetails;
    expect(details.writer).toBe("extractive");
    expect(cp.content).toContain("Read `h1.ts`");
    expect(callsOf("checkpoint").length).toBe(1);
    expect(requestText(h!.requests.at(-1)!)).not.toContain("MARK-H");
    // The warning reaches the UI and stays on the card.
    const warning = notices.find((n) => n.type === "warning" && /larger than any summary request/.test(n.message));
    expect(warning?.message).toMatch(/written without a model/);
    expect(details.note).toMatch(/larger than any summary request/);
    expect(summaryReport(details)).toMatch(/^warning: one tool step/m);
  });

  it("manual /compact on a short session writes a checkpoint and ends as a success", async () => {
    await start();
    const ends: { aborted: boolean; errorMessage?: string; summary?: string }[] = [];
    h!.session.subscribe((event) => {
      if (event.type === "compaction_end")
        ends.push({ aborted: event.aborted, errorMessage: event.errorMessage, summary: event.result?.summary });
    });
    h!.script(responder([read("small.ts"), fauxAssistantMessage("DONE-1"), fauxAssistantMessage("after")]));
    await h!.session.prompt(USER1);
    expect(checkpoints().length).toBe(0);
    const result = await h!.session.compact();
    expect(checkpoints().length).toBe(1);
    expect(detailsOf(0)).toMatchObject({ checkpoint: 1, writer: "model" });
    // Pi reports a success: no "Compaction cancelled", no error; its card shows the checkpoint.
    expect(ends).toEqual([{ aborted: false, errorMessage: undefined, summary: checkpoints()[0].content }]);
    expect(result.summary).toBe(checkpoints()[0].content);
    expect(branch().at(-1)).toMatchObject({
      type: "compaction",
      details: { v: 1, strategy: "preserve", checkpoint: 1 },
    });
    await h!.session.prompt("continue");
    const last = h!.requests.at(-1)!;
    expect(last.slice(1).map((m) => m.role)).toEqual(["user", "assistant", "user", "user"]);
    expect(last.map(textOf)).toEqual(expect.arrayContaining([USER1, "DONE-1", "continue"]));
    expect(requestText(last)).not.toContain("MARK-S");
    expect(cpIndex(last, 1)).toBe(3);
    // One checkpoint request for the /compact, nothing else; Pi wrote no summary of its own.
    expect(callsOf("checkpoint").length).toBe(1);
    expect(callsOf("native-summary").length).toBe(0);
    // The live request equals the pure projection of the branch it was sent from.
    const sentFrom = projectBranch(branch().slice(0, -1), LEDGER_FACTS).messages.filter((m) => m.role !== "system");
    expect(JSON.stringify(last.slice(1))).toBe(JSON.stringify(convertToLlm(sentFrom)));
  });

  it("custom instructions given to /compact reach the checkpoint request as its focus", async () => {
    await start();
    h!.script(responder([read("small.ts"), fauxAssistantMessage("DONE-1")]));
    await h!.session.prompt(USER1);
    await h!.session.compact("Focus on the retry cap and the failing test");
    const [request] = callsOf("checkpoint");
    expect(lastText(request.context)).toMatch(
      /Focus requested by the user for this tool summary.*: Focus on the retry cap and the failing test/,
    );
  });

  it("manual /compact with no raw tool state writes nothing and says so", async () => {
    await start();
    const { notices, restore } = captureNotices(h!);
    restoreNotices = restore;
    h!.script(responder([fauxAssistantMessage("DONE-1")]));
    await h!.session.prompt(USER1);
    await expect(h!.session.compact()).rejects.toThrow(/cancelled/i);
    expect(checkpoints().length).toBe(0);
    expect(notices.map((n) => n.message).join("\n")).toMatch(/no tool summary: no raw tool state/);
    expect(calls.length).toBe(1);
  });

  it("a completed answer keeps its text verbatim while its reasoning is compacted", async () => {
    await start({ reasoning: true, settings: { defaultThinkingLevel: "medium" } });
    const answer = fauxAssistantMessage([
      fauxThinking("PRIVATE-REASONING ".repeat(50)),
      fauxText("ANSWER-1: nextDelay never caps."),
    ]);
    h!.script(responder([readBatch("A"), answer, readBatch("B"), readBatch("C"), fauxAssistantMessage("DONE-2")]));
    await h!.session.prompt(USER1);
    await h!.session.prompt(USER2);
    expect(checkpoints().length).toBe(1);
    expect(detailsOf(0).tokens.compacted.reasoning).toBeGreaterThan(100);
    const last = h!.requests.at(-1)!;
    const kept = last.find((m) => m.role === "assistant" && textOf(m).startsWith("ANSWER-1"));
    expect(kept?.content).toEqual([{ type: "text", text: "ANSWER-1: nextDelay never caps." }]);
    expect(requestText(last)).not.toContain("PRIVATE-REASONING");
  });

  it("reports token accounting: dialogue by role, checkpoints, compacted by kind, raw tail and headroom", async () => {
    await start();
    h!.script(responder([...threeBatches(), readBatch("D"), readBatch("E"), fauxAssistantMessage("DONE-2")]));
    await h!.session.prompt(USER1);
    await h!.session.prompt(USER2);
    const t = detailsOf(1).tokens;
    expect(t.contextBefore).toBeGreaterThan(181_177);
    expect(t.dialogue.user).toBe(Math.ceil(USER1.length / 4) + Math.ceil(USER2.length / 4));
    expect(t.dialogue.assistant).toBe(Math.ceil("DONE-1".length / 4));
    expect(t.checkpoints).toEqual({ count: 1, tokens: detailsOf(0).tokens.checkpoint });
    expect(t.compacted.toolResults).toBeGreaterThan(120_000);
    expect(t.compacted.toolCalls).toBeGreaterThan(0);
    expect(t.hidden).toBeGreaterThanOrEqual(t.compacted.toolResults);
    expect(t.rawTail).toBeGreaterThan(60_000); // the current batch (read e.ts) stays raw
    expect(t.contextAfter).toBe(t.contextBefore! - t.hidden + t.checkpoint);
    expect(t.headroom).toBe(WINDOW - t.contextAfter);
    const report = summaryReport(detailsOf(1));
    for (const line of [
      /^context: ~[\d,]+ tok → ~[\d,]+ tok, headroom ~[\d,]+ tok$/m,
      /^ {2}user messages: ~/m,
      /^ {2}assistant answers: ~/m,
      /^raw tail kept: ~/m,
      /^ {2}tool results: ~/m,
      /^tool summaries: 2 total/m,
    ])
      expect(report).toMatch(line);
  });

  it("the model allowlist limits preserve: another model gets Pi's native compaction", async () => {
    await start({ ledgerSettings: { preserve: { models: ["faux/some-other-model"] } } });
    h!.script(responder(threeBatches()));
    await h!.session.prompt(USER1);
    expect(checkpoints().length).toBe(0);
    expect(callsOf("checkpoint").length).toBe(0);
    expect(branch().some((e) => e.type === "compaction")).toBe(true);
  });
});

describe("preserve overflow certification (Pi's default settings, 50,000-token window)", () => {
  it("a native compaction after a tool summary: range-filtered summary input, then [summary, kept batch, tool summary #1, …]", async () => {
    // Sizes: the reserve at 50k is 8,886, so turn_end after the second read (~42k) writes checkpoint #1 over the first
    // read. The next request is rejected as too long (the provider counted 56,172 tokens), Pi compacts natively with
    // its default keepRecentTokens (20,000), which keeps from the second read's assistant message.
    h = await startHarness({
      contextWindow: 50_000,
      reasoning: true,
      settings: { defaultThinkingLevel: "high" },
      files: { ...batchFiles("A", 2, 10_500), ...batchFiles("B", 2, 7_000) },
      ledgerSettings: { strategy: "preserve" },
    });
    calls = [];
    const secondRead = fauxAssistantMessage(
      [
        fauxThinking("PLAN ".repeat(5_600)),
        fauxText("Reading batch B."),
        ...pathsOf("B", 2).map((path) => fauxToolCall("read", { path })),
      ],
      {
        stopReason: "toolUse",
      },
    );
    const overflow = fauxAssistantMessage("", {
      stopReason: "error",
      errorMessage: "prompt is too long: 56172 tokens > 50000 maximum",
    });
    h.script(responder([readBatch("A", 2), secondRead, overflow, fauxAssistantMessage("DONE")]));
    await h.session.prompt(USER1);

    expect(checkpoints().length).toBe(1);
    const compaction = branch().find((e) => e.type === "compaction")!;
    expect(compaction).toBeDefined();
    const kept = branch().find((e) => e.id === (compaction as { firstKeptEntryId: string }).firstKeptEntryId)!;
    expect(
      kept.type === "message" &&
        kept.message.role === "assistant" &&
        JSON.stringify(kept.message.content).includes("b1.ts"),
    ).toBe(true);

    // Pi's summary saw the rule-filtered history: the user's words, not the raw read the checkpoint already covers.
    const [native] = callsOf("native-summary");
    expect(lastText(native.context)).toContain("Find why retries loop forever.");
    expect(requestText(native.context.messages)).not.toContain("MARK-A");

    // The retried request: the summary first, then the kept batch in file order, then checkpoint #1.
    const retried = calls.at(-1)!;
    expect(retried.kind).toBe("live");
    const messages = retried.context.messages.slice(1);
    expect(textOf(messages[0])).toContain("NATIVE-SUMMARY");
    expect(messages[1].role).toBe("assistant");
    expect(requestText([messages[1]])).toContain("b1.ts");
    expect(messages.slice(2, 4).map((m) => m.role)).toEqual(["toolResult", "toolResult"]);
    expect(textOf(messages[4])).toMatch(/^\[Tool summary #1:/);
    expect(requestText(messages)).not.toContain("MARK-A");
    const sentFrom = projectBranch(branch().slice(0, -1), LEDGER_FACTS).messages.filter((m) => m.role !== "system");
    expect(JSON.stringify(messages)).toBe(JSON.stringify(convertToLlm(sentFrom)));
    expect(h.session.getLastAssistantText()).toBe("DONE");
    // Calls: two reads, the rejected request, Pi's summary, the retry; one checkpoint request.
    expect(callsOf("live").length).toBe(4);
    expect(callsOf("checkpoint").length).toBe(1);
    expect(callsOf("native-summary").length).toBe(1);
  });
});
