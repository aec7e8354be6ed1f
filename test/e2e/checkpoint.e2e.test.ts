// The checkpoint strategy end to end: a real AgentSession on the faux provider with our extension (default
// strategy `checkpoint`). Every assertion reads the requests the provider was actually sent.
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxThinking, fauxText, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { INTRODUCTION, TAIL_MARKER } from "../../src/strategies/checkpoint/render.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
const roots: string[] = [];
afterEach(async () => {
  await h?.dispose();
  h = undefined;
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:";
const RECAP_PREFIX = "[context-ledger recap after checkpoint ";
const USER_TEXT = "start here:  READ-GUIDE\n\ttab-indented line \nünïcødé ✓ trailing space ";

const textOf = (m: Message): string =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("");
const summaryIn = (request: Message[]) => request.map(textOf).find((t) => t.startsWith(SUMMARY_PREFIX));
const recapsIn = (request: Message[]) =>
  request.filter((m) => m.role === "user" && textOf(m).startsWith(RECAP_PREFIX)).map(textOf);
const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const compactions = () => branch().filter((e) => e.type === "compaction");
const persistedRecaps = () =>
  branch().filter((e) => e.type === "custom_message" && e.customType === "context-ledger/recap");
const lastRequest = () => h!.requests[h!.requests.length - 1];

const FILES = {
  "AGENTS.md": "Project rules: read docs/guide.md before touching src/.\n",
  "docs/guide.md": "GUIDE-LINE-1\nGUIDE-LINE-2\n",
  "src/a.ts": "export const a = 1;\n",
};

/** Three user turns with thinking, reads, a failing bash call and an edit. */
async function workSession(): Promise<void> {
  h!.script([
    fauxAssistantMessage(
      [fauxThinking("THINK-SECRET"), fauxText("Reading the guide."), fauxToolCall("read", { path: "docs/guide.md" })],
      { stopReason: "toolUse" },
    ),
    fauxAssistantMessage("guide read, PROSE-ONE"),
    fauxAssistantMessage([fauxToolCall("bash", { command: `cd ${h!.cwd} && false` })], { stopReason: "toolUse" }),
    fauxAssistantMessage([fauxToolCall("edit", { path: "src/a.ts", edits: [{ oldText: "= 1", newText: "= 2" }] })], {
      stopReason: "toolUse",
    }),
    fauxAssistantMessage("edited, PROSE-TWO"),
    fauxAssistantMessage(`third answer ${"pad ".repeat(60)}`),
  ]);
  await h!.session.prompt(USER_TEXT);
  await h!.session.prompt("second: change a.ts");
  await h!.session.prompt("third: summarize");
}

const SETTINGS = { compaction: { keepRecentTokens: 60 } };

describe("checkpoint e2e", () => {
  it("compacts without a model call and sends the envelope in order, the recap last", async () => {
    h = await startHarness({ files: FILES, settings: SETTINGS });
    await workSession();
    const calls = h.faux.state.callCount;
    const result = await h.session.compact();
    expect(h.faux.state.callCount).toBe(calls);
    const [entry] = compactions();
    expect(entry.type === "compaction" && (entry.details as { strategy?: string }).strategy).toBe("checkpoint");
    expect(result.summary.startsWith(INTRODUCTION[0])).toBe(true);

    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("PENDING-INPUT after compaction");
    const request = lastRequest();
    const summary = summaryIn(request)!;
    // 1-4: introduction, spans, startup read and file lists, boundary and tail marker, all inside the summary.
    const order = [INTRODUCTION[0], '<span n="1"', "<startup-read", "<files>", TAIL_MARKER].map((s) =>
      summary.indexOf(s),
    );
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(summary).toContain(USER_TEXT);
    expect(summary).toContain("GUIDE-LINE-1\nGUIDE-LINE-2");
    expect(summary).toContain("[call ");
    expect(summary).toMatch(/bash command="cd \. && false" → error/);
    expect(summary).toMatch(/edit path="src\/a.ts" edits=1 → ok/);
    expect(summary).not.toContain("THINK-SECRET");
    // 5-7: the verbatim tail, then the pending input, then the recap.
    const texts = request.map(textOf);
    const summaryAt = texts.findIndex((t) => t.startsWith(SUMMARY_PREFIX));
    const pendingAt = texts.indexOf("PENDING-INPUT after compaction");
    expect(pendingAt).toBeGreaterThan(summaryAt + 1);
    expect(texts.slice(summaryAt + 1, pendingAt).some((t) => t.includes("third answer"))).toBe(true);
    expect(texts[texts.length - 1].startsWith(`${RECAP_PREFIX}${entry.id}]`)).toBe(true);
    expect(recapsIn(request)).toHaveLength(1);
    expect(persistedRecaps()).toHaveLength(1);
  });

  it("keeps the recap in history afterwards and regenerates it at every compaction without piling up", async () => {
    h = await startHarness({ files: FILES, settings: SETTINGS });
    await workSession();
    await h.session.compact();
    h.script([fauxAssistantMessage("one"), fauxAssistantMessage(`two ${"pad ".repeat(60)}`)]);
    await h.session.prompt("after first");
    await h.session.prompt("later turn");
    const later = lastRequest();
    expect(recapsIn(later)).toHaveLength(1);
    expect(textOf(later[later.length - 1])).toBe("later turn");

    await h.session.compact();
    const [, second] = compactions();
    h.script([fauxAssistantMessage("three")]);
    await h.session.prompt("after second");
    const request = lastRequest();
    const recaps = recapsIn(request);
    expect(recaps).toHaveLength(1);
    expect(recaps[0].startsWith(`${RECAP_PREFIX}${second.id}]`)).toBe(true);
    expect(textOf(request[request.length - 1])).toBe(recaps[0]);
    const summary = summaryIn(request)!;
    expect(summary).toContain('<span n="1"');
    expect(summary).toContain('<span n="2"');
    expect(summary).not.toContain(RECAP_PREFIX);
    // Old recaps stay in the session for audit; only the current one is in view.
    expect(persistedRecaps()).toHaveLength(2);
  });

  it("places the recap after a threshold compaction in the middle of a run", async () => {
    const big = (c: string) => `${c.repeat(79)}\n`.repeat(80);
    h = await startHarness({
      contextWindow: 8_000,
      settings: { compaction: { reserveTokens: 2_000, keepRecentTokens: 1_000 } },
      files: { "a.txt": big("a"), "b.txt": big("b"), "c.txt": big("c") },
    });
    h.script([
      fauxAssistantMessage([fauxToolCall("read", { path: "a.txt" })], { stopReason: "toolUse" }),
      fauxAssistantMessage([fauxToolCall("read", { path: "b.txt" })], { stopReason: "toolUse" }),
      fauxAssistantMessage([fauxToolCall("read", { path: "c.txt" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("done"),
    ]);
    const calls = h.faux.state.callCount;
    await h.session.prompt("read the files");
    expect(h.faux.state.callCount - calls).toBe(4);
    // Depending on the size of the tool declarations this takes one or two compactions; each gets its recap last.
    const all = compactions();
    expect(all.length).toBeGreaterThanOrEqual(1);
    for (const entry of all) {
      const tag = `${RECAP_PREFIX}${entry.id}]`;
      const first = h.requests.find((r) => recapsIn(r).some((t) => t.startsWith(tag)))!;
      expect(textOf(first[first.length - 1]).startsWith(tag)).toBe(true);
    }
    expect(recapsIn(lastRequest())).toHaveLength(1);
    expect(persistedRecaps()).toHaveLength(all.length);
  });

  it("starts no model turn when a threshold compaction follows the final answer; the recap waits for the next prompt", async () => {
    // Pi's defaults apart from a small window and the two sizes that make a threshold compaction reachable.
    h = await startHarness({
      contextWindow: 8_000,
      settings: { compaction: { reserveTokens: 2_000, keepRecentTokens: 500 } },
    });
    h.script([fauxAssistantMessage("short answer"), fauxAssistantMessage(`LONG-ANSWER ${"word ".repeat(4_500)}`)]);
    await h.session.prompt("first question");
    await h.session.prompt("explain everything at length");
    // The long answer crossed the threshold after the run ended: Pi compacted, and nothing else ran.
    expect(h.faux.state.callCount).toBe(2);
    const [entry] = compactions();
    expect(entry).toBeDefined();
    expect(persistedRecaps()).toHaveLength(0);
    const afterRun = branch();
    expect(afterRun[afterRun.length - 1].id).toBe(entry.id);

    h.script([fauxAssistantMessage("next answer")]);
    await h.session.prompt("NEXT-PROMPT");
    expect(h.faux.state.callCount).toBe(3);
    const request = lastRequest();
    const texts = request.map(textOf);
    expect(texts[texts.length - 1].startsWith(`${RECAP_PREFIX}${entry.id}]`)).toBe(true);
    expect(texts[texts.length - 2]).toBe("NEXT-PROMPT");
    expect(recapsIn(request)).toHaveLength(1);
    expect(persistedRecaps()).toHaveLength(1);
  });

  it("places the recap on the retry after an overflow compaction", async () => {
    h = await startHarness({ files: FILES, settings: SETTINGS });
    h.script([
      fauxAssistantMessage(`first ${"pad ".repeat(100)}`),
      fauxAssistantMessage("", {
        stopReason: "error",
        errorMessage: "prompt is too long: 300000 tokens > 200000 maximum",
      }),
      fauxAssistantMessage("recovered"),
    ]);
    await h.session.prompt("first task");
    await h.session.prompt(`OVERFLOWING-INPUT ${"y".repeat(400)}`);
    const [entry] = compactions();
    expect(entry).toBeDefined();
    const retry = lastRequest();
    expect(textOf(retry[retry.length - 1]).startsWith(`${RECAP_PREFIX}${entry.id}]`)).toBe(true);
    // The input that overflowed is in the checkpoint verbatim or in the tail, never lost.
    expect(JSON.stringify(retry)).toContain("OVERFLOWING-INPUT");
    expect(persistedRecaps()).toHaveLength(1);
  });

  it("works through reload and resume from the session file alone", async () => {
    const root = mkdtempSync(join(tmpdir(), "ctx-ledger-ckpt-"));
    roots.push(root);
    h = await startHarness({ files: FILES, settings: SETTINGS, persist: true, root });
    await workSession();
    await h.session.compact();
    const file = h.sessionFile()!;
    await h.dispose();

    // Resume: nothing ran after the compaction, so the next request is the first one after it.
    h = await startHarness({ settings: SETTINGS, sessionFile: file, root });
    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("RESUMED-INPUT");
    const [entry] = compactions();
    const first = lastRequest();
    expect(textOf(first[first.length - 1]).startsWith(`${RECAP_PREFIX}${entry.id}]`)).toBe(true);
    await h.dispose();

    // Reload again: the recap stays where it is in history and is not added twice.
    h = await startHarness({ settings: SETTINGS, sessionFile: file, root });
    h.script([fauxAssistantMessage("again")]);
    await h.session.prompt("RELOADED-INPUT");
    const request = lastRequest();
    expect(recapsIn(request)).toHaveLength(1);
    expect(textOf(request[request.length - 1])).toBe("RELOADED-INPUT");
    expect(persistedRecaps()).toHaveLength(1);
  });

  it("follows the branch through /tree and fork", async () => {
    const root = mkdtempSync(join(tmpdir(), "ctx-ledger-ckpt-"));
    roots.push(root);
    h = await startHarness({ files: FILES, settings: SETTINGS, persist: true, root });
    await workSession();
    await h.session.compact();
    const [entry] = compactions();
    h.script([fauxAssistantMessage("on main")]);
    await h.session.prompt("MAIN-INPUT");

    // /tree to before the compaction: no checkpoint on this branch, so no recap in view.
    const firstUser = branch().find((e) => e.type === "message" && e.message.role === "user")!;
    await h.session.navigateTree(firstUser.id, { summarize: false });
    h.script([fauxAssistantMessage("on side branch")]);
    await h.session.prompt("SIDE-INPUT");
    expect(recapsIn(lastRequest())).toHaveLength(0);
    expect(summaryIn(lastRequest())).toBeUndefined();

    // /tree back onto the compaction itself: a new branch after it gets its own recap, placed last.
    await h.session.navigateTree(entry.id, { summarize: false });
    h.script([fauxAssistantMessage("back")]);
    await h.session.prompt("BACK-INPUT");
    const back = lastRequest();
    expect(recapsIn(back)).toHaveLength(1);
    expect(textOf(back[back.length - 1]).startsWith(`${RECAP_PREFIX}${entry.id}]`)).toBe(true);

    // Fork a new session file ending at the compaction: the recap is derived from that file's branch.
    const forked = h.session.sessionManager.createBranchedSession(entry.id)!;
    await h.dispose();
    h = await startHarness({ settings: SETTINGS, sessionFile: forked, root });
    h.script([fauxAssistantMessage("forked")]);
    await h.session.prompt("FORK-INPUT");
    const fork = lastRequest();
    expect(recapsIn(fork)).toHaveLength(1);
    expect(textOf(fork[fork.length - 1]).startsWith(RECAP_PREFIX)).toBe(true);
    expect(summaryIn(fork)).toContain(USER_TEXT);
  });

  const sessionsDir = fileURLToPath(new URL("../../../shared/sessions/", import.meta.url));
  it.each(
    readdirSync(sessionsDir)
      .filter((f) => f.endsWith(".jsonl"))
      .sort(),
  )("compacts the real session %s through the extension", async (name) => {
    const root = mkdtempSync(join(tmpdir(), "ctx-ledger-real-"));
    roots.push(root);
    // Pi migrates legacy files when it opens them, so it works on a copy in the temp sandbox.
    const file = join(root, name);
    copyFileSync(join(sessionsDir, name), file);
    h = await startHarness({ sessionFile: file, root, contextWindow: 200_000 });
    const calls = h.faux.state.callCount;
    const result = await h.session.compact();
    expect(h.faux.state.callCount).toBe(calls);
    const entry = compactions().at(-1)!;
    const details = (entry.type === "compaction" ? entry.details : undefined) as {
      strategy: string;
      stats: { tokensAfter: number; summaryTokens: number };
    };
    expect(details.strategy).toBe("checkpoint");
    expect(details.stats.tokensAfter).toBeLessThan(result.tokensBefore);
    console.log(
      `${name} via extension: tokens before ${result.tokensBefore}, after ~${details.stats.tokensAfter} (checkpoint ${details.stats.summaryTokens})`,
    );
    h.script([fauxAssistantMessage("continuing")]);
    await h.session.prompt("continue");
    const request = lastRequest();
    expect(summaryIn(request)).toContain(INTRODUCTION[0]);
    expect(textOf(request[request.length - 1]).startsWith(`${RECAP_PREFIX}${entry.id}]`)).toBe(true);
  });
});
