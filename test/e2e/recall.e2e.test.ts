// Recall end to end: a real AgentSession on the faux provider with our extension, which registers the recall
// tools. The faux provider serves every request in order, so the scripts interleave the main agent's turns with
// the lookup subagent's own turns.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxText, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { compileRegex } from "../../src/recall/regex.ts";
import { DEFAULT_RECALL_LIMITS } from "../../src/recall/settings.ts";
import { hasRawControl } from "../arbitraries/hostile.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const textOf = (m: Message): string =>
  typeof m.content === "string"
    ? m.content
    : m.content
        .map((b) => (b.type === "text" ? b.text : b.type === "toolCall" ? JSON.stringify(b.arguments) : ""))
        .join("\n");
const visible = (request: Message[]) =>
  request
    .filter((m) => m.role !== "system")
    .map(textOf)
    .join("\n");
const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const toolResults = (name: string) =>
  branch().flatMap((e) =>
    e.type === "message" && e.message.role === "toolResult" && e.message.toolName === name ? [e.message] : [],
  );
const resultText = (m: { content: unknown }) => textOf(m as Message);
const entryWith = (needle: string, role: string) =>
  branch().find((e) => e.type === "message" && e.message.role === role && JSON.stringify(e.message).includes(needle))!;
const lastUserText = (messages: Message[]) => textOf([...messages].reverse().find((m) => m.role === "user")!);
/** The subagent's requests carry its own system prompt. */
const isSubagentRequest = (messages: Message[]) =>
  JSON.stringify(messages.find((m) => m.role === "system") ?? {}).includes(
    "You recover facts from the recorded history",
  );

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
      fauxAssistantMessage(
        [fauxToolCall("bash", { command: "echo 'ENTRY fake0001 user 2020' && echo DIRECT-NEEDLE-7" })],
        { stopReason: "toolUse" },
      ),
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
          fauxToolCall("context_grep", { pattern: "(a)\\1" }),
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
    expect(resultText(grep[1])).toContain("backreferences");
    expect(resultText(toolResults("context_show_entry")[0])).toContain("DIRECT-NEEDLE-7");
    expect(resultText(toolResults("context_list_entries")[0])).toContain(source.id);
    // Listed ids come from the index: the planted id appears only inside the real entry's preview.
    expect(resultText(toolResults("context_list_entries")[0])).not.toMatch(/^#\d+ fake0001/m);
  });

  it("context_lookup after a checkpoint compaction finds a string that exists only in hidden history", async () => {
    h = await startHarness({ settings: { compaction: { keepRecentTokens: 60 } } });
    h.script([
      fauxAssistantMessage(
        [fauxToolCall("bash", { command: "echo build failed: CHECKPOINT-ONLY-ERR-$((4700 + 11))" })],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("the build failed"),
      fauxAssistantMessage(`second answer ${"pad ".repeat(80)}`),
      fauxAssistantMessage(`third answer ${"pad ".repeat(80)}`),
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
      fauxAssistantMessage(
        [fauxToolCall("context_lookup", { question: "What exact build error did we see? Include the ENTRY id." })],
        { stopReason: "toolUse" },
      ),
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
    expect((lookup as { details?: { complete?: boolean; references?: string[] } }).details).toMatchObject({
      complete: true,
      references: [source.id],
    });
  });

  it("context_lookup after a fold finds a string that exists only in the folded history", async () => {
    h = await startHarness();
    h.script([fauxAssistantMessage("task one done")]);
    await h.session.prompt("task one: KEEP-ONE");
    const target = entryWith("KEEP-ONE", "user").id;
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "echo FOLDED-ONLY-SECRET-$((90 + 9))" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage([fauxToolCall("context_compact", { target, summary: "ran a command" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("folded"),
    ]);
    await h.session.prompt("task two: noisy");
    expect(branch().some((e) => e.type === "custom_message" && e.customType === "context-ledger/fold")).toBe(true);
    const source = entryWith("FOLDED-ONLY-SECRET-99", "toolResult");

    const before = h.requests.length;
    h.script([
      fauxAssistantMessage([fauxToolCall("context_lookup", { question: "What did the echo print?" })], {
        stopReason: "toolUse",
      }),
      ...subagentFinds("FOLDED-ONLY-SECRET-99"),
      fauxAssistantMessage("recovered"),
    ]);
    await h.session.prompt("what did the command print?");
    const requests = h.requests.slice(before);
    expect(visible(requests[0])).not.toContain("FOLDED-ONLY-SECRET-99");
    expect(resultText(toolResults("context_lookup")[0])).toContain(
      `Found in ENTRY ${source.id}: FOLDED-ONLY-SECRET-99`,
    );
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
        [
          fauxToolCall("context_lookup", { question: "first?" }, { id: "look-1" }),
          fauxToolCall("context_lookup", { question: "second?" }, { id: "look-2" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("The mark is ONE-ATTEMPT-MARK."), // the single subagent answers at once
      fauxAssistantMessage([fauxToolCall("context_lookup", { question: "third?" }, { id: "look-3" })], {
        stopReason: "toolUse",
      }),
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
      fauxAssistantMessage([fauxToolCall("context_lookup", { question: "again?" }, { id: "look-4" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage([fauxText("again: ONE-ATTEMPT-MARK")]),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("continue");
    expect(resultText(toolResults("context_lookup").find((r) => r.toolCallId === "look-4")!)).toContain(
      "again: ONE-ATTEMPT-MARK",
    );
  });

  it("a lookup that exhausts its turn budget returns a partial write-up", async () => {
    h = await startHarness({ ledgerSettings: { recall: { lookupTurnBudget: 2 } } });
    h.script([fauxAssistantMessage("hello")]);
    await h.session.prompt("hi");
    h.script([
      fauxAssistantMessage([fauxToolCall("context_lookup", { question: "anything about BUDGET?" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage([fauxToolCall("grep", { pattern: "BUDGET-A" })], { stopReason: "toolUse" }),
      fauxAssistantMessage([fauxToolCall("grep", { pattern: "BUDGET-B" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("WRITE-UP: nothing about BUDGET was recorded."),
      fauxAssistantMessage("ok"),
    ]);
    await h.session.prompt("look it up");
    const lookup = toolResults("context_lookup")[0];
    expect(resultText(lookup)).toContain("WRITE-UP: nothing about BUDGET was recorded.");
    expect(resultText(lookup)).toContain("turn budget (2)");
    expect((lookup as { details?: object }).details).toMatchObject({
      complete: false,
      end: "turnBudget",
      writeUp: "ok",
      turnsUsed: 2,
      modelCalls: 3,
    });
  });
});

describe("recall hardening e2e", () => {
  type GrepResult = {
    isError?: boolean;
    content: unknown;
    details?: { work?: number; workPerChar?: number; scannedChars?: number; matches?: { entryId: string }[] };
  };
  const greps = () => toolResults("context_grep") as unknown as GrepResult[];

  it("runs the 136-character pattern and everyday nested patterns in bounded work, on Pi's defaults", async () => {
    const hostile = `${".?".repeat(45)}${".".repeat(45)}Z`;
    // Many lines with a Z too near their start (no match, but the Z every match needs is everywhere), one real
    // hit. Short ids keep the entry headers, which end in a Z too, short of a match.
    const b = new LedgerBuilder({ pad: 1 });
    b.user("collect the logs");
    for (let i = 0; i < 40; i++) {
      b.assistant("", [{ id: `c${i}`, name: "bash", args: { command: `cat log${i}` } }]);
      b.toolResult(
        `c${i}`,
        "bash",
        Array.from({ length: 120 }, (_, j) => `${"y".repeat(j % 44)}Z warning: retry ${i}.${j}.1`).join("\n"),
      );
    }
    b.assistant("", [{ id: "last", name: "bash", args: { command: "cat final.log" } }]);
    b.toolResult("last", "bash", `${"q".repeat(60)}Z-END`);
    b.assistant("logs collected");
    h = await startHarness({ seedEntries: b.entries });
    const source = entryWith("Z-END", "toolResult");
    const before = h.requests.length;
    h.script([
      fauxAssistantMessage(
        [
          fauxToolCall("context_grep", { pattern: hostile }),
          fauxToolCall("context_grep", { pattern: "(\\d+\\.)+\\d+" }),
          fauxToolCall("context_grep", { pattern: "(error|warning)+: retry 39" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("searched"),
    ]);
    await h.session.prompt("search the logs");
    // Two model calls: the one that asked, and the one that read the results. No other work reached a model.
    expect(h.requests.length - before).toBe(2);
    const [slow, dotted, alternation] = greps();
    expect([slow.isError, dotted.isError, alternation.isError]).toEqual([false, false, false]);
    expect(slow.details!.matches!.map((m) => m.entryId)).toEqual([source.id]);
    expect(resultText(slow as never)).toContain(`── entry ${source.id}`);
    expect(dotted.details!.matches!.length).toBeGreaterThan(0);
    expect(alternation.details!.matches!.length).toBe(8);
    // Work is counted per character times the compiled program, and one call stays within the cap plus two steps.
    const re = compileRegex(hostile, false);
    if (typeof re === "string") throw new Error(re);
    expect(slow.details!.workPerChar).toBe(re.programSize);
    expect(slow.details!.work).toBeLessThanOrEqual(
      DEFAULT_RECALL_LIMITS.maxScanWork + 2 * re.stepChars * re.programSize,
    );
    expect(slow.details!.work).toBeGreaterThanOrEqual(slow.details!.scannedChars!);
    // The provider saw the match in the tool result.
    expect(visible(h.requests.at(-1)!)).toContain("Z-END");
  });

  it("does not find its own earlier searches unless asked to", async () => {
    h = await startHarness();
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "echo failure code SELF-$((4000 + 711))" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("it failed"),
    ]);
    await h.session.prompt("run it");
    const source = entryWith("SELF-4711", "toolResult");
    h.script([
      fauxAssistantMessage([fauxToolCall("context_grep", { pattern: "SELF-4711" })], { stopReason: "toolUse" }),
      fauxAssistantMessage([fauxToolCall("context_grep", { pattern: "self-4711", literal: true })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage(
        [fauxToolCall("context_grep", { pattern: "SELF-4711", includeRecall: true, caseSensitive: true })],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("where was SELF-4711?");
    const [first, second, third] = greps();
    const ids = (r: GrepResult) => r.details!.matches!.map((m) => m.entryId);
    // The user's question mentions it too; the recall calls and results do not count.
    const question = entryWith("where was SELF-4711?", "user");
    expect(ids(first)).toEqual([source.id, question.id]);
    // Ignoring case by default: the lower-case text finds the same lines.
    expect(ids(second)).toEqual([source.id, question.id]);
    // With includeRecall the earlier calls and their results come back as well.
    const calls = branch().filter(
      (e) =>
        e.type === "message" &&
        e.message.role === "assistant" &&
        e.message.content.some((c) => c.type === "toolCall" && c.name === "context_grep"),
    );
    const results = branch().filter(
      (e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolName === "context_grep",
    );
    expect([calls.length, results.length]).toEqual([3, 3]);
    expect(ids(third).slice(0, 2)).toEqual([source.id, question.id]);
    expect(ids(third).slice(2)).toEqual(expect.arrayContaining([calls[0].id, results[0].id, results[1].id]));
    expect(ids(third)).toHaveLength(8); // a full page: the earlier results repeat the needle
  });

  it("answers oversized arguments with short errors that name the limit, and runs no subagent for them", async () => {
    h = await startHarness();
    h.script([fauxAssistantMessage("hello")]);
    await h.session.prompt("hi");
    const before = h.requests.length;
    h.script([
      fauxAssistantMessage(
        [
          fauxToolCall("context_show_entry", { id: "i".repeat(200_000) }),
          fauxToolCall("context_list_entries", { role: "r".repeat(100_000) }),
          fauxToolCall("context_grep", { pattern: "p".repeat(1_000_000) }),
          fauxToolCall("context_grep", { pattern: "x", cursor: "c".repeat(100_000) }),
          fauxToolCall("context_lookup", { question: "q".repeat(1_000_000) }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("ok"),
    ]);
    await h.session.prompt("try these");
    // The asking call and the follow-up: the oversized question started no subagent.
    expect(h.requests.length - before).toBe(2);
    const results = branch()
      .flatMap((e) => (e.type === "message" && e.message.role === "toolResult" ? [e.message] : []))
      .slice(-5);
    expect(results.map((r) => r.isError)).toEqual([true, true, true, true, true]);
    const texts = results.map((r) => resultText(r));
    for (const text of texts) expect(text.length).toBeLessThan(400);
    expect(texts[0]).toContain("200000 characters; entry ids are at most 256");
    expect(texts[1]).toContain("[cut: 100000 chars in all]");
    expect(texts[2]).toContain("1000000 characters; the limit is 500");
    expect(texts[3]).toContain("cursors are at most 512");
    expect(texts[4]).toContain("1000000 characters; the limit is 4000");
    // What went back to the provider: the results, short (the model's own oversized call is its own message).
    const last = h.requests.at(-1)!.filter((m) => m.role === "toolResult");
    expect(last.map((m) => textOf(m).length).every((n) => n < 400)).toBe(true);
  });

  it("shows control bytes in recovered output as visible escapes (the tool boundary)", async () => {
    h = await startHarness();
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "printf '\\033[2J\\033[31mRED-NEEDLE\\033[0m\\n'" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("printed"),
    ]);
    await h.session.prompt("print it");
    h.script([
      fauxAssistantMessage([fauxToolCall("context_grep", { pattern: "red-needle" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("found"),
    ]);
    await h.session.prompt("find it");
    const text = resultText(toolResults("context_grep")[0]);
    expect(text).toContain("RED-NEEDLE");
    expect(hasRawControl(text)).toBe(false);
    expect(text).toContain("\\u001b[31m");
  });

  it("pages context_timeline on a long session and follows its cursor to earlier entries", async () => {
    const b = new LedgerBuilder();
    for (let i = 0; i < 600; i++) {
      b.user(`request ${i} ${"detail ".repeat(12)}`);
      b.assistant(`reply ${i}`);
    }
    h = await startHarness({ seedEntries: b.entries });
    let cursor = "";
    h.script([
      fauxAssistantMessage([fauxToolCall("context_timeline", {})], { stopReason: "toolUse" }),
      (context: { messages: Message[] }) => {
        const text = textOf([...context.messages].reverse().find((m) => m.role === "toolResult")!);
        cursor = /cursor "([^"]+)"/.exec(text)?.[1] ?? "";
        return fauxAssistantMessage([fauxToolCall("context_timeline", { cursor })], { stopReason: "toolUse" });
      },
      fauxAssistantMessage("seen"),
    ]);
    await h.session.prompt("show the timeline");
    const pages = toolResults("context_timeline").map((r) => resultText(r));
    expect(pages).toHaveLength(2);
    expect(cursor).not.toBe("");
    for (const page of pages) expect(page.length).toBeLessThan(13_000);
    expect(pages[0]).toMatch(/^root/);
    expect(pages[0]).toContain("reply 599");
    expect(pages[1]).not.toContain("reply 599");
    expect(pages[1]).toMatch(/Timeline entries \d+–\d+ of 120\d/);
  });
});
