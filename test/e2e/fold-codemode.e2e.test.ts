// A fold requested from inside a codemode script: the request belongs to the script's parent step.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { createCodemodeExtension } from "@earendil-works/pi-coding-agent";
import { startHarness, userEntryId, visibleText, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});
const userId = (needle: string) => userEntryId(h!.session, needle);

describe("fold from codemode", () => {
  it("a script that compacts and keeps running folds at the end of its step, carrying only the script output", async () => {
    h = await startHarness({ extensions: [createCodemodeExtension()], settings: { defaultTools: ["+codemode"] } });
    h.script([fauxAssistantMessage("one done")]);
    await h.session.prompt("task ONE-CM");
    const one = h.session.sessionManager.getBranch().find((e) => e.type === "message" && e.message.role === "user")!.id;
    const script = [
      `const r = await tools.bash({ command: "echo SCRIPT-SIDE-OUTPUT" });`,
      `await tools.context_compact({ target: ${JSON.stringify(one)}, summary: "SUM-CM" });`,
      `text("after compact: " + r.output.trim());`,
    ].join("\n");
    h.script([
      fauxAssistantMessage([fauxToolCall("codemode", { code: script } as never)], { stopReason: "toolUse" }),
      fauxAssistantMessage("after"),
    ]);
    await h.session.prompt("run a script FOLDED-CM");
    const result = h.session.sessionManager
      .getBranch()
      .find((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolName === "codemode");
    const seen = JSON.stringify(h.requests.at(-1)!.filter((m) => m.role !== "system"));
    expect(JSON.stringify(result)).toContain("Script completed");
    expect(seen).toContain("SUM-CM");
    expect(seen).toContain("after compact: SCRIPT-SIDE-OUTPUT");
    expect(seen).not.toContain("FOLDED-CM");
    expect(seen).not.toContain("tools.bash"); // the script source is not carried
  });

  it("does not copy the output of a script that only called context tools: its timeline lists ids the fold hides", async () => {
    h = await startHarness({ extensions: [createCodemodeExtension()], settings: { defaultTools: ["+codemode"] } });
    h.script([fauxAssistantMessage("one done")]);
    await h.session.prompt("task ONE-CT");
    const one = userId("ONE-CT");
    const script = [
      `const t = await tools.context_timeline({});`,
      `await tools.context_compact({ target: ${JSON.stringify(one)}, summary: "SUM-CT" });`,
      `text("TIMELINE-DUMP " + JSON.stringify(t));`,
    ].join("\n");
    h.script([
      fauxAssistantMessage([fauxToolCall("codemode", { code: script } as never)], { stopReason: "toolUse" }),
      fauxAssistantMessage("after"),
    ]);
    await h.session.prompt("inspect then fold FOLDED-CT");
    expect(h.faux.state.callCount).toBe(3);
    const result = h.session.sessionManager
      .getBranch()
      .find((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolName === "codemode");
    expect(JSON.stringify(result)).toContain("TIMELINE-DUMP");
    const seen = visibleText(h.requests.at(-1)!);
    expect(seen).toContain("SUM-CT");
    expect(seen).not.toContain("FOLDED-CT");
    expect(seen).not.toContain("TIMELINE-DUMP");
  });

  it("keeps the fold when the script throws after context_compact, with its output and the error", async () => {
    h = await startHarness({ extensions: [createCodemodeExtension()], settings: { defaultTools: ["+codemode"] } });
    h.script([fauxAssistantMessage("one done")]);
    await h.session.prompt("task ONE-TH");
    const one = userId("ONE-TH");
    const script = [
      `await tools.context_compact({ target: ${JSON.stringify(one)}, summary: "SUM-TH" });`,
      `text("PARTIAL-OUT");`,
      `throw new Error("SCRIPT-BOOM");`,
    ].join("\n");
    h.script([
      fauxAssistantMessage([fauxToolCall("codemode", { code: script } as never)], { stopReason: "toolUse" }),
      fauxAssistantMessage("after"),
    ]);
    await h.session.prompt("fold then fail FOLDED-TH");
    expect(h.faux.state.callCount).toBe(3);
    const branch = h.session.sessionManager.getBranch();
    expect(branch.filter((e) => e.type === "custom_message" && e.customType === "context-ledger/fold")).toHaveLength(1);
    expect(branch.some((e) => e.type === "custom_message" && e.customType === "context-ledger/notice")).toBe(false);
    const seen = visibleText(h.requests.at(-1)!);
    expect(seen).toContain("SUM-TH");
    expect(seen).toContain("SCRIPT-BOOM");
    expect(seen).toContain("codemode (error)");
    expect(seen).not.toContain("FOLDED-TH");
  });

  it("reports files a script changed in the file lists of Pi's native summary", async () => {
    h = await startHarness({
      extensions: [createCodemodeExtension()],
      settings: { defaultTools: ["+codemode"] },
      ledgerSettings: { strategy: "native" },
    });
    h.script([fauxAssistantMessage("one done")]);
    await h.session.prompt("task ONE-FM");
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "echo OUT-TWO-FM" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("two done"),
    ]);
    await h.session.prompt("task TWO-FM");
    // A fold makes the hook rebuild Pi's file lists from the unfolded messages.
    h.script([
      () =>
        fauxAssistantMessage([fauxToolCall("context_compact", { target: userId("ONE-FM"), summary: "SUM-FM" })], {
          stopReason: "toolUse",
        }),
      fauxAssistantMessage("folded"),
    ]);
    await h.session.prompt("fold task two");
    const script = [
      `await tools.write({ path: "made-by-script.txt", content: "x" });`,
      `await tools.read({ path: "made-by-script.txt" });`,
      `text("wrote it");`,
    ].join("\n");
    h.script([
      fauxAssistantMessage([fauxToolCall("codemode", { code: script } as never)], { stopReason: "toolUse" }),
      fauxAssistantMessage("script done"),
    ]);
    await h.session.prompt("write a file from a script");
    // A long answer pushes the script out of the recent tail Pi keeps by default.
    h.script([fauxAssistantMessage(`LONG ${"explanation ".repeat(9_000)}`)]);
    await h.session.prompt("explain at length");
    let summarizerSaw = "";
    const summarize = (text: string) => (ctx: { messages: unknown[] }) => {
      summarizerSaw += JSON.stringify(ctx.messages);
      return fauxAssistantMessage(text);
    };
    h.script([summarize("NATIVE-SUMMARY"), summarize("PREFIX-SUMMARY")]);
    await h.session.compact();
    const entry = h.session.sessionManager.getBranch().find((e) => e.type === "compaction")!;
    const details = (entry.type === "compaction" ? entry.details : undefined) as {
      readFiles?: string[];
      modifiedFiles?: string[];
    };
    expect(details.modifiedFiles).toContain("made-by-script.txt");
    expect(details.readFiles ?? []).not.toContain("made-by-script.txt");
    // The summarizer saw the fold summary and the script, not the folded history.
    expect(summarizerSaw).toContain("SUM-FM");
    expect(summarizerSaw).not.toContain("OUT-TWO-FM");
  });
});
