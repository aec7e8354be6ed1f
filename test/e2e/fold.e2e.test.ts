// Fold strategy end to end: a real AgentSession on the faux provider; assertions read the provider requests.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { startHarness, userEntryId, visibleText, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const text = visibleText;
const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const idOfUser = (needle: string) => userEntryId(h!.session, needle);
const toolResultText = (callId: string) => {
  const e = branch().find(
    (x) => x.type === "message" && x.message.role === "toolResult" && x.message.toolCallId === callId,
  );
  return e?.type === "message" ? JSON.stringify(e.message) : undefined;
};

describe("fold e2e", () => {
  it("folds history after the target at turn_end and keeps it out of later requests", async () => {
    h = await startHarness();
    h.script([fauxAssistantMessage("finished task one")]);
    await h.session.prompt("task one: KEEP-ONE");
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "echo noisy-output-FOLDED" })], { stopReason: "toolUse" }),
      () =>
        fauxAssistantMessage(
          [
            fauxToolCall("bash", { command: "echo sibling-SAME-STEP" }),
            fauxToolCall(
              "context_compact",
              { target: idOfUser("KEEP-ONE"), summary: "SUMMARY-OF-TWO" },
              { id: "compact-1" },
            ),
          ],
          { stopReason: "toolUse" },
        ),
      fauxAssistantMessage("after fold"),
    ]);
    await h.session.prompt("task two: FOLD-ME");
    const last = h.requests[h.requests.length - 1];
    const seen = text(last);
    expect(toolResultText("compact-1")).toContain("Compaction requested");
    expect(seen).toContain("KEEP-ONE");
    expect(seen).toContain("SUMMARY-OF-TWO");
    expect(seen).toContain("sibling-SAME-STEP"); // same-step output carried in the summary
    expect(seen).not.toContain("FOLD-ME");
    expect(seen).not.toContain("noisy-output-FOLDED");
    expect(seen).not.toContain("context_compact"); // the requesting call and its result are folded together
    // The transcript (session file) still holds everything.
    expect(JSON.stringify(branch())).toContain("noisy-output-FOLDED");
    const folds = branch().filter((e) => e.type === "custom_message" && e.customType === "context-ledger/fold");
    expect(folds).toHaveLength(1);
  });

  it("rejects an invented target with a clear message and folds nothing", async () => {
    h = await startHarness();
    h.script([
      fauxAssistantMessage([fauxToolCall("context_compact", { target: "current", summary: "S" }, { id: "bad" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("ok"),
    ]);
    await h.session.prompt("hello INVENTED");
    expect(toolResultText("bad")).toMatch(/not found/);
    expect(text(h.requests[1])).toContain("INVENTED");
    expect(branch().some((e) => e.type === "custom_message" && e.customType === "context-ledger/fold")).toBe(false);
  });

  it("two compacts in one step cancel both and tell the model", async () => {
    h = await startHarness();
    h.script([
      fauxAssistantMessage(
        [
          fauxToolCall("context_compact", { target: "root", summary: "A" }, { id: "c1" }),
          fauxToolCall("context_compact", { target: "root", summary: "B" }, { id: "c2" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("ok"),
    ]);
    await h.session.prompt("double TWICE");
    const seen = text(h.requests[1]);
    expect(seen).toContain("TWICE");
    expect(seen).toMatch(/cancelled and nothing was folded/);
    expect(branch().some((e) => e.type === "custom_message" && e.customType === "context-ledger/fold")).toBe(false);
  });

  it("two compacts in one step whose first was refused at the call still append the cancellation notice", async () => {
    h = await startHarness();
    h.script([
      fauxAssistantMessage(
        [
          fauxToolCall("context_compact", { target: "no-such-label", summary: "A" }, { id: "c1" }),
          fauxToolCall("context_compact", { target: "root", summary: "B" }, { id: "c2" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("ok"),
    ]);
    await h.session.prompt("double REFUSED-FIRST");
    expect(h.faux.state.callCount).toBe(2);
    expect(toolResultText("c1")).toMatch(/not found/);
    expect(toolResultText("c2")).toMatch(/once per step/);
    const notices = branch().filter((e) => e.type === "custom_message" && e.customType === "context-ledger/notice");
    expect(notices).toHaveLength(1);
    const seen = text(h.requests[1]);
    expect(seen).toContain("REFUSED-FIRST");
    expect(seen).toMatch(/context_compact was cancelled and nothing was folded/);
    expect(branch().some((e) => e.type === "custom_message" && e.customType === "context-ledger/fold")).toBe(false);
  });
});
