// The preserve strategy end to end: a real AgentSession on the faux provider, strategy `preserve`, a small window so
// the reserve triggers. Assertions read the requests the provider was actually sent.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxText, fauxToolCall, type Context, type FauxResponseStep, type Message } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { PreserveDetails } from "../../src/strategies/preserve/checkpoint.ts";
import { DELTA_ONLY_SYSTEM } from "../../src/strategies/preserve/prompt.ts";
import { reserveTokens } from "../../src/strategies/preserve/reserve.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const WINDOW = 16_000;
/** ~6,000 tokens each: two raw results cross window − reserve (16,000 − 4,937). */
const big = (marker: string) => `// ${marker}\n` + `export const ${marker.toLowerCase().replace(/-/g, "_")} = [\n` + "  'padding padding padding padding padding',\n".repeat(540) + "];\n";
const FILES = { "a.ts": big("MARK-A"), "b.ts": big("MARK-B"), "c.ts": big("MARK-C"), "huge.ts": big("MARK-H").repeat(3) };
const USER1 = "Find why retries loop forever.  Keep my wording: ünïcødé ✓ ";
const USER2 = "Now check c.ts as well.";

const textOf = (m: Message): string => (typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join(""));
const requestText = (r: Message[]) => JSON.stringify(r);
const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const checkpoints = () =>
  branch().filter((e): e is Extract<SessionEntry, { type: "custom_message" }> => e.type === "custom_message" && e.customType === "context-ledger/preserve");
const isSummaryRequest = (context: Context) =>
  textOf(context.messages.at(-1)!).startsWith("[Context maintenance") || textOf(context.messages.at(-1)!).includes("<tool-activity>");
const cpIndex = (r: Message[], n: number) => r.findIndex((m) => textOf(m).startsWith(`[Tool Context Checkpoint #${n}`));

/** Answers summary requests with `summarize`, everything else from `main` in order. */
function responder(main: FauxResponseStep[], summarize: (context: Context, n: number) => ReturnType<typeof fauxAssistantMessage>): FauxResponseStep[] {
  let summaries = 0;
  const step: FauxResponseStep = async (context, options, state, model) => {
    if (isSummaryRequest(context)) return summarize(context, ++summaries);
    const next = main.shift();
    if (!next) throw new Error("script exhausted");
    return typeof next === "function" ? next(context, options, state, model) : next;
  };
  return Array.from({ length: 20 }, () => step);
}

const modelSummary = (_c: Context, n: number) =>
  fauxAssistantMessage(`## Tool Context\n### User message ${n}\n#### Findings\n- SUMMARY-${n}\n\n#### Changes & Validation\n- (none)\n\n#### Unresolved\n- (none)`);

const read = (path: string) => fauxAssistantMessage([fauxText(`Reading ${path}.`), fauxToolCall("read", { path })], { stopReason: "toolUse" });

async function start(settings: Record<string, unknown> = {}): Promise<void> {
  h = await startHarness({
    files: FILES,
    contextWindow: WINDOW,
    ledgerSettings: { strategy: "preserve" },
    settings: { compaction: { reserveTokens: 10_000, keepRecentTokens: 100 }, ...settings },
  });
}

describe("preserve e2e", () => {
  it("keeps the dialogue verbatim, replaces older tool traffic with append-only checkpoints and keeps checkpoint #1 byte-stable", async () => {
    expect(reserveTokens(WINDOW)).toBe(4_937);
    await start();
    const compactionEvents: { type: string; reason?: string; aborted?: boolean }[] = [];
    h!.session.subscribe((event) => {
      if (event.type === "compaction_start" || event.type === "compaction_end") compactionEvents.push(event as never);
    });
    h!.script(responder([read("a.ts"), read("b.ts"), fauxAssistantMessage("DONE-1"), read("c.ts"), fauxAssistantMessage("DONE-2")], modelSummary));
    await h!.session.prompt(USER1);

    const cps = checkpoints();
    expect(cps.length).toBe(1);
    const d1 = cps[0].details as PreserveDetails;
    expect(d1).toMatchObject({ v: 1, strategy: "preserve", checkpoint: 1, writer: "model", userOrdinals: [1], range: { afterId: null, keepDialogue: true } });
    expect(d1.tokens.hidden).toBeGreaterThan(5_000);
    expect(d1.tokens.checkpoint).toBeLessThan(200);

    // The summary request continued the live conversation: same messages as the previous request, one ask appended.
    const summaryAt = h!.requests.findIndex((r) => textOf(r.at(-1)!).startsWith("[Context maintenance"));
    expect(summaryAt).toBeGreaterThan(0);
    expect(JSON.stringify(h!.requests[summaryAt].slice(0, -1))).toBe(JSON.stringify(h!.requests[summaryAt - 1]));
    expect(textOf(h!.requests[summaryAt].at(-1)!)).toContain("user message(s) 1");

    // The next live request: user message verbatim, checkpoint, current batch raw, no older tool result.
    const after1 = h!.requests[summaryAt + 1];
    expect(after1[0].role).toBe("system");
    expect(textOf(after1[1])).toBe(USER1);
    expect(cpIndex(after1, 1)).toBe(2);
    expect(requestText(after1)).toContain("MARK-B");
    expect(requestText(after1)).not.toContain("MARK-A");
    expect(after1.some((m) => m.role === "assistant" && m.content.some((b) => b.type === "toolCall" && (b.arguments as { path?: string }).path === "b.ts"))).toBe(true);

    await h!.session.prompt(USER2);
    expect(checkpoints().length).toBe(2);
    const d2 = checkpoints()[1].details as PreserveDetails;
    expect(d2.range.afterId).toBe(d1.range.throughId);
    const last = h!.requests.at(-1)!;
    const texts = last.map(textOf);
    expect(texts).toContain(USER1);
    expect(texts).toContain(USER2);
    expect(texts).toContain("DONE-1");
    expect(requestText(last)).toContain("MARK-C");
    expect(requestText(last)).not.toContain("MARK-A");
    expect(requestText(last)).not.toContain("MARK-B");
    // Invariant 5 on real provider payloads: everything up to checkpoint #1 is byte-identical after checkpoint #2.
    const k = cpIndex(after1, 1);
    expect(cpIndex(last, 1)).toBe(k);
    expect(JSON.stringify(last.slice(0, k + 1))).toBe(JSON.stringify(after1.slice(0, k + 1)));
    expect(cpIndex(last, 2)).toBeGreaterThan(k);

    // Pi's threshold compaction fired (its reserve is 10,000) and preserve cancelled it: no compaction entry exists.
    expect(compactionEvents.some((e) => e.type === "compaction_start" && e.reason === "threshold")).toBe(true);
    expect(branch().some((e) => e.type === "compaction")).toBe(false);
  });

  it("retries a summary that stopped at length once as delta-only, with exactly the technical delta", async () => {
    await start();
    const summary = (context: Context, n: number) =>
      n === 1 ? fauxAssistantMessage("## Tool Context\n### User message 1\n- cut", { stopReason: "length" }) : modelSummary(context, 1);
    h!.script(responder([read("a.ts"), read("b.ts"), fauxAssistantMessage("DONE-1")], summary));
    await h!.session.prompt(USER1);
    const d = checkpoints()[0].details as PreserveDetails;
    expect(d.writer).toBe("delta-only");
    const deltaOnly = h!.requests.find((r) => textOf(r.at(-1)!).includes("<tool-activity>"))!;
    // A tiny system prompt and one user message: nothing of the live conversation.
    expect(deltaOnly.map((m) => m.role)).toEqual(["system", "user"]);
    expect(textOf(deltaOnly[0])).toBe(DELTA_ONLY_SYSTEM);
    const body = textOf(deltaOnly[1]);
    expect(body).toMatch(/\[tool call [^\]]+\] read \{"path":"a\.ts"\}/);
    expect(body).toContain(FILES["a.ts"].slice(0, 2_000));
    expect(body).toContain("=== Work for user message 1 ===");
    expect(body).not.toContain(USER1.trim());
    expect(body).not.toContain("MARK-B"); // the current batch stays raw
  });

  it("falls back to the extractive writer when the model fails twice", async () => {
    await start();
    const failing = () => fauxAssistantMessage("", { stopReason: "error", errorMessage: "provider down" });
    h!.script(responder([read("a.ts"), read("b.ts"), fauxAssistantMessage("DONE-1")], failing));
    await h!.session.prompt(USER1);
    const [cp] = checkpoints();
    expect((cp.details as PreserveDetails).writer).toBe("extractive");
    expect(cp.content).toContain("### User message 1");
    expect(cp.content).toContain("Read `a.ts`");
    expect(requestText(h!.requests.at(-1)!)).not.toContain("MARK-A");
  });

  it("a unit too large for any summary request is checkpointed without a model, never dropped silently", async () => {
    await start();
    h!.script(responder([read("huge.ts"), read("b.ts"), fauxAssistantMessage("DONE-1")], modelSummary));
    const calls = () => h!.requests.filter((r) => isSummaryRequest({ messages: r })).length;
    await h!.session.prompt(USER1);
    const [cp] = checkpoints();
    expect((cp.details as PreserveDetails).writer).toBe("extractive");
    expect(cp.content).toContain("Read `huge.ts`");
    expect(calls()).toBe(0);
    expect(requestText(h!.requests.at(-1)!)).not.toContain("MARK-H");
  });

  it("manual /compact checkpoints all raw technical state now and cancels Pi's summary", async () => {
    await start({ compaction: { enabled: false, keepRecentTokens: 100 } });
    h!.script(responder([read("a.ts"), fauxAssistantMessage("DONE-1"), fauxAssistantMessage("after")], modelSummary));
    await h!.session.prompt(USER1);
    expect(checkpoints().length).toBe(0);
    await expect(h!.session.compact()).rejects.toThrow(/cancelled/i);
    const [cp] = checkpoints();
    expect((cp.details as PreserveDetails).checkpoint).toBe(1);
    expect(branch().some((e) => e.type === "compaction")).toBe(false);
    await h!.session.prompt("continue");
    const last = h!.requests.at(-1)!;
    expect(last.map(textOf)).toEqual(expect.arrayContaining([USER1, "DONE-1", "continue"]));
    expect(requestText(last)).not.toContain("MARK-A");
    expect(cpIndex(last, 1)).toBeGreaterThan(0);
  });
});
