// Item: a native compaction after a preserve checkpoint (the overflow route). The live request filter and the pure
// projection must give the same order: the compaction summary first, then the kept entries in their file order.
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { LiveLedger } from "../../../src/projection/live-ledger.ts";
import { projectBranch } from "../../../src/projection/project.ts";
import { extractiveCheckpoint } from "../../../src/strategies/preserve/checkpoint.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { appendDraft } from "./fixtures.ts";
import { LEDGER_FACTS } from "../../../src/strategies/catalog.ts";

const label = (m: AgentMessage): string => {
  const x = m as { role: string; customType?: string; content?: unknown };
  if (x.role === "custom") return `custom:${x.customType}`;
  if (x.role === "assistant") return `assistant:${JSON.stringify(x.content).slice(0, 40)}`;
  return x.role;
};

function liveRequest(b: LedgerBuilder): AgentMessage[] {
  const live = new LiveLedger(LEDGER_FACTS);
  const byId = b.byId();
  live.sync(b.leaf, (id) => byId.get(id));
  const request = structuredClone(buildSessionProjection(b.entries, b.leaf, byId).messages);
  return live.filterContext(request) ?? request;
}

describe("preserve checkpoint, then a native compaction that keeps from the current batch", () => {
  it("regression: live and pure projection both give [compactionSummary, kept batch, checkpoint#1, …]", () => {
    const b = new LedgerBuilder();
    b.user("Find the bug.");
    const first = b.tool("read", { path: "a.ts" }, "A".repeat(400));
    const current = b.tool("read", { path: "b.ts" }, "B".repeat(400));
    // turn_end after the current batch: checkpoint #1 covers the older batch only.
    const cp = extractiveCheckpoint(b.entries, first.result);
    if (!cp.ok) throw new Error(cp.error);
    const cpId = appendDraft(b, cp.draft);
    // Overflow: Pi compacts natively and keeps from the current batch's assistant message.
    b.compaction(current.call, "native summary of the start");
    b.user("go on");

    const pure = projectBranch(b.entries, LEDGER_FACTS).messages;
    const live = liveRequest(b);
    expect(pure.map(label)).toEqual([
      "compactionSummary",
      expect.stringContaining("assistant"),
      "toolResult",
      "custom:context-ledger/preserve",
      "user",
    ]);
    expect(live).toEqual(pure);
    expect(
      projectBranch(b.entries, LEDGER_FACTS)
        .entries.filter((e) => e.messages.length)
        .map((e) => e.sourceEntry.id),
    ).toContain(cpId);
  });

  it("regression: a checkpoint whose range ends at the compaction sits right after the summary in both views", () => {
    const b = new LedgerBuilder();
    b.user("Find the bug.");
    const kept = b.tool("read", { path: "a.ts" }, "A".repeat(400));
    const compaction = b.compaction(kept.call, "native summary");
    b.user("and b.ts?");
    b.tool("read", { path: "b.ts" }, "B".repeat(400));
    const cp = extractiveCheckpoint(b.entries, compaction);
    if (!cp.ok) throw new Error(cp.error);
    appendDraft(b, cp.draft);
    const pure = projectBranch(b.entries, LEDGER_FACTS).messages;
    expect(pure.map(label).slice(0, 3)).toEqual(["compactionSummary", "custom:context-ledger/preserve", "user"]);
    expect(liveRequest(b)).toEqual(pure);
  });
});
