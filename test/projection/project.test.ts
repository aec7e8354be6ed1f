import { describe, expect, it } from "vitest";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { branchTo } from "../../src/log/branch.ts";
import { projectBranch } from "../../src/projection/project.ts";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import { reduceBranch } from "../../src/projection/ledger-state.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";

function visibleTexts(b: LedgerBuilder): string[] {
  return projectBranch(branchTo(b.entries, b.leaf), LEDGER_FACTS).messages.map((m) =>
    JSON.stringify((m as { content?: unknown }).content ?? (m as { summary?: string }).summary),
  );
}

describe("projectBranch", () => {
  it("given no ledger facts, equals Pi's projection", () => {
    const b = new LedgerBuilder();
    const u = b.user("hi");
    b.assistant("", [{ id: "c1", name: "read", args: { path: "a" } }]);
    b.toolResult("c1", "read", "A");
    b.assistant("done");
    b.compaction(u);
    b.user("next");
    expect(projectBranch(branchTo(b.entries, b.leaf), LEDGER_FACTS).messages).toEqual(
      buildSessionProjection(b.entries, b.leaf).messages,
    );
  });

  it("hides only entries inside a fold range and keeps the retained assistant's results", () => {
    const b = new LedgerBuilder();
    b.user("task one");
    const a1 = b.assistant("", [{ id: "c1", name: "read", args: { path: "a" } }]);
    const r1 = b.toolResult("c1", "read", "A-body");
    b.assistant("finished one");
    b.user("task two");
    const a2 = b.assistant("", [
      { id: "c2", name: "bash" },
      { id: "c3", name: "context_compact" },
    ]);
    b.toolResult("c2", "bash", "B-out");
    const last = b.toolResult("c3", "context_compact", "ok");
    b.fold({ afterId: a1, throughId: last, keepToolResultsOf: a1 }, "SUMMARY", a2, a1);
    const texts = visibleTexts(b).join("\n");
    expect(texts).toContain("task one");
    expect(texts).toContain("A-body"); // the target's own tool result stays paired
    expect(texts).toContain("SUMMARY");
    expect(texts).not.toContain("finished one");
    expect(texts).not.toContain("task two");
    expect(texts).not.toContain("B-out");
    expect(r1).toBeTruthy();
  });

  it("an overlapping later rule can still hide an earlier rule's exempted results", () => {
    const b = new LedgerBuilder();
    const u = b.user("start");
    const a1 = b.assistant("", [{ id: "c1", name: "read" }]);
    b.toolResult("c1", "read", "EXEMPT-ONCE");
    const a2 = b.assistant("more");
    b.fold({ afterId: a1, throughId: a2, keepToolResultsOf: a1 }, "S1");
    b.fold({ afterId: u, throughId: b.leaf! }, "S2");
    const texts = visibleTexts(b).join("\n");
    expect(texts).not.toContain("EXEMPT-ONCE");
    expect(texts).not.toContain("S1");
    expect(texts).toContain("S2");
  });

  it("navigating to before a fold removes its effect", () => {
    const b = new LedgerBuilder();
    const u = b.user("start");
    const a = b.assistant("middle");
    b.fold({ afterId: u, throughId: a }, "S");
    b.moveTo(a).user("branch");
    expect(visibleTexts(b).join("\n")).toContain("middle");
  });
});

describe("LiveLedger", () => {
  it("replay from scratch equals the incremental state, across a /tree jump", () => {
    const b = new LedgerBuilder();
    const u = b.user("start");
    const a = b.assistant("middle");
    const live = new LiveLedger(LEDGER_FACTS);
    const byId = () => b.byId();
    live.sync(b.leaf, (id) => byId().get(id));
    b.fold({ afterId: u, throughId: a }, "S");
    b.label(u, "cp1");
    live.sync(b.leaf, (id) => byId().get(id));
    expect(live.state).toEqual(reduceBranch(branchTo(b.entries, b.leaf), LEDGER_FACTS));
    b.moveTo(a).user("other");
    const change = live.sync(b.leaf, (id) => byId().get(id));
    expect(change.removed.map((e) => e.id)).toHaveLength(2);
    expect(live.state).toEqual(reduceBranch(branchTo(b.entries, b.leaf), LEDGER_FACTS));
    expect(live.state.ranges).toHaveLength(0);
  });

  it("filters folded messages out of a cloned request, keeping unmatched injections", () => {
    const b = new LedgerBuilder();
    const u = b.user("keep me");
    b.assistant("hide me");
    const a2 = b.assistant("hide me too");
    b.fold({ afterId: u, throughId: a2 }, "S");
    const live = new LiveLedger(LEDGER_FACTS);
    live.sync(b.leaf, (id) => b.byId().get(id));
    const request = structuredClone(buildSessionProjection(b.entries, b.leaf).messages);
    // Same role and timestamp as a folded original: it must not steal the original's match.
    const injected = { ...structuredClone(request[1]), content: [{ type: "text", text: "injected" }] };
    const out = live.filterContext([...request, injected as (typeof request)[number]])!;
    const texts = out.map((m) => JSON.stringify((m as { content?: unknown }).content));
    expect(texts.join()).toContain("keep me");
    expect(texts.join()).toContain("injected");
    expect(texts.join()).not.toContain("hide me");
  });

  it("is a no-op without folds", () => {
    const b = new LedgerBuilder();
    b.user("x");
    const live = new LiveLedger(LEDGER_FACTS);
    live.sync(b.leaf, (id) => b.byId().get(id));
    expect(live.filterContext(buildSessionProjection(b.entries, b.leaf).messages)).toBeUndefined();
  });
});

describe("LiveLedger.estimateViewTokens", () => {
  it("equals the estimate of the projected messages when folds have no exemptions", async () => {
    const { estimateMessagesTokens } = await import("../../src/projection/tokens.ts");
    const b = new LedgerBuilder();
    const u = b.user("start ".repeat(50));
    b.assistant("long answer ".repeat(200));
    const a2 = b.assistant("second ".repeat(100));
    b.fold({ afterId: u, throughId: a2 }, "summary");
    b.user("after ".repeat(30));
    const live = new LiveLedger(LEDGER_FACTS);
    live.sync(b.leaf, (id) => b.byId().get(id));
    const projected = projectBranch(branchTo(b.entries, b.leaf), LEDGER_FACTS).messages;
    expect(live.estimateViewTokens()).toBe(estimateMessagesTokens(projected));
    const c = b.compaction(a2, "native summary");
    b.user("later");
    live.sync(b.leaf, (id) => b.byId().get(id));
    expect(live.estimateViewTokens()).toBe(
      estimateMessagesTokens(projectBranch(branchTo(b.entries, b.leaf), LEDGER_FACTS).messages),
    );
    expect(c).toBeTruthy();
  });
});

describe("keepDialogue rules", () => {
  it("hide tool traffic in range but keep user messages and completed answers", () => {
    const b = new LedgerBuilder();
    b.user("please fix DIALOGUE-USER");
    b.assistant("", [{ id: "c1", name: "bash" }]);
    b.toolResult("c1", "bash", "TOOL-NOISE");
    const answer = b.assistant("fixed it DIALOGUE-ANSWER");
    b.fold({ afterId: null, throughId: answer, keepDialogue: true }, "checkpoint #1");
    const texts = visibleTexts(b).join("\n");
    expect(texts).toContain("DIALOGUE-USER");
    expect(texts).toContain("DIALOGUE-ANSWER");
    expect(texts).toContain("checkpoint #1");
    expect(texts).not.toContain("TOOL-NOISE");
    expect(texts).not.toContain("c1");
  });
});

describe("preserve checkpoints (anchored keepDialogue rules)", () => {
  function preserve(b: LedgerBuilder, afterId: string | null, throughId: string, k: number): string {
    const id = b.fold({ afterId, throughId, keepDialogue: true }, `CHECKPOINT-${k}`);
    const entry = b.entries.at(-1) as { customType: string };
    entry.customType = "context-ledger/preserve";
    return id;
  }
  const view = (b: LedgerBuilder) => projectBranch(branchTo(b.entries, b.leaf), LEDGER_FACTS).messages;
  const liveView = (b: LedgerBuilder) => {
    const live = new LiveLedger(LEDGER_FACTS);
    live.sync(b.leaf, (id) => b.byId().get(id));
    const request = structuredClone(
      buildSessionProjection(b.entries, b.leaf).messages.filter((m) => m.role !== "system"),
    );
    return live.filterContext(request) ?? request;
  };
  const text = (ms: unknown[]) => ms.map((m) => JSON.stringify((m as { content?: unknown }).content)).join("\n");

  it("show the checkpoint before the raw current batch, and keep the prefix byte-identical when the next one lands", () => {
    const b = new LedgerBuilder();
    b.user("USER-1");
    b.assistant("", [{ id: "a1", name: "bash" }]);
    b.toolResult("a1", "bash", "OLD-TOOL-1");
    b.assistant("DONE-1");
    const t1 = b.user("USER-2");
    b.assistant("", [{ id: "a2", name: "bash" }]);
    const r2 = b.toolResult("a2", "bash", "BATCH-2");
    preserve(b, null, t1, 1);
    const first = view(b);
    expect(text(first)).not.toContain("OLD-TOOL-1");
    expect(text(first).indexOf("CHECKPOINT-1")).toBeLessThan(text(first).indexOf("BATCH-2"));
    expect(liveView(b)).toEqual(first);

    b.assistant("", [{ id: "a3", name: "bash" }]);
    b.toolResult("a3", "bash", "BATCH-3");
    preserve(b, t1, r2, 2);
    const second = view(b);
    const upToFirst = first.slice(0, first.findIndex((m) => JSON.stringify(m).includes("CHECKPOINT-1")) + 1);
    expect(JSON.stringify(second.slice(0, upToFirst.length))).toBe(JSON.stringify(upToFirst));
    const order = text(second);
    expect(order).not.toContain("BATCH-2");
    expect(order.indexOf("CHECKPOINT-1")).toBeLessThan(order.indexOf("CHECKPOINT-2"));
    expect(order.indexOf("CHECKPOINT-2")).toBeLessThan(order.indexOf("BATCH-3"));
    expect(order).toContain("USER-1");
    expect(order).toContain("DONE-1");
    expect(liveView(b)).toEqual(second);
  });
});
