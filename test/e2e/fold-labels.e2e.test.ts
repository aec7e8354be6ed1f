// Labels come from Pi's label store, wherever the label entry sits in the tree: a label set by context_checkpoint
// and then left behind by `/tree`, and one set from the tree view while the leaf was on another branch, both resolve
// as context_compact targets and both count when a new name must be unique. Issue 24, item 12.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { startHarness, userEntryId, visibleText, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const resultOf = (callId: string) => {
  const e = h!.session.sessionManager
    .getEntries()
    .find((x) => x.type === "message" && x.message.role === "toolResult" && x.message.toolCallId === callId);
  if (e?.type !== "message" || e.message.role !== "toolResult") return undefined;
  return { isError: e.message.isError, text: e.message.content.map((b) => (b.type === "text" ? b.text : "")).join("") };
};
const folds = () => branch().filter((e) => e.type === "custom_message" && e.customType === "context-ledger/fold");
const labelEntries = (name: string) =>
  h!.session.sessionManager.getEntries().filter((e) => e.type === "label" && e.label === name);

/** Task ONE, in which the model labels its own step "cp"; returns the labelled assistant entry's id. */
async function labelledTask(): Promise<string> {
  h!.script([
    fauxAssistantMessage([fauxToolCall("context_checkpoint", { name: "cp" }, { id: "k1" })], { stopReason: "toolUse" }),
    fauxAssistantMessage("labelled"),
  ]);
  await h!.session.prompt("task ONE");
  expect(resultOf("k1")?.text).toContain('Label "cp" set');
  const labelled = labelEntries("cp")[0];
  if (labelled?.type !== "label") throw new Error("no label entry");
  return labelled.targetId;
}

describe("fold labels from Pi's label store", () => {
  it("after /tree back to the labelled entry, context_compact resolves the label and folds after it", async () => {
    h = await startHarness();
    const labelled = await labelledTask();
    await h.session.navigateTree(labelled, { summarize: false });
    // The label entry is now off the active path; Pi still knows the label.
    expect(branch().some((e) => e.type === "label")).toBe(false);
    expect(h.session.sessionManager.getLabel(labelled)).toBe("cp");
    h.script([fauxAssistantMessage("two done")]);
    await h.session.prompt("task TWO OUT-TWO");
    h.script([
      fauxAssistantMessage([fauxToolCall("context_compact", { target: "cp", summary: "SUM-CP" }, { id: "f1" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("folded"),
    ]);
    await h.session.prompt("fold after cp");
    expect(h.faux.state.callCount).toBe(5);
    expect(resultOf("f1")).toEqual({ isError: false, text: expect.stringContaining("Compaction requested") });
    expect(folds()).toHaveLength(1);
    const seen = visibleText(h.requests.at(-1)!);
    expect(seen).toContain("SUM-CP");
    expect(seen).toContain("task ONE");
    expect(seen).not.toContain("OUT-TWO");
  });

  it("after /tree back to the labelled entry, a second context_checkpoint with the same name is refused", async () => {
    h = await startHarness();
    const labelled = await labelledTask();
    await h.session.navigateTree(labelled, { summarize: false });
    h.script([
      fauxAssistantMessage([fauxToolCall("context_checkpoint", { name: "cp" }, { id: "k2" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("ok"),
    ]);
    await h.session.prompt("label again");
    expect(h.faux.state.callCount).toBe(4);
    expect(resultOf("k2")).toEqual({ isError: true, text: expect.stringContaining('a label "cp" already exists') });
    expect(labelEntries("cp")).toHaveLength(1);
  });

  it("a label set from the tree view while the leaf was on another branch resolves on the active path", async () => {
    h = await startHarness();
    h.script([fauxAssistantMessage("one done")]);
    await h.session.prompt("task ONE");
    const firstAnswer = branch().at(-1)!.id;
    h.script([fauxAssistantMessage("two done")]);
    await h.session.prompt("task TWO");
    // The tree view labels an entry with the leaf where it is (as Pi's interactive tree selector does).
    const one = userEntryId(h.session, "task ONE");
    h.session.sessionManager.appendLabelChange(one, "mark");
    // Continue on a new branch from the first answer: the label entry stays on the old branch.
    await h.session.navigateTree(firstAnswer, { summarize: false });
    expect(branch().some((e) => e.type === "label")).toBe(false);
    h.script([fauxAssistantMessage("three done")]);
    await h.session.prompt("task THREE OUT-THREE");
    h.script([
      fauxAssistantMessage([fauxToolCall("context_compact", { target: "mark", summary: "SUM-MARK" }, { id: "f2" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("folded"),
    ]);
    await h.session.prompt("fold after mark");
    expect(resultOf("f2")).toEqual({ isError: false, text: expect.stringContaining("Compaction requested") });
    expect(folds()).toHaveLength(1);
    const seen = visibleText(h.requests.at(-1)!);
    expect(seen).toContain("SUM-MARK");
    expect(seen).toContain("task ONE");
    expect(seen).not.toContain("OUT-THREE");
  });
});
