// The lab's shared message source (`SharedMessages`) against fresh projections: a projection that takes its messages
// from it equals one that builds them afresh, byte for byte, and projecting again hands out the very same objects for
// every entry, so the memo can never go stale (entries are immutable) and per-object memos downstream hit.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchTo, indexById } from "../../src/log/branch.ts";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import { projectBranch, SharedMessages } from "../../src/projection/project.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";
import { ledgerArb } from "../arbitraries/index.ts";

function branchOf(ledger: { entries: SessionEntry[]; leafId: string | null }): SessionEntry[] {
  return branchTo(ledger.entries, ledger.leafId, indexById(ledger.entries));
}

describe("the shared message source", () => {
  it("projects what fresh messages project, and the same objects every time", () => {
    fc.assert(
      fc.property(ledgerArb(), fc.nat(), (ledger, cut) => {
        const branch = branchOf(ledger);
        const shared = new SharedMessages();
        const prefix = branch.slice(0, branch.length ? 1 + (cut % branch.length) : 0);
        // A shorter branch first: the entries it shares with the whole one are memoized by then.
        const early = projectBranch(prefix, LEDGER_FACTS, undefined, shared);
        expect(JSON.stringify(early.messages)).toBe(JSON.stringify(projectBranch(prefix, LEDGER_FACTS).messages));
        const fresh = projectBranch(branch, LEDGER_FACTS);
        const once = projectBranch(branch, LEDGER_FACTS, undefined, shared);
        const again = projectBranch(branch, LEDGER_FACTS, undefined, shared);
        expect(once.entries).toEqual(fresh.entries);
        expect(JSON.stringify(once.messages)).toBe(JSON.stringify(fresh.messages));
        expect(again.messages.length).toBe(once.messages.length);
        again.messages.forEach((m, i) => expect(m).toBe(once.messages[i]));
        // The lists are the caller's own: changing one changes no later projection.
        for (const e of once.entries) e.messages.length = 0;
        expect(projectBranch(branch, LEDGER_FACTS, undefined, shared).messages).toEqual(fresh.messages);
      }),
    );
  });

  it("feeds a live ledger the same view as fresh messages, entry by entry", () => {
    fc.assert(
      fc.property(ledgerArb(), (ledger) => {
        const branch = branchOf(ledger);
        const shared = new SharedMessages();
        const live = new LiveLedger(LEDGER_FACTS, { source: shared, requests: false });
        const byId = new Map(branch.map((e) => [e.id, e]));
        branch.forEach((entry) => {
          live.sync(entry.id, (id) => byId.get(id));
          const upTo = branch.slice(0, live.entries.length);
          expect(live.view()).toEqual(projectBranch(upTo, LEDGER_FACTS).entries);
        });
      }),
    );
  });

  it("builds a forgotten entry's messages afresh from then on, still equal", () => {
    const entry = {
      type: "compaction",
      id: "c1",
      parentId: null,
      timestamp: "2026-01-01T00:00:00.000Z",
      summary: "what happened",
      firstKeptEntryId: "c1",
      tokensBefore: 10,
    } as unknown as SessionEntry;
    const shared = new SharedMessages();
    const first = shared.of(entry);
    expect(shared.of(entry)).toBe(first);
    shared.forget(entry);
    const later = shared.of(entry);
    expect(later).not.toBe(first);
    expect(later).toEqual(first);
    expect(shared.of(entry)).not.toBe(later);
  });
});

describe("a live ledger that only serves its view", () => {
  it("keeps no request index and refuses to map a request instead of answering wrongly", () => {
    const live = new LiveLedger(LEDGER_FACTS, { requests: false });
    expect(() => live.requestContext([])).toThrow(/request mapping/);
    expect(() => live.filterContext([])).toThrow(/request mapping/);
  });
});
