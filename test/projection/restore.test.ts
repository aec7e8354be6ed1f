// Reversible context, pure side: restore facts in the projection, target names, refusals and partial restores.
// Given hand-written branches, when a restore is planned or appended, then this is the model view.
import { describe, expect, it } from "vitest";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { branchTo } from "../../src/log/branch.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { LedgerType, LEDGER_FACTS } from "../../src/strategies/catalog.ts";
import { reduceBranch } from "../../src/projection/ledger-state.ts";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import { projectBranch } from "../../src/projection/project.ts";
import {
  cutPoints,
  listActs,
  planRestore,
  renderRestored,
  resolveRestoreTarget,
} from "../../src/projection/restore.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";

const path = (b: LedgerBuilder, leaf = b.leaf) => branchTo(b.entries, leaf);
const view = (b: LedgerBuilder, leaf = b.leaf) => JSON.stringify(projectBranch(path(b, leaf), LEDGER_FACTS).messages);
const text = (b: LedgerBuilder) =>
  projectBranch(path(b), LEDGER_FACTS)
    .messages.map((m) => JSON.stringify(m))
    .join("\n");
/** What the live ledger sends for Pi's request at the leaf. */
function liveView(b: LedgerBuilder): string {
  const live = new LiveLedger(LEDGER_FACTS);
  live.sync(b.leaf, (id) => b.byId().get(id));
  const request = structuredClone(buildSessionProjection(b.entries, b.leaf).messages);
  return JSON.stringify(live.requestContext(request) ?? request);
}
/** The same, for the list Pi's `context` hook really gets: no system messages (Pi puts the current one back). */
function liveConversation(b: LedgerBuilder): string {
  const live = new LiveLedger(LEDGER_FACTS);
  live.sync(b.leaf, (id) => b.byId().get(id));
  const request = structuredClone(
    buildSessionProjection(b.entries, b.leaf).messages.filter((m) => m.role !== "system"),
  );
  return JSON.stringify(live.requestContext(request, "conversation") ?? request);
}
const conversation = (b: LedgerBuilder) =>
  JSON.stringify(projectBranch(path(b), LEDGER_FACTS).messages.filter((m) => m.role !== "system"));
function plan(b: LedgerBuilder, target: string, limit = Infinity, newest = false) {
  const p = path(b);
  const state = reduceBranch(p, LEDGER_FACTS);
  const resolved = resolveRestoreTarget(target, p, state, LEDGER_FACTS);
  if (!resolved.ok) return resolved;
  return planRestore({ path: p, state, facts: LEDGER_FACTS, act: resolved.act, limit, newest });
}
/** Every tool result in the view follows the assistant that called it. */
function paired(messages: readonly unknown[]): boolean {
  const calls = new Set<string>();
  for (const m of messages as { role: string; content?: { type: string; id?: string }[]; toolCallId?: string }[]) {
    if (m.role === "assistant") for (const b of m.content ?? []) if (b.type === "toolCall") calls.add(b.id!);
    if (m.role === "toolResult" && !calls.has(m.toolCallId!)) return false;
  }
  return true;
}

/** Task one answered, then task two with three tool steps, folded after task one's answer by a compact call. */
function foldedTask(output = "OUT") {
  const b = new LedgerBuilder();
  b.user("task one KEEP");
  const answer = b.assistant("finished one");
  b.user("task two");
  for (let i = 1; i <= 3; i++) b.tool("read", { path: `f${i}` }, `${output}-${i} ${"x".repeat(400)}`);
  const ask = b.assistant("", [{ id: "compact", name: "context_compact", args: { target: answer } }]);
  const through = b.toolResult("compact", "context_compact", "Compaction requested.");
  const before = b.leaf;
  const range = { afterId: answer, throughId: through, keepToolResultsOf: answer };
  const fold = b.custom(LedgerType.fold, "FOLD-SUMMARY", {
    v: 1,
    range,
    requestEntryId: ask,
    target: "start-two",
    backupCheckpoint: "pre-fold",
  });
  return { b, answer, through, before, fold };
}

describe("restore facts in the projection", () => {
  it("a fold restored whole gives the view from before the fold, in the pure projection and the live request", () => {
    const { b, before, fold } = foldedTask();
    const prior = view(b, before);
    expect(text(b)).toContain("FOLD-SUMMARY");
    expect(text(b)).not.toContain("OUT-2");
    b.restore(fold, "fold");
    expect(view(b)).toBe(prior);
    expect(liveView(b)).toBe(prior);
  });

  it("a compaction restored whole brings back what it cut and drops its summary and recap", () => {
    const b = new LedgerBuilder();
    const system = { role: "system", content: "", sections: { preamble: "SYSTEM" }, timestamp: 0 };
    b.append({
      type: "message",
      id: "sys",
      parentId: null,
      timestamp: new Date(0).toISOString(),
      message: system,
    } as unknown as SessionEntry);
    b.user("OLD-USER");
    b.assistant("OLD-ANSWER");
    const kept = b.user("RECENT");
    b.assistant("recent answer");
    const before = b.leaf;
    const c = b.compaction(kept, "CUT-SUMMARY", { v: 1, strategy: "checkpoint" });
    b.custom(LedgerType.recap, "RECAP-TEXT", { v: 1, compactionId: c });
    b.user("after");
    expect(text(b)).not.toContain("OLD-USER");
    b.restore(c, "compaction");
    const restored = text(b);
    expect(restored).toContain("OLD-USER");
    expect(restored).not.toContain("CUT-SUMMARY");
    expect(restored).not.toContain("RECAP-TEXT");
    expect(restored.indexOf("OLD-ANSWER")).toBeLessThan(restored.indexOf("RECENT"));
    expect(liveView(b)).toBe(view(b));
    expect(liveConversation(b)).toBe(conversation(b));
    // Before the compaction plus the turn after it: the same bytes.
    expect(view(b).startsWith(view(b, before).slice(0, -1))).toBe(true);
  });

  it("revoking the newest of two compactions goes back to the older cut, and the live request agrees", () => {
    const b = new LedgerBuilder();
    b.user("FIRST");
    const k1 = b.user("SECOND");
    b.compaction(k1, "SUMMARY-1");
    b.user("THIRD");
    const k2 = b.user("FOURTH");
    const c2 = b.compaction(k2, "SUMMARY-2");
    b.user("FIFTH");
    b.restore(c2, "compaction");
    const t = text(b);
    expect(t).toContain("SUMMARY-1");
    expect(t).not.toContain("SUMMARY-2");
    expect(t).not.toContain("FIRST");
    expect(t).toContain("THIRD");
    expect(liveView(b)).toBe(view(b));
  });

  it("a preserve tool summary restored whole returns the tool traffic it replaced, also when a compaction is undone later", () => {
    const b = new LedgerBuilder();
    b.user("USER-1");
    b.tool("bash", {}, "OLD-TOOL");
    const done = b.assistant("DONE-1");
    const u2 = b.user("USER-2");
    const cp = b.fold({ afterId: null, throughId: done, keepDialogue: true }, "CHECKPOINT-1");
    Object.assign(b.entries.at(-1)!, { customType: LedgerType.preserve });
    b.tool("bash", {}, "NEW-TOOL");
    const c = b.compaction(u2, "CUT");
    b.user("later");
    expect(text(b)).not.toContain("OLD-TOOL");
    b.restore(c, "compaction");
    // The compaction is undone, the checkpoint still applies and is shown right after its range.
    expect(text(b)).not.toContain("OLD-TOOL");
    expect(text(b).indexOf("CHECKPOINT-1")).toBeLessThan(text(b).indexOf("USER-2"));
    expect(liveView(b)).toBe(view(b));
    b.restore(cp, "preserve");
    expect(text(b)).toContain("OLD-TOOL");
    expect(text(b)).not.toContain("CHECKPOINT-1");
    expect(liveView(b)).toBe(view(b));
  });
});

/** Details of the compaction a manual /compact leaves under preserve (see `isCheckpointMarker`). */
const markerDetails = (checkpoint: number) => ({ v: 1, strategy: "preserve", checkpoint });

/** A preserve checkpoint: an anchored range that keeps the dialogue and hides the tool traffic through `throughId`. */
function checkpoint(b: LedgerBuilder, throughId: string, content: string, n: number): string {
  const id = b.custom(LedgerType.preserve, content, {
    v: 1,
    checkpoint: n,
    range: { afterId: null, throughId, keepDialogue: true },
  });
  return id;
}

describe("restores and preserve markers", () => {
  /** A native compaction, then a preserve checkpoint written by a manual /compact and the marker Pi appends. */
  function compactedThenMarked(markerKeepsFrom?: string) {
    const b = new LedgerBuilder();
    b.user("OLD-USER");
    b.assistant("OLD-ANSWER");
    const kept = b.user("RECENT");
    b.tool("bash", {}, "TOOL-OUT");
    const done = b.assistant("DONE");
    const c = b.compaction(kept, "NATIVE-SUMMARY");
    const beforeCompaction = view(b, done);
    b.user("next");
    const through = b.tool("bash", {}, "LATER-TOOL").result;
    const cp = checkpoint(b, through, "CHECKPOINT-1", 1);
    const m = b.compaction(markerKeepsFrom ?? kept, "CHECKPOINT-1", markerDetails(1));
    b.user("after the marker");
    return { b, c, cp, m, kept, beforeCompaction };
  }

  it("a marker is no act: it is not listed, `last` names the tool summary, and naming it points to the tool summary", () => {
    const { b, c, cp, m } = compactedThenMarked();
    const p = path(b);
    const state = reduceBranch(p, LEDGER_FACTS);
    expect(listActs(p, state, LEDGER_FACTS).map((a) => a.id)).toEqual([c, cp]);
    const last = resolveRestoreTarget("last", p, state, LEDGER_FACTS);
    expect(last.ok && last.act.id).toBe(cp);
    const named = resolveRestoreTarget(m, p, state, LEDGER_FACTS);
    expect(named.ok).toBe(false);
    expect(!named.ok && named.error).toMatch(/manual \/compact and hides nothing.*restore tool summary #1/);
    // A restore fact naming the marker anyway (hand-written) changes nothing.
    const prior = view(b);
    b.restore(m, "compaction");
    expect(view(b)).toBe(prior);
    expect(liveView(b)).toBe(prior);
  });

  it("revoking the compaction before a marker brings its history back; the marker keeps restating nothing", () => {
    const { b, c } = compactedThenMarked();
    expect(text(b)).toContain("NATIVE-SUMMARY"); // restated by the marker
    expect(text(b)).not.toContain("OLD-USER");
    const r = plan(b, c);
    expect(r.ok && r.plan.effect.back.length).toBeGreaterThan(0);
    b.restore(c, "compaction");
    const t = text(b);
    expect(t).toContain("OLD-USER");
    expect(t).not.toContain("NATIVE-SUMMARY");
    // Pi's request still starts at the marker's stored cut: the live ledger rebuilds the restored head.
    expect(liveView(b)).toBe(view(b));
    expect(liveConversation(b)).toBe(conversation(b));
  });

  it("a marker written after a restore keeps from where the view starts, and the live request needs no rebuild", () => {
    const b = new LedgerBuilder();
    const first = b.user("OLD-USER");
    b.assistant("OLD-ANSWER");
    const kept = b.user("RECENT");
    const c = b.compaction(kept, "NATIVE-SUMMARY");
    b.restore(c, "compaction");
    const through = b.tool("bash", {}, "LATER-TOOL").result;
    checkpoint(b, through, "CHECKPOINT-1", 1);
    const before = view(b);
    b.compaction(first, "CHECKPOINT-1", markerDetails(1));
    // The marker changes nothing in the view (its text is the checkpoint message already in view).
    expect(view(b)).toBe(before);
    expect(liveView(b)).toBe(before);
    expect(text(b)).toContain("OLD-USER");
  });

  it("revoking a preserve tool summary gives back the reasoning of the answers it covered, in both views", () => {
    const b = new LedgerBuilder();
    b.user("USER-1");
    b.tool("bash", {}, "OLD-TOOL");
    b.assistant("ANSWER-1", [], { thinking: "REASONING-1" });
    b.user("USER-2");
    const done2 = b.assistant("ANSWER-2", [], { thinking: "REASONING-2" });
    const before = view(b);
    const cp = checkpoint(b, done2, "CHECKPOINT-1", 1);
    const t = text(b);
    expect(t).toContain("ANSWER-1");
    expect(t).not.toContain("REASONING-1");
    expect(t).not.toContain("OLD-TOOL");
    expect(liveView(b)).toBe(view(b));
    // Only the newer part: the older answer stays without its reasoning, the newer one has it back.
    const u2 = path(b).find(
      (e) => e.type === "message" && e.message.role === "user" && JSON.stringify(e.message.content).includes("USER-2"),
    )!;
    const partial = b.restore(cp, "preserve", { throughId: u2.parentId! });
    expect(text(b)).toContain("REASONING-2");
    expect(text(b)).not.toContain("REASONING-1");
    expect(liveView(b)).toBe(view(b));
    b.moveTo(cp).restore(cp, "preserve");
    expect(view(b)).toBe(before);
    expect(liveView(b)).toBe(before);
    expect(partial).toBeTruthy();
  });
});

describe("restore targets", () => {
  it("resolve by id, backup name, fold target name, hidden entry id and last; revoking twice is refused", () => {
    const { b, fold } = foldedTask();
    const hidden = path(b).find((e) => e.type === "message" && e.message.role === "toolResult")!.id;
    for (const name of [fold, "pre-fold", "start-two", hidden, "last"]) {
      const r = resolveRestoreTarget(name, path(b), reduceBranch(path(b), LEDGER_FACTS), LEDGER_FACTS);
      expect(r.ok && r.act.id, name).toBe(fold);
    }
    b.restore(fold, "fold");
    const again = resolveRestoreTarget(fold, path(b), reduceBranch(path(b), LEDGER_FACTS), LEDGER_FACTS);
    expect(again.ok).toBe(false);
    expect(!again.ok && again.error).toMatch(/already undone .*twice/);
    expect(listActs(path(b), reduceBranch(path(b), LEDGER_FACTS), LEDGER_FACTS)[0].revokedBy).toBe(b.leaf);
  });

  it("an unknown name is refused with the acts that exist, and a visible entry has nothing to restore", () => {
    const { b, answer, fold } = foldedTask();
    const unknown = resolveRestoreTarget("nope", path(b), reduceBranch(path(b), LEDGER_FACTS), LEDGER_FACTS);
    expect(!unknown.ok && unknown.error).toContain(`${fold} (fold, "pre-fold")`);
    const visible = resolveRestoreTarget(answer, path(b), reduceBranch(path(b), LEDGER_FACTS), LEDGER_FACTS);
    expect(!visible.ok && visible.error).toMatch(/not hidden/);
  });

  it("a compaction superseded by a later one is refused, naming the later one", () => {
    const b = new LedgerBuilder();
    b.user("a");
    const k1 = b.user("b");
    const c1 = b.compaction(k1, "S1");
    const k2 = b.user("c");
    const c2 = b.compaction(k2, "S2");
    const r = plan(b, c1);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toContain(`later compaction ${c2}`);
  });
});

describe("restores that do not fit", () => {
  it("are refused with the figures, or bring back the newest part that fits without splitting a tool call", () => {
    const { b, fold, before } = foldedTask();
    const whole = plan(b, fold);
    expect(whole.ok).toBe(true);
    const full = whole.ok ? whole.plan.tokensAfter : 0;
    const limit = full - 150; // the whole restore misses by ~150 tokens; one read step is ~110
    const refused = plan(b, fold, limit);
    expect(!refused.ok && refused.error).toMatch(
      new RegExp(
        `to ~${full.toLocaleString("en-US")} tokens, above the limit of ${limit.toLocaleString("en-US")}\\. Nothing was restored`,
      ),
    );

    const partial = plan(b, fold, limit, true);
    expect(partial.ok).toBe(true);
    if (!partial.ok) return;
    expect(partial.plan.tokensAfter).toBeLessThanOrEqual(limit);
    expect(partial.plan.wholeTokensAfter).toBe(full);
    expect(partial.plan.data.throughId).toBeDefined();
    b.restore(fold, "fold", { throughId: partial.plan.data.throughId });
    const messages = projectBranch(path(b), LEDGER_FACTS).messages;
    expect(paired(messages)).toBe(true);
    const t = text(b);
    expect(t).toContain("OUT-3"); // the newest part is back
    expect(t).not.toContain("OUT-1"); // the oldest stays folded
    expect(t).toContain("FOLD-SUMMARY"); // and its summary stays
    expect(liveView(b)).toBe(view(b));
    expect(renderRestored(partial.plan, limit)).toMatch(/newest part of fold .* The older part stays hidden/);
    expect(before).toBeTruthy();
  });

  it("a compaction's newest part moves its cut back", () => {
    const b = new LedgerBuilder();
    const first = b.user(`FIRST ${"x".repeat(800)}`);
    const a1 = b.assistant("A1");
    b.user(`SECOND ${"y".repeat(80)}`);
    b.assistant("A2");
    const kept = b.user("KEPT");
    const c = b.compaction(kept, "SUM");
    b.user("after");
    const whole = plan(b, c);
    const full = whole.ok ? whole.plan.tokensAfter : 0;
    const partial = plan(b, c, full - 100, true);
    // The earliest cut that fits: everything after the big first message.
    expect(partial.ok && partial.plan.data).toEqual({ v: 1, targetId: c, act: "compaction", firstKeptEntryId: a1 });
    b.restore(c, "compaction", { firstKeptEntryId: a1 });
    expect(text(b)).toContain("SECOND");
    expect(text(b)).toContain("SUM");
    expect(text(b)).not.toContain("FIRST");
    expect(liveView(b)).toBe(view(b));
    expect(first).toBeTruthy();
  });

  it("cut points skip tool results and never fall between a call and its answer", () => {
    const b = new LedgerBuilder();
    b.user("u"); // 0
    b.assistant("", [
      { id: "x", name: "read" },
      { id: "y", name: "read" },
    ]); // 1
    b.toolResult("x", "read", "X"); // 2
    b.label("e001", "mark"); // 3: a label between two results of one step
    b.toolResult("y", "read", "Y"); // 4
    b.assistant("done"); // 5
    const p: SessionEntry[] = path(b);
    expect(cutPoints(p, 0, p.length - 1)).toEqual([0, 1, 5]);
  });
});

describe("regression: a preserve marker whose stored start is off a damaged path", () => {
  // Found by test/properties/session-files.e2e.property.test.ts (seed 438881717): a dangling parent cut a step in two, so
  // the path opened with a tool result; the marker kept the whole path and the view opened with that orphan.
  it("keeps nothing before the marker, as Pi does for a compaction whose kept entry is gone", () => {
    const b = new LedgerBuilder();
    b.moveTo(null);
    b.toolResult("call-lost", "read", "orphaned output");
    b.compaction("not-on-this-path", "marker", { v: 1, strategy: "preserve", checkpoint: 1 });
    b.user("after the damage");
    const messages = projectBranch(b.entries, LEDGER_FACTS).messages;
    expect(messages.some((m) => m.role === "toolResult")).toBe(false);
    expect(messages.some((m) => m.role === "user")).toBe(true);
  });
});

describe("a partial restore that names no earlier entry (item 6)", () => {
  for (const [name, kept] of [
    ["an id on no entry", () => "no-such-entry"],
    ["an entry after the compaction", (after: string) => after],
  ] as const) {
    it(`${name}: the view stays as it was, summary and kept entries included`, () => {
      const b = new LedgerBuilder();
      b.user("OLD-USER");
      b.assistant("OLD-ANSWER");
      const k = b.user("KEPT-USER");
      b.assistant("KEPT-ANSWER");
      const c = b.compaction(k, "CUT-SUMMARY", { v: 1, strategy: "checkpoint" });
      const after = b.user("AFTER");
      const prior = view(b);
      const priorLive = liveView(b);
      b.restore(c, "compaction", { firstKeptEntryId: kept(after) });
      expect(view(b)).toBe(prior);
      expect(liveView(b)).toBe(priorLive);
      expect(text(b)).toContain("CUT-SUMMARY");
      expect(text(b)).toContain("KEPT-USER");
      expect(text(b)).not.toContain("OLD-USER");
    });
  }
});
