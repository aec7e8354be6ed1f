// A fold appends O(1) records whatever the amount of history it hides: one range rule, never one record per entry.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { LedgerBuilder } from "../support/ledger-builder.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

async function foldAfter(seeded: number): Promise<{ appended: number; ruleBytes: number; hidden: number }> {
  const b = new LedgerBuilder();
  b.user("first");
  while (b.entries.length < seeded) {
    b.assistant("", [{ id: `c${b.entries.length}`, name: "bash", args: { command: "echo x" } }]);
    b.toolResult(`c${b.entries.length - 1}`, "bash", `output ${b.entries.length}`);
    b.assistant("step done");
    b.user(`next ${b.entries.length}`);
  }
  h = await startHarness({ seedEntries: b.entries });
  const before = h.session.sessionManager.getEntries().length;
  h.script([
    fauxAssistantMessage([fauxToolCall("context_compact", { target: "root", summary: "everything so far" })], {
      stopReason: "toolUse",
    }),
    (ctx) => fauxAssistantMessage(`saw ${ctx.messages.length} messages`),
  ]);
  await h.session.prompt("fold it all");
  const entries = h.session.sessionManager.getEntries();
  const fold = entries.find((e) => e.type === "custom_message" && e.customType === "context-ledger/fold")!;
  const visible = h.requests.at(-1)!.filter((m) => m.role !== "system").length;
  const result = {
    appended: entries.length - before,
    ruleBytes: JSON.stringify((fold as { details: unknown }).details).length,
    hidden: seeded - visible,
  };
  await h.dispose();
  h = undefined;
  return result;
}

describe("fold records have constant size", () => {
  it("appends the same number of records at 20 and at 2,000 seeded entries", async () => {
    const small = await foldAfter(20);
    const large = await foldAfter(2_000);
    expect(large.hidden).toBeGreaterThan(1_900);
    expect(large.appended).toBe(small.appended);
    expect(large.ruleBytes).toBe(small.ruleBytes);
  });
});
