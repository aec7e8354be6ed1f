import { describe, expect, it } from "vitest";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import {
  currentCheckpoint,
  hasRecapAfter,
  isFirstRequestAfter,
  placeRecap,
  recapCard,
  recapFor,
} from "../../../src/strategies/checkpoint/recap-hooks.ts";
import { RECAP_TYPE, renderRecap } from "../../../src/strategies/checkpoint/recap.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { compactInto } from "./fixtures.ts";

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 }) as AgentMessage;
const recap = (compactionId: string, text = `recap ${compactionId}`) =>
  ({
    role: "custom",
    customType: RECAP_TYPE,
    content: text,
    display: true,
    details: { v: 1, compactionId },
    timestamp: 2,
  }) as AgentMessage;

function checkpointBranch() {
  const b = new LedgerBuilder();
  b.user("one");
  const u2 = b.user("two");
  const { id } = compactInto(b, u2);
  return { b, id };
}

describe("recap placement", () => {
  it("derives the current checkpoint and the first request from the branch alone", () => {
    const { b, id } = checkpointBranch();
    const found = currentCheckpoint(b.entries)!;
    expect(found.entry.id).toBe(id);
    expect(isFirstRequestAfter(b.entries, found.index)).toBe(true);
    expect(hasRecapAfter(b.entries, found.index, id)).toBe(false);
    b.custom(RECAP_TYPE, "r", { v: 1, compactionId: id });
    expect(hasRecapAfter(b.entries, found.index, id)).toBe(true);
    b.assistant("answer");
    expect(isFirstRequestAfter(b.entries, found.index)).toBe(false);
    // A later native compaction ends the checkpoint's recap.
    b.compaction(found.entry.firstKeptEntryId, "native");
    expect(currentCheckpoint(b.entries)).toBeUndefined();
  });

  it("moves the current recap last on the first request and drops obsolete and duplicate copies", () => {
    const { b, id } = checkpointBranch();
    const current = { recap: recapFor(currentCheckpoint(b.entries)!.entry), firstRequest: true };
    const kept = recap(id);
    const out = placeRecap([user("a"), recap("old"), kept, user("b"), recap(id, "dup")], current, 0)!;
    expect(out).toEqual([user("a"), user("b"), kept]);
  });

  it("leaves the recap in place on later requests and changes nothing when there is nothing to do", () => {
    const { b, id } = checkpointBranch();
    const current = { recap: recapFor(currentCheckpoint(b.entries)!.entry), firstRequest: false };
    const messages = [user("a"), recap(id), user("b")];
    expect(placeRecap(messages, current, 0)).toBeUndefined();
    expect(placeRecap([user("a")], undefined, 0)).toBeUndefined();
    expect(placeRecap([user("a"), recap(id)], undefined, 0)).toEqual([user("a")]);
  });

  it("adds an unsaved copy when none was persisted before the first request", () => {
    const { b, id } = checkpointBranch();
    const message = recapFor(currentCheckpoint(b.entries)!.entry);
    const out = placeRecap([user("a")], { recap: message, firstRequest: true }, 5)!;
    expect(out).toHaveLength(2);
    expect(out[1]).toMatchObject({ role: "custom", customType: RECAP_TYPE, content: message.content, timestamp: 5 });
    expect(message.content.startsWith(`[context-ledger recap after checkpoint ${id}]`)).toBe(true);
  });

  it("renders a card with tokens, spans, startup reads and trim counts", () => {
    const card = recapCard({
      v: 1,
      compactionId: "c",
      tokensBefore: 180_820,
      tokensAfter: 33_326,
      spans: 2,
      startupReads: ["a.md"],
      trimmedSpans: 1,
      removedItems: 4,
      shortenedItems: 1,
    });
    expect(card).toBe(
      "Context checkpoint · checkpoint 181k → 33k tokens · 2 spans · 1 startup read kept · trimmed: 1 span, 4 items removed, 1 shortened",
    );
  });
});

describe("recap wording", () => {
  const facts = {
    compactionId: "c1",
    tokensBefore: 10,
    spans: 1,
    startupReads: ["AGENTS.md"],
    trimmedSpans: 0,
    removedItems: 0,
    shortenedItems: 0,
  };
  const text = renderRecap(facts);
  const lines = text.split("\n");

  it("is orientation, not an instruction to start working", () => {
    // A recap that reads as a to-do list makes a real model start work nobody asked for.
    expect(lines[1]).toMatch(/not a request/);
    expect(lines[1]).toMatch(/latest user message/);
    expect(text).not.toMatch(/Before the next step/);
  });

  it("asks only for task-relevant inputs and names the evidence already in view", () => {
    expect(text).toMatch(/Recover only inputs the task still needs/);
    expect(text).toMatch(/startup reads and the verbatim tail/);
    expect(text).toMatch(/do not reread documents wholesale/);
    expect(text).toContain("Retained startup reads: AGENTS.md.");
  });

  it("points at git state, the write-then-reread rule and unverified hypotheses", () => {
    expect(text).toMatch(/git status, git diff/);
    expect(text).toMatch(/do not repeat completed writes/);
    expect(text).toMatch(
      /Before replacing an existing file with write, read its current contents unless they are already in view/,
    );
    expect(text).toMatch(/Small exact edits and new files need no extra reread/);
    expect(text).toMatch(/hypotheses/);
    expect(text).toMatch(/say it is unverified/);
  });
});
