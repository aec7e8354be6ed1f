// Fold behaviours across the session lifecycle: overlap, reload, /tree, native summarization, aborts, steering.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import type { ExtensionAPI, SessionEntry } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { startHarness, userEntryId, visibleText, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const visible = visibleText;
const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const userId = (needle: string) => userEntryId(h!.session, needle);
const resultOf = (callId: string) =>
  JSON.stringify(
    branch().find((x) => x.type === "message" && x.message.role === "toolResult" && x.message.toolCallId === callId),
  );
const foldCount = () =>
  branch().filter((e) => e.type === "custom_message" && e.customType === "context-ledger/fold").length;
const compact =
  (target: string | (() => string), summary: string, id = `compact-${summary}`, extra: Record<string, unknown> = {}) =>
  () =>
    fauxAssistantMessage(
      [
        fauxToolCall(
          "context_compact",
          { target: typeof target === "function" ? target() : target, summary, ...extra },
          { id },
        ),
      ],
      { stopReason: "toolUse" },
    );

async function twoTasks(): Promise<void> {
  h!.script([fauxAssistantMessage("one done")]);
  await h!.session.prompt("task ONE");
  h!.script([
    fauxAssistantMessage([fauxToolCall("bash", { command: "echo OUT-TWO" })], { stopReason: "toolUse" }),
    fauxAssistantMessage("two done"),
  ]);
  await h!.session.prompt("task TWO");
}

describe("fold across the lifecycle", () => {
  it("repeated and overlapping folds: a later root fold also hides the earlier summary", async () => {
    h = await startHarness();
    await twoTasks();
    h.script([compact(() => userId("ONE"), "SUM-A"), fauxAssistantMessage("a")]);
    await h.session.prompt("fold two");
    expect(visible(h.requests.at(-1)!)).toContain("SUM-A");
    h.script([compact("root", "SUM-B"), fauxAssistantMessage("b")]);
    await h.session.prompt("fold all");
    const seen = visible(h.requests.at(-1)!);
    expect(seen).toContain("SUM-B");
    expect(seen).not.toContain("SUM-A");
    expect(seen).not.toContain("task ONE");
    expect(foldCount()).toBe(2);
  });

  it("a target inside folded history is rejected with the shared wording", async () => {
    h = await startHarness();
    await twoTasks();
    const two = userId("TWO");
    h.script([compact(() => userId("ONE"), "SUM-A"), fauxAssistantMessage("a")]);
    await h.session.prompt("fold");
    h.script([compact(two, "SUM-X", "inside"), fauxAssistantMessage("x")]);
    await h.session.prompt("again");
    expect(resultOf("inside")).toContain("inside history that was already compacted");
    expect(foldCount()).toBe(1);
  });

  it("the target's own tool results stay visible next to it", async () => {
    h = await startHarness();
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "echo TARGET-RESULT" }, { id: "t1" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("noted"),
    ]);
    await h.session.prompt("run it");
    const target = branch().find(
      (e) => e.type === "message" && e.message.role === "assistant" && JSON.stringify(e.message.content).includes("t1"),
    )!.id;
    h.script([compact(target, "SUM"), fauxAssistantMessage("ok")]);
    await h.session.prompt("fold after the call");
    const seen = visible(h.requests.at(-1)!);
    expect(seen).toContain("TARGET-RESULT");
    expect(seen).not.toContain("noted");
    // Pairing: the kept call keeps its result.
    const last = h.requests.at(-1)!;
    const callIds = last.flatMap((m) =>
      m.role === "assistant" ? m.content.filter((b) => b.type === "toolCall").map((b) => b.id) : [],
    );
    const resultIds = last.flatMap((m) => (m.role === "toolResult" ? [m.toolCallId] : []));
    expect(resultIds.sort()).toEqual(callIds.sort());
  });

  it("survives reload: the reopened session sends the same folded request", async () => {
    h = await startHarness({ persist: true });
    await twoTasks();
    h.script([compact(() => userId("ONE"), "SUM-R"), fauxAssistantMessage("r")]);
    await h.session.prompt("fold");
    h.script([fauxAssistantMessage("before reload")]);
    await h.session.prompt("NEXT");
    const before = h.requests.at(-1)!;
    const file = h.sessionFile()!;
    const root = h.root;
    await h.session.dispose();
    h = await startHarness({ root, sessionFile: file });
    // Re-run the same step: branch back to before NEXT and ask again.
    const nextUser = userId("NEXT");
    const parent = branch().find((e) => e.id === nextUser)!.parentId!;
    await h.session.navigateTree(parent, { summarize: false });
    h.script([fauxAssistantMessage("after reload")]);
    await h.session.prompt("NEXT");
    const after = h.requests.at(-1)!;
    const strip = (ms: Message[]) => ms.filter((m) => m.role !== "system").map((m) => ({ ...m, timestamp: 0 }));
    expect(strip(after)).toEqual(strip(before));
    expect(visible(after)).not.toContain("OUT-TWO");
  });

  it("/tree to before the fold brings the folded history back", async () => {
    h = await startHarness();
    await twoTasks();
    h.script([compact(() => userId("ONE"), "SUM-T"), fauxAssistantMessage("t")]);
    await h.session.prompt("fold");
    const foldId = branch().find((e) => e.type === "custom_message" && e.customType === "context-ledger/fold")!;
    await h.session.navigateTree(foldId.parentId!, { summarize: false });
    h.script([fauxAssistantMessage("back")]);
    await h.session.prompt("where are we");
    const seen = visible(h.requests.at(-1)!);
    expect(seen).toContain("OUT-TWO");
    expect(seen).not.toContain("Context compacted"); // the fold summary is off this branch
  });

  it("native compaction summarizes only the unfolded history and the range still applies after it", async () => {
    h = await startHarness({
      ledgerSettings: { strategy: "native" },
      settings: { compaction: { enabled: true, reserveTokens: 1000, keepRecentTokens: 1 } },
    });
    await twoTasks();
    h.script([compact(() => userId("ONE"), "SUM-N"), fauxAssistantMessage("n")]);
    await h.session.prompt("fold");
    let summarizerSaw = "";
    // Pi may summarize the history and a split turn's prefix separately: record both requests.
    const summarize = (text: string) => (ctx: { messages: unknown[] }) => {
      summarizerSaw += JSON.stringify(ctx.messages);
      return fauxAssistantMessage(text);
    };
    h.script([summarize("NATIVE-SUMMARY"), summarize("PREFIX-SUMMARY")]);
    await h.session.compact();
    expect(summarizerSaw).toContain("SUM-N");
    expect(summarizerSaw).not.toContain("OUT-TWO");
    h.script([fauxAssistantMessage("after")]);
    await h.session.prompt("continue");
    const seen = visible(h.requests.at(-1)!);
    expect(seen).toContain("NATIVE-SUMMARY");
    expect(seen).not.toContain("OUT-TWO");
  });

  it("an aborted step cancels the fold", async () => {
    const waiter = (pi: ExtensionAPI) =>
      pi.registerTool({
        name: "wait_for_abort",
        label: "wait",
        description: "waits until aborted",
        parameters: Type.Object({}),
        execute: async (_id, _p, signal) => {
          setTimeout(() => void h!.session.abort(), 20);
          await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }));
          return { content: [{ type: "text", text: "aborted" }], details: undefined };
        },
      });
    h = await startHarness({ extensions: [waiter] });
    h.script([fauxAssistantMessage("one done")]);
    await h.session.prompt("task ONE");
    h.script([
      () =>
        fauxAssistantMessage(
          [
            fauxToolCall("context_compact", { target: userId("ONE"), summary: "SUM" }),
            fauxToolCall("wait_for_abort", {}),
          ],
          { stopReason: "toolUse" },
        ),
    ]);
    await h.session.prompt("fold then abort");
    await h.session.agent.waitForIdle?.();
    expect(foldCount()).toBe(0);
    const notice = branch().find((e) => e.type === "custom_message" && e.customType === "context-ledger/notice");
    expect(JSON.stringify(notice)).toMatch(/abort|interrupt/);
  });

  it("backup labels must be new, and a sibling context_checkpoint cannot take a pending backup label", async () => {
    h = await startHarness();
    h.script([
      fauxAssistantMessage([fauxToolCall("context_checkpoint", { name: "cp1" }, { id: "cp" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("labelled"),
    ]);
    await h.session.prompt("label");
    expect(resultOf("cp")).toContain('Label \\"cp1\\" set');
    h.script([
      () =>
        fauxAssistantMessage(
          [fauxToolCall("context_compact", { target: "cp1", summary: "S", backupCheckpoint: "cp1" }, { id: "clash" })],
          { stopReason: "toolUse" },
        ),
      () =>
        fauxAssistantMessage(
          [
            fauxToolCall(
              "context_compact",
              { target: "cp1", summary: "S2", backupCheckpoint: "before-fold" },
              { id: "ok" },
            ),
            fauxToolCall("context_checkpoint", { name: "before-fold" }, { id: "sibling" }),
          ],
          { stopReason: "toolUse" },
        ),
      fauxAssistantMessage("done"),
    ]);
    await h.session.prompt("fold with backup");
    expect(resultOf("clash")).toContain("already exists");
    expect(resultOf("sibling")).toContain("already exists");
    expect(foldCount()).toBe(1);
    const labels = branch()
      .filter((e) => e.type === "label")
      .map((e) => (e as { label?: string }).label);
    expect(labels).toEqual(["cp1", "before-fold"]);
  });

  it("steering queued during the fold lands after the summary", async () => {
    const steerer = (pi: ExtensionAPI) =>
      pi.registerTool({
        name: "steer_now",
        label: "steer",
        description: "queues a steering message",
        parameters: Type.Object({}),
        execute: async () => {
          await h!.session.steer("STEERED-INPUT");
          return { content: [{ type: "text", text: "queued" }], details: undefined };
        },
      });
    h = await startHarness({ extensions: [steerer] });
    h.script([fauxAssistantMessage("one done")]);
    await h.session.prompt("task ONE");
    h.script([
      () =>
        fauxAssistantMessage(
          [fauxToolCall("context_compact", { target: userId("ONE"), summary: "SUM-S" }), fauxToolCall("steer_now", {})],
          { stopReason: "toolUse" },
        ),
      fauxAssistantMessage("handled"),
    ]);
    await h.session.prompt("fold while steering");
    expect(foldCount()).toBe(1);
    const seen = visible(h.requests.at(-1)!);
    expect(seen.indexOf("SUM-S")).toBeGreaterThan(-1);
    expect(seen.indexOf("STEERED-INPUT")).toBeGreaterThan(seen.indexOf("SUM-S"));
  });
});
