// What `/context` and `/context restore` tell a person, on Pi's default settings: a checkpoint compaction's counts,
// usage after a restore, the restore list, a second restore, an unknown subcommand. Issue 24, items 21 and 22.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { entryMessages } from "../../src/projection/project.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const lastNotice = () => h!.notices.at(-1)?.message ?? "";

/** Three small tasks, then a long answer: enough history for Pi's default cut, then `/compact` (checkpoint). */
async function compactedSession(): Promise<SessionEntry & { type: "compaction" }> {
  h!.script([
    fauxAssistantMessage([fauxToolCall("bash", { command: "echo one" })], { stopReason: "toolUse" }),
    fauxAssistantMessage("one done"),
    fauxAssistantMessage("two done"),
    fauxAssistantMessage(`LONG ${"explanation ".repeat(9_000)}`),
  ]);
  await h!.session.prompt("task ONE");
  await h!.session.prompt("task TWO");
  await h!.session.prompt("explain at length");
  await h!.session.compact();
  const compaction = branch().find((e) => e.type === "compaction");
  if (compaction?.type !== "compaction") throw new Error("no compaction");
  return compaction;
}

describe("/context figures", () => {
  it("after a checkpoint compaction, counts what it summarized on the branch line and on its own line", async () => {
    h = await startHarness();
    const compaction = await compactedSession();
    const path = branch();
    const kept = path.findIndex((e) => e.id === compaction.firstKeptEntryId);
    const summarized = path.slice(0, kept).filter((e) => e.type !== "compaction" && entryMessages(e).length > 0).length;
    expect(summarized).toBeGreaterThan(3);
    await h.session.prompt("/context");
    const text = lastNotice();
    expect(text).toContain(`, 0 hidden by ranges, ${summarized} summarized by compactions`);
    expect(text).toMatch(
      new RegExp(
        `compaction ${compaction.id}: checkpoint, kept from \\S+; summarized ${summarized} entries \\(~[\\d,]+ tokens\\), summary ~[\\d,]+ tokens`,
      ),
    );
  });

  it("after /context restore, the usage shown is the ledger's estimate, marked as one, not Pi's figure from before", async () => {
    h = await startHarness();
    await compactedSession();
    h.script([fauxAssistantMessage("after")]);
    await h.session.prompt("go on");
    const before = h.session.getContextUsage()?.tokens;
    expect(before).toBeGreaterThan(0);
    await h.session.prompt("/context restore last");
    expect(lastNotice()).toMatch(/Context now ~[\d,]+ tokens/);
    await h.session.prompt("/context");
    const usage = lastNotice()
      .split("\n")
      .find((l) => l.includes("usage:"))!;
    expect(usage).toMatch(/usage: ~[\d,]+ \/ 128,000 tokens \(estimated: the context changed after Pi's last figure/);
    expect(usage.startsWith(`  usage: ${before!.toLocaleString("en-US")} `)).toBe(false);
  });

  it("lists what can be restored in plain words, says a second restore was already undone, and shows usage for an unknown subcommand", async () => {
    h = await startHarness();
    const compaction = await compactedSession();
    await h.session.prompt("/context restore");
    const listing = lastNotice();
    expect(listing).not.toMatch(/Restorable acts/);
    expect(listing).toMatch(/^What you can bring back on this branch/);
    expect(listing).toContain(`  ${compaction.id} checkpoint compaction`);
    await h.session.prompt("/context restore last");
    await h.session.prompt("/context restore last");
    expect(lastNotice()).toMatch(/already undone/);
    expect(lastNotice()).not.toMatch(/nothing to restore/);
    await h.session.prompt("/context bogus");
    expect(h.notices.at(-1)).toEqual({
      type: "error",
      message: expect.stringMatching(/^context: unknown subcommand "bogus"\. Usage: \/context/),
    });
  });
});
