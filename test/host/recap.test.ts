import { describe, expect, it } from "vitest";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { currentCheckpoint, hasRecapAfter, isFirstRequestAfter, placeRecap, recapCard, recapFor } from "../../src/host/recap.ts";
import { RECAP_TYPE } from "../../src/strategies/checkpoint/recap.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";
import { compactInto } from "../strategies/checkpoint/fixtures.ts";

const user = (text: string) => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 }) as AgentMessage;
const recap = (compactionId: string, text = `recap ${compactionId}`) =>
  ({ role: "custom", customType: RECAP_TYPE, content: text, display: true, details: { v: 1, compactionId }, timestamp: 2 }) as AgentMessage;

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
    const card = recapCard({ v: 1, compactionId: "c", tokensBefore: 180_820, tokensAfter: 33_326, spans: 2, startupReads: ["a.md"], trimmedSpans: 1, removedItems: 4, shortenedItems: 1 });
    expect(card).toBe("Context checkpoint · checkpoint 181k → 33k tokens · 2 spans · 1 startup read kept · trimmed: 1 span, 4 items removed, 1 shortened");
  });
});
