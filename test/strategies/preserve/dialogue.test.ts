// What a preserve range keeps of the dialogue: completed answers keep their visible text verbatim while their
// reasoning is technical state; and a checkpoint marker (written so a manual /compact ends as a success) leaves
// the model view as it was. The live request filter must give exactly the pure projection in both cases.
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { LiveLedger } from "../../../src/projection/live-ledger.ts";
import { projectBranch } from "../../../src/projection/project.ts";
import { extractiveCheckpoint } from "../../../src/strategies/preserve/checkpoint.ts";
import { selectDelta } from "../../../src/strategies/shared/delta.ts";
import { renderUnit } from "../../../src/strategies/preserve/prompt.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { appendDraft } from "./fixtures.ts";
import { LEDGER_FACTS } from "../../../src/strategies/catalog.ts";

function liveRequest(b: LedgerBuilder): AgentMessage[] {
  const live = new LiveLedger(LEDGER_FACTS);
  const byId = b.byId();
  live.sync(b.leaf, (id) => byId.get(id));
  const request = structuredClone(buildSessionProjection(b.entries, b.leaf, byId).messages);
  return live.filterContext(request) ?? request;
}

const blocksOf = (messages: AgentMessage[], text: string) =>
  (
    messages.find((m) => m.role === "assistant" && JSON.stringify(m.content).includes(text)) as
      | Extract<AgentMessage, { role: "assistant" }>
      | undefined
  )?.content;

describe("completed answers inside a preserve range", () => {
  function session() {
    const b = new LedgerBuilder();
    b.user("Why does it loop?");
    b.tool("read", { path: "a.ts" }, "A".repeat(200));
    const answer = b.assistant("ANSWER-1: nextDelay never caps.", [], { thinking: "REASONING-1 long private chain" });
    b.user("Fix it.");
    const edit = b.tool("edit", { path: "a.ts" }, "ok");
    b.tool("bash", { command: "npm test" }, "12 passed"); // the current batch
    return { b, answer, edit };
  }

  it("keeps the visible text verbatim and drops the reasoning, in both views", () => {
    const { b, edit } = session();
    const cp = extractiveCheckpoint(b.entries, edit.result);
    if (!cp.ok) throw new Error(cp.error);
    appendDraft(b, cp.draft);
    const pure = projectBranch(b.entries, LEDGER_FACTS).messages;
    expect(blocksOf(pure, "ANSWER-1")).toEqual([{ type: "text", text: "ANSWER-1: nextDelay never caps." }]);
    expect(JSON.stringify(pure)).not.toContain("REASONING-1");
    expect(liveRequest(b)).toEqual(pure);
  });

  it("keeps an answer's reasoning while no checkpoint covers it", () => {
    const { b } = session();
    const pure = projectBranch(b.entries, LEDGER_FACTS).messages;
    expect(JSON.stringify(blocksOf(pure, "ANSWER-1"))).toContain("REASONING-1");
  });

  it("puts the reasoning in the delta as its own unit, the visible text never", () => {
    const { b, answer, edit } = session();
    const delta = selectDelta(b.entries, edit.result)!;
    const unit = delta.units.find((u) => u.entryIds.includes(answer))!;
    expect(unit.ordinal).toBe(1);
    const rendered = renderUnit(unit);
    expect(rendered).toContain("REASONING-1");
    expect(rendered).not.toContain("ANSWER-1");
  });

  it("an answer with nothing but reasoning is technical state and is hidden whole", () => {
    const b = new LedgerBuilder();
    b.user("Think.");
    const silent = b.assistant("", [], { thinking: "ONLY-REASONING" });
    b.user("Now act.");
    const step = b.tool("read", { path: "a.ts" }, "A");
    const cp = extractiveCheckpoint(b.entries, step.result);
    if (!cp.ok) throw new Error(cp.error);
    appendDraft(b, cp.draft);
    const pure = projectBranch(b.entries, LEDGER_FACTS);
    expect(pure.entries.find((e) => e.sourceEntry.id === silent)?.messages).toEqual([]);
    expect(liveRequest(b)).toEqual(pure.messages);
  });
});

describe("checkpoint marker (manual /compact)", () => {
  const marker = (checkpoint: number) => ({ v: 1, strategy: "preserve", checkpoint });

  it("without an earlier compaction the view keeps no summary at its head", () => {
    const b = new LedgerBuilder();
    const first = b.user("Find the bug.");
    const step = b.tool("read", { path: "a.ts" }, "A".repeat(200));
    b.assistant("DONE-1");
    const cp = extractiveCheckpoint(b.entries, b.leaf!);
    if (!cp.ok) throw new Error(cp.error);
    appendDraft(b, cp.draft);
    const before = projectBranch(b.entries, LEDGER_FACTS).messages;
    b.compaction(first, cp.draft.content, marker(1));
    const after = projectBranch(b.entries, LEDGER_FACTS).messages;
    expect(after.map((m) => m.role)).toEqual(["user", "assistant", "custom"]);
    expect(after).toEqual(before);
    expect(liveRequest(b)).toEqual(after);
    expect(JSON.stringify(after)).not.toContain(step.call);
  });

  it("restates the summary of the native compaction it follows, byte for byte", () => {
    const b = new LedgerBuilder();
    b.user("Old work.");
    const kept = b.user("Find the bug.");
    b.compaction(kept, "NATIVE-SUMMARY");
    b.tool("read", { path: "a.ts" }, "A".repeat(200));
    b.assistant("DONE-1");
    const cp = extractiveCheckpoint(b.entries, b.leaf!);
    if (!cp.ok) throw new Error(cp.error);
    appendDraft(b, cp.draft);
    const before = projectBranch(b.entries, LEDGER_FACTS).messages;
    expect(before[0]).toMatchObject({ role: "compactionSummary", summary: "NATIVE-SUMMARY" });
    b.compaction(kept, cp.draft.content, marker(1));
    b.user("continue");
    const after = projectBranch(b.entries, LEDGER_FACTS).messages;
    expect(after.slice(0, before.length)).toEqual(before);
    expect(liveRequest(b)).toEqual(after);
    // A second marker still restates the native summary, not the first marker's text.
    b.compaction(kept, "second marker text", marker(2));
    expect(projectBranch(b.entries, LEDGER_FACTS).messages[0]).toEqual(before[0]);
    expect(liveRequest(b)).toEqual(projectBranch(b.entries, LEDGER_FACTS).messages);
  });
});
