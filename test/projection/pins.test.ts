// Pins, pure side: given hand-written branches with pin facts, when an act hides or cuts history, then the pinned
// entries stay in the model view verbatim (pure projection and the live request alike), pairs intact.
import { describe, expect, it } from "vitest";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { branchTo } from "../../src/log/branch.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { LedgerType, LEDGER_FACTS } from "../../src/strategies/catalog.ts";
import { activePins, reduceBranch } from "../../src/projection/ledger-state.ts";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import { keepsContext, pinGroup } from "../../src/projection/pins.ts";
import { renderPins } from "../../src/projection/pin-plan.ts";
import { lookupOf, projectBranch } from "../../src/projection/project.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";

const path = (b: LedgerBuilder, leaf = b.leaf) => branchTo(b.entries, leaf);
const view = (b: LedgerBuilder) => JSON.stringify(projectBranch(path(b), LEDGER_FACTS).messages);
const conversation = (b: LedgerBuilder) =>
  JSON.stringify(projectBranch(path(b), LEDGER_FACTS).messages.filter((m) => m.role !== "system"));
/** What the live ledger sends for Pi's `context` list (no system messages) at the leaf. */
function live(b: LedgerBuilder): string {
  const ledger = new LiveLedger(LEDGER_FACTS);
  ledger.sync(b.leaf, (id) => b.byId().get(id));
  const request = structuredClone(
    buildSessionProjection(b.entries, b.leaf).messages.filter((m) => m.role !== "system"),
  );
  return JSON.stringify(ledger.requestContext(request, "conversation") ?? request);
}
const entry = (b: LedgerBuilder, id: string) => b.byId().get(id)!;
const messageOf = (b: LedgerBuilder, id: string) =>
  JSON.stringify((entry(b, id) as Extract<SessionEntry, { type: "message" }>).message);
function paired(messages: readonly unknown[]): boolean {
  const calls = new Set<string>();
  const answered = new Set<string>();
  for (const m of messages as { role: string; content?: { type: string; id?: string }[]; toolCallId?: string }[]) {
    if (m.role === "assistant")
      for (const block of m.content ?? []) if (block.type === "toolCall") calls.add(block.id!);
    if (m.role === "toolResult") {
      if (!calls.has(m.toolCallId!)) return false;
      answered.add(m.toolCallId!);
    }
  }
  return [...calls].every((c) => answered.has(c));
}

/** Three reads, then a fold over them. */
function foldedReads() {
  const b = new LedgerBuilder();
  b.user("task one");
  const answer = b.assistant("finished one");
  b.user("task two");
  const reads = [1, 2, 3].map((i) => b.tool("read", { path: `f${i}` }, `OUT-${i} ${"x".repeat(200)}`));
  const ask = b.assistant("", [{ id: "compact", name: "context_compact", args: { target: answer } }]);
  const through = b.toolResult("compact", "context_compact", "Compaction requested.");
  return {
    b,
    reads,
    fold: () => b.fold({ afterId: answer, throughId: through, keepToolResultsOf: answer }, "FOLD-SUMMARY", ask, answer),
  };
}

describe("pins in the projection", () => {
  it("a fold hides the unpinned reads and keeps the pinned one, call and result, byte for byte", () => {
    const { b, reads, fold } = foldedReads();
    b.pin(reads[1].result, true, "the spec");
    fold();
    const seen = view(b);
    expect(seen).not.toContain("OUT-1");
    expect(seen).not.toContain("OUT-3");
    expect(seen).toContain(messageOf(b, reads[1].result));
    expect(seen).toContain(messageOf(b, reads[1].call));
    expect(paired(projectBranch(path(b), LEDGER_FACTS).messages)).toBe(true);
    expect(live(b)).toBe(conversation(b));
  });

  it("pinning the call pins its result; an unpin of either side (newest fact) lets the fold hide both", () => {
    const { b, reads, fold } = foldedReads();
    b.pin(reads[0].call);
    fold();
    expect(view(b)).toContain(messageOf(b, reads[0].result));
    b.pin(reads[0].call, false);
    expect(view(b)).not.toContain("OUT-1");
    expect(live(b)).toBe(conversation(b));
    expect(activePins(reduceBranch(path(b), LEDGER_FACTS))).toEqual([]);
  });

  it("pins cut off by a compaction come right after its summary, in path order, before what it kept", () => {
    const b = new LedgerBuilder();
    b.user("OLD-1");
    const read = b.tool("read", { path: "spec.md" }, "SPEC-BODY");
    const a1 = b.assistant("ANSWER-1");
    b.user("OLD-2");
    b.assistant("ANSWER-2");
    const kept = b.user("RECENT");
    b.assistant("RECENT-ANSWER");
    b.pin(a1);
    b.pin(read.result);
    b.compaction(kept, "CUT-SUMMARY", { v: 1, strategy: "checkpoint" });
    b.user("after");
    const messages = projectBranch(path(b), LEDGER_FACTS).messages;
    const texts = messages.map((m) => JSON.stringify(m));
    const at = (needle: string) => texts.findIndex((t) => t.includes(needle));
    expect(at("CUT-SUMMARY")).toBe(0);
    expect(texts[1]).toBe(messageOf(b, read.call));
    expect(texts[2]).toBe(messageOf(b, read.result));
    expect(texts[3]).toBe(messageOf(b, a1));
    expect(at("RECENT")).toBe(4);
    expect(at("OLD-2")).toBe(-1);
    expect(paired(messages)).toBe(true);
    expect(live(b)).toBe(conversation(b));
  });

  it("Pi's native compaction is treated the same, and the live ledger stays equal while entries are appended", () => {
    const b = new LedgerBuilder();
    b.user("OLD");
    const pinned = b.assistant("PINNED-ANSWER");
    b.user("OLD-2");
    const kept = b.user("KEPT");
    b.pin(pinned);
    b.compaction(kept, "NATIVE");
    const ledger = new LiveLedger(LEDGER_FACTS);
    for (let i = 0; i < 3; i++) {
      b.user(`turn ${i}`);
      b.assistant(`answer ${i}`);
      ledger.sync(b.leaf, (id) => b.byId().get(id));
      const request = structuredClone(buildSessionProjection(b.entries, b.leaf).messages);
      expect(JSON.stringify(ledger.requestContext(request) ?? request)).toBe(view(b));
    }
    expect(view(b)).toContain("PINNED-ANSWER");
    expect(view(b)).not.toContain("OLD-2");
  });

  it("the live estimate counts pinned entries a cut or a range would leave out", () => {
    const b = new LedgerBuilder();
    b.user("OLD");
    const read = b.tool("read", { path: "spec.md" }, `SPEC ${"s".repeat(4000)}`);
    b.user("OLD-2");
    const kept = b.user("KEPT");
    b.compaction(kept, "NATIVE");
    b.user("now");
    const estimate = () => {
      const ledger = new LiveLedger(LEDGER_FACTS);
      ledger.sync(b.leaf, (id) => b.byId().get(id));
      return ledger.estimateViewTokens();
    };
    const unpinned = estimate();
    b.pin(read.result);
    expect(estimate() - unpinned).toBeGreaterThan(1000);
  });

  it("/context pins lists stray ids escaped and bounded, and pins off the branch hold nothing", () => {
    const b = new LedgerBuilder();
    const m = b.user("hello");
    b.pin(`\u001b[31mSTRAY\u0007${"z".repeat(200)}`);
    b.pin(m, true, "a note");
    const p = path(b);
    const lookup = lookupOf(p);
    const text = renderPins(
      { ...lookup, path: p, state: reduceBranch(p, LEDGER_FACTS), tokensAt: () => 10 },
      128_000,
      0.1,
    );
    expect(text).not.toMatch(/[\u0000-\u0008\u001b\u007f]/);
    expect(text).toContain("an entry not on this branch, holds nothing here");
    expect(text).toContain(`${m}: a user message, 1 entry, ~10 tokens — "a note"`);
    expect(text.split("\n").every((line) => line.length < 200)).toBe(true);
  });

  it("a restore composes with a pin: undoing the act keeps the pin, unpinning keeps the act", () => {
    const { b, reads, fold } = foldedReads();
    const before = view(b);
    b.pin(reads[2].result);
    const act = fold();
    b.restore(act, "fold");
    expect(view(b)).toBe(before);
    expect(activePins(reduceBranch(path(b), LEDGER_FACTS)).map((p) => p.targetId)).toEqual([reads[2].result]);
    b.pin(reads[2].result, false);
    expect(reduceBranch(path(b), LEDGER_FACTS).revoked[act]).toBeDefined();
  });

  it("pinning changes the view only from the pinned entry on", () => {
    const { b, reads, fold } = foldedReads();
    fold();
    const unpinned = projectBranch(path(b), LEDGER_FACTS).messages.map((m) => JSON.stringify(m));
    b.pin(reads[1].result);
    const pinned = projectBranch(path(b), LEDGER_FACTS).messages.map((m) => JSON.stringify(m));
    const first = pinned.indexOf(messageOf(b, reads[1].call));
    expect(first).toBeGreaterThan(0);
    expect(pinned.slice(0, first)).toEqual(unpinned.slice(0, first));
  });

  it("<keepContext> in the user's own message pins it; the same tags in tool output, assistant text or custom messages do not", () => {
    const b = new LedgerBuilder();
    const user = b.user("intro\n<keepContext>\nUSER-CONSTRAINT\n</keepContext>");
    const tool = b.tool("read", { path: "x" }, "<keepContext>\nTOOL-TAG\n</keepContext>");
    const answer = b.assistant("<keepContext>ASSISTANT-TAG</keepContext>");
    const custom = b.custom("other/ext", "<keepContext>CUSTOM-TAG</keepContext>");
    const kept = b.user("KEPT");
    b.compaction(kept, "NATIVE");
    expect(keepsContext(entry(b, user))).toBe(true);
    for (const id of [tool.result, answer, custom]) expect(keepsContext(entry(b, id))).toBe(false);
    const seen = view(b);
    expect(seen).toContain(messageOf(b, user));
    for (const needle of ["TOOL-TAG", "ASSISTANT-TAG", "CUSTOM-TAG"]) expect(seen).not.toContain(needle);
    expect(live(b)).toBe(conversation(b));
    // The user can let it go: an unpin fact is newer than the message.
    b.pin(user, false);
    expect(view(b)).not.toContain("USER-CONSTRAINT");
  });

  it("hostile targets pin nothing and break nothing: unknown ids, prototype keys, compactions, labels, system messages", () => {
    const b = new LedgerBuilder();
    b.user("task");
    const kept = b.user("KEPT");
    const label = b.label(kept, "here");
    const c = b.compaction(kept, "NATIVE");
    for (const target of ["__proto__", "constructor", "toString", "", "x".repeat(10_000), c, label, "nope"])
      b.pin(target);
    const state = reduceBranch(path(b), LEDGER_FACTS);
    expect(activePins(state)).toHaveLength(8);
    expect(view(b)).toBe(JSON.stringify(buildSessionProjection(b.entries, b.leaf).messages));
    expect(live(b)).toBe(conversation(b));
    // A damaged pin fact is no pin.
    b.append({
      type: "custom",
      id: "bad",
      parentId: b.leaf,
      timestamp: new Date(0).toISOString(),
      customType: LedgerType.pin,
      data: { v: 2, targetId: kept, pinned: "yes" },
    } as unknown as SessionEntry);
    expect(activePins(reduceBranch(path(b), LEDGER_FACTS))).toHaveLength(8);
  });

  it("a result's group is its call and every result of that call; a result without its call pins alone", () => {
    const b = new LedgerBuilder();
    b.user("go");
    const call = b.assistant("", [
      { id: "c1", name: "read", args: { path: "a" } },
      { id: "c2", name: "read", args: { path: "b" } },
    ]);
    const r1 = b.toolResult("c1", "read", "A");
    const r2 = b.toolResult("c2", "read", "B");
    const lookup = lookupOf(path(b));
    expect(pinGroup(r2, lookup).indexes.sort()).toEqual([call, r1, r2].map((id) => lookup.indexOf(id)).sort());
    b.user("next");
    const orphan = b.toolResult("zz", "read", "ORPHAN");
    expect(pinGroup(orphan, lookupOf(path(b))).indexes).toEqual([lookupOf(path(b)).indexOf(orphan)]);
  });
});
