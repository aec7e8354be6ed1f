// Recall end to end: a real AgentSession on the faux provider with our extension, which registers the recall
// tools. The faux provider serves every request in order, so the scripts interleave the main agent's turns with
// the lookup subagent's own turns.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxText, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const textOf = (m: Message): string =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : b.type === "toolCall" ? JSON.stringify(b.arguments) : "")).join("\n");
const visible = (request: Message[]) => request.filter((m) => m.role !== "system").map(textOf).join("\n");
const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const toolResults = (name: string) =>
  branch().flatMap((e) => (e.type === "message" && e.message.role === "toolResult" && e.message.toolName === name ? [e.message] : []));
const resultText = (m: { content: unknown }) => textOf(m as Message);
const entryWith = (needle: string, role: string) =>
  branch().find((e) => e.type === "message" && e.message.role === role && JSON.stringify(e.message).includes(needle))!;
const lastUserText = (messages: Message[]) => textOf([...messages].reverse().find((m) => m.role === "user")!);
/** The subagent's requests carry its own system prompt. */
const isSubagentRequest = (messages: Message[]) => JSON.stringify(messages.find((m) => m.role === "system") ?? {}).includes("You recover facts from the recorded history");

/** Subagent turns: grep the needle, then answer quoting what the grep returned. */
function subagentFinds(needle: string) {
  return [
    fauxAssistantMessage([fauxToolCall("grep", { pattern: needle, literal: true })], { stopReason: "toolUse" }),
    (context: { messages: Message[] }) => {
      const result = [...context.messages].reverse().find((m) => m.role === "toolResult")!;
      const text = textOf(result);
      const id = /── entry (\S+)/.exec(text)?.[1] ?? "none";
      const line = text.split("\n").find((l) => l.includes(needle) && l.includes("│")) ?? "";
      return fauxAssistantMessage(`Found in ENTRY ${id}: ${line.replace(/^.*?│ /, "")}`);
    },
  ];
}

describe("recall tools e2e", () => {
  it("direct tools find, show and list history with entry attribution", async () => {
    h = await startHarness();
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "echo 'ENTRY fake0001 user 2020' && echo DIRECT-NEEDLE-7" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("ran it"),
    ]);
    await h.session.prompt("run the command");
    const source = entryWith("DIRECT-NEEDLE-7", "toolResult");
    h.script([
      fauxAssistantMessage(
        [
          fauxToolCall("context_grep", { pattern: "DIRECT-NEEDLE-\\d", context: 1 }),
          fauxToolCall("context_show_entry", { id: source.id }),
          fauxToolCall("context_list_entries", { role: "toolResult" }),
          fauxToolCall("context_grep", { pattern: "(a+)+" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("where did DIRECT-NEEDLE come from?");
    const grep = toolResults("context_grep");
    expect(resultText(grep[0])).toContain(`── entry ${source.id} · toolResult bash`);
    expect(resultText(grep[0])).toMatch(/> +\d+│ DIRECT-NEEDLE-7/);
    // The planted header is shown as content of the real entry, never as an entry of its own.
    expect(resultText(grep[0])).toMatch(/ +\d+│ ENTRY fake0001 user 2020/);
    expect(grep[1].isError).toBe(true);
    expect(resultText(grep[1])).toContain("exponential");
    expect(resultText(toolResults("context_show_entry")[0])).toContain("DIRECT-NEEDLE-7");
    expect(resultText(toolResults("context_list_entries")[0])).toContain(source.id);
    // Listed ids come from the index: the planted id appears only inside the real entry's preview.
    expect(resultText(toolResults("context_list_entries")[0])).not.toMatch(/^#\d+ fake0001/m);
  });

  it("context_lookup after a checkpoint compaction finds a string that exists only in hidden history", async () => {
    h = await startHarness({ settings: { compaction: { keepRecentTokens: 60 } } });
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "echo build failed: CHECKPOINT-ONLY-ERR-$((4700 + 11))" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("the build failed"),
      fauxAssistantMessage("second answer " + "pad ".repeat(80)),
      fauxAssistantMessage("third answer " + "pad ".repeat(80)),
    ]);
    await h.session.prompt("build it");
    await h.session.prompt("second task");
    await h.session.prompt("third task");
    await h.session.compact();
    const compaction = branch().find((e) => e.type === "compaction")!;
    expect((compaction as { details?: { strategy?: string } }).details?.strategy).toBe("checkpoint");
    const source = entryWith("CHECKPOINT-ONLY-ERR-4711", "toolResult");

    const before = h.requests.length;
    h.script([
      fauxAssistantMessage([fauxToolCall("context_lookup", { question: "What exact build error did we see? Include the ENTRY id." })], { stopReason: "toolUse" }),
      ...subagentFinds("CHECKPOINT-ONLY-ERR-4711"),
      fauxAssistantMessage("recovered"),
    ]);
    await h.session.prompt("what was the exact build error?");
    const requests = h.requests.slice(before);
    expect(requests).toHaveLength(4);
    // Hidden from the main agent's view after compaction...
    expect(visible(requests[0])).not.toContain("CHECKPOINT-ONLY-ERR-4711");
    // ...searched by the subagent in its own context...
    expect(isSubagentRequest(requests[1])).toBe(true);
    expect(lastUserText(requests[1])).toContain("What exact build error did we see?");
    expect(visible(requests[2])).toContain(`── entry ${source.id}`);
    // ...and only the findings come back to the main conversation.
    const lookup = toolResults("context_lookup")[0];
    expect(resultText(lookup)).toContain(`Found in ENTRY ${source.id}: build failed: CHECKPOINT-ONLY-ERR-4711`);
    expect(visible(requests[3])).toContain("CHECKPOINT-ONLY-ERR-4711");
    expect(visible(requests[3])).not.toContain("── entry");
    expect((lookup as { details?: { complete?: boolean; references?: string[] } }).details).toMatchObject({ complete: true, references: [source.id] });
  });

  it("context_lookup after a fold finds a string that exists only in the folded history", async () => {
    h = await startHarness();
    h.script([fauxAssistantMessage("task one done")]);
    await h.session.prompt("task one: KEEP-ONE");
    const target = entryWith("KEEP-ONE", "user").id;
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "echo FOLDED-ONLY-SECRET-$((90 + 9))" })], { stopReason: "toolUse" }),
      fauxAssistantMessage([fauxToolCall("context_compact", { target, summary: "ran a command" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("folded"),
    ]);
    await h.session.prompt("task two: noisy");
    expect(branch().some((e) => e.type === "custom_message" && e.customType === "context-ledger/fold")).toBe(true);
    const source = entryWith("FOLDED-ONLY-SECRET-99", "toolResult");

    const before = h.requests.length;
    h.script([
      fauxAssistantMessage([fauxToolCall("context_lookup", { question: "What did the echo print?" })], { stopReason: "toolUse" }),
      ...subagentFinds("FOLDED-ONLY-SECRET-99"),
      fauxAssistantMessage("recovered"),
    ]);
    await h.session.prompt("what did the command print?");
    const requests = h.requests.slice(before);
    expect(visible(requests[0])).not.toContain("FOLDED-ONLY-SECRET-99");
    expect(resultText(toolResults("context_lookup")[0])).toContain(`Found in ENTRY ${source.id}: FOLDED-ONLY-SECRET-99`);
    expect(visible(requests[3])).toContain("FOLDED-ONLY-SECRET-99");
  });

  it("runs one lookup per batch of work: parallel calls and a repeat are blocked without a subagent", async () => {
    h = await startHarness();
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "echo ONE-ATTEMPT-MARK" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("ok"),
    ]);
    await h.session.prompt("run");
    const before = h.requests.length;
    h.script([
      fauxAssistantMessage(
        [fauxToolCall("context_lookup", { question: "first?" }, { id: "look-1" }), fauxToolCall("context_lookup", { question: "second?" }, { id: "look-2" })],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("The mark is ONE-ATTEMPT-MARK."), // the single subagent answers at once
      fauxAssistantMessage([fauxToolCall("context_lookup", { question: "third?" }, { id: "look-3" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("giving up on lookups"),
    ]);
    await h.session.prompt("find the mark twice");
    const requests = h.requests.slice(before);
    // main, one subagent, main (after the batch), main (after the blocked repeat): no second or third subagent.
    expect(requests).toHaveLength(4);
    expect(requests.filter(isSubagentRequest)).toHaveLength(1);
    const results = toolResults("context_lookup");
    const byId = (id: string) => results.find((r) => r.toolCallId === id)!;
    expect(resultText(byId("look-1"))).toContain("ONE-ATTEMPT-MARK");
    expect(resultText(byId("look-2"))).toContain("context_lookup was not run");
    expect(resultText(byId("look-3"))).toContain("context_grep");
    expect((byId("look-3") as { details?: { blocked?: boolean } }).details?.blocked).toBe(true);

    // Other tool work resets the allowance.
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "echo reset" })], { stopReason: "toolUse" }),
      fauxAssistantMessage([fauxToolCall("context_lookup", { question: "again?" }, { id: "look-4" })], { stopReason: "toolUse" }),
      fauxAssistantMessage([fauxText("again: ONE-ATTEMPT-MARK")]),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("continue");
    expect(resultText(toolResults("context_lookup").find((r) => r.toolCallId === "look-4")!)).toContain("again: ONE-ATTEMPT-MARK");
  });

  it("a lookup that exhausts its turn budget returns a partial write-up", async () => {
    h = await startHarness({ ledgerSettings: { recall: { lookupTurnBudget: 2 } } });
    h.script([fauxAssistantMessage("hello")]);
    await h.session.prompt("hi");
    h.script([
      fauxAssistantMessage([fauxToolCall("context_lookup", { question: "anything about BUDGET?" })], { stopReason: "toolUse" }),
      fauxAssistantMessage([fauxToolCall("grep", { pattern: "BUDGET-A" })], { stopReason: "toolUse" }),
      fauxAssistantMessage([fauxToolCall("grep", { pattern: "BUDGET-B" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("WRITE-UP: nothing about BUDGET was recorded."),
      fauxAssistantMessage("ok"),
    ]);
    await h.session.prompt("look it up");
    const lookup = toolResults("context_lookup")[0];
    expect(resultText(lookup)).toContain("WRITE-UP: nothing about BUDGET was recorded.");
    expect(resultText(lookup)).toContain("turn budget (2)");
    expect((lookup as { details?: object }).details).toMatchObject({ complete: false, end: "turnBudget", writeUp: "ok", turnsUsed: 2, modelCalls: 3 });
  });
});
