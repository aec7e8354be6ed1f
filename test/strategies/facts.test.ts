// The closed set of facts: what each writer produces reads back as its record, and anything else under our prefix
// (another version, an unknown record, a damaged shape) is reported as unreadable rather than guessed at.
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/log/entries.ts";
import { LedgerType } from "../../src/strategies/catalog.ts";
import { budgetNoticeDraft } from "../../src/projection/budget.ts";
import { readFact, type RecordName } from "../../src/strategies/facts.ts";
import { foldDraft, noticeDraft } from "../../src/strategies/fold/fold-message.ts";
import { failureDetails } from "../../src/strategies/shared/fallback.ts";

const base = { id: "e1", parentId: "e0", timestamp: "2026-01-01T00:00:00.000Z" };

function stored(draft: {
  type: "custom_message";
  customType: string;
  content: string;
  display: boolean;
  details: unknown;
}): SessionEntry {
  return {
    ...base,
    type: "custom_message",
    customType: draft.customType,
    content: draft.content,
    display: draft.display,
    details: draft.details,
  } as SessionEntry;
}
const customEntry = (customType: string, data: unknown) =>
  ({ ...base, type: "custom", customType, data }) as SessionEntry;
const tokens = { hidden: 10, digest: 2, keptRaw: 0, contextBefore: null, contextWindow: 1000, requestTokens: 0 };
const range = { afterId: null, throughId: "e0", keepDialogue: true };

const written: Array<[RecordName, SessionEntry]> = [
  [
    "fold",
    stored(
      foldDraft({
        summary: "s",
        outputs: [],
        range: { afterId: null, throughId: "e0" },
        requestEntryId: "a1",
        target: "root",
      }),
    ),
  ],
  ["notice", stored(noticeDraft("why"))],
  ["notice", stored(budgetNoticeDraft(900, { tokens: 1000, contextWindow: 2000, action: "x" }, 0.8, true))],
  [
    "recap",
    stored({
      type: "custom_message",
      customType: LedgerType.recap,
      content: "r",
      display: true,
      details: {
        v: 1,
        compactionId: "c1",
        tokensBefore: 5,
        spans: 1,
        startupReads: [],
        trimmedSpans: 0,
        removedItems: 0,
        shortenedItems: 0,
      },
    }),
  ],
  [
    "preserve",
    stored({
      type: "custom_message",
      customType: LedgerType.preserve,
      content: "p",
      display: true,
      details: { v: 1, strategy: "preserve", checkpoint: 1, range, userOrdinals: [1], writer: "extractive", tokens },
    }),
  ],
  [
    "digest",
    stored({
      type: "custom_message",
      customType: LedgerType.digest,
      content: "d",
      display: true,
      details: {
        v: 1,
        strategy: "digest",
        checkpoint: 1,
        range,
        userOrdinals: [1],
        trigger: "window",
        tokens,
        steps: { steps: 1 },
      },
    }),
  ],
  [
    "plannerFailure",
    customEntry(
      LedgerType.plannerFailure,
      failureDetails(new Error("x"), { strategy: "planned", trigger: "threshold", durationMs: 1 }),
    ),
  ],
  [
    "nativeCompaction",
    customEntry(LedgerType.nativeCompaction, {
      v: 1,
      trigger: "threshold",
      compactionEntryId: "c2",
      tokensBefore: 9,
      summaryTokens: 1,
      after: "planned",
    }),
  ],
  ["restore", customEntry(LedgerType.restore, { v: 1, targetId: "f1", act: "fold" })],
  ["pin", customEntry(LedgerType.pin, { v: 1, targetId: "m1", pinned: true, note: "the spec" })],
  ["pin", customEntry(LedgerType.pin, { v: 1, targetId: "m1", pinned: false })],
  [
    "compaction",
    {
      ...base,
      type: "compaction",
      summary: "s",
      firstKeptEntryId: "e0",
      tokensBefore: 1,
      details: { v: 1, strategy: "checkpoint" },
    } as SessionEntry,
  ],
];

describe("facts this package writes", () => {
  it("every record name has a writer case here, and each reads back as its record", () => {
    const names = new Set(written.map(([name]) => name));
    for (const name of [...Object.keys(LedgerType), "compaction"])
      expect(names.has(name as RecordName), name).toBe(true);
    for (const [name, entry] of written)
      expect(readFact(entry), name).toMatchObject({ ok: true, fact: { record: name } });
  });

  it("another version of any of our records is unreadable, with a bounded reason", () => {
    for (const [name, entry] of written) {
      const bumped = structuredClone(entry) as SessionEntry & { details?: { v?: number }; data?: { v?: number } };
      if (bumped.type === "custom") (bumped.data as { v: number }).v = 2;
      else (bumped.details as { v: number }).v = 2;
      const reading = readFact(bumped);
      expect(reading?.ok, name).toBe(false);
      expect(reading && !reading.ok && reading.reason.length).toBeLessThanOrEqual(80);
    }
  });

  it("an unknown record under our prefix is unreadable; other extensions' entries and Pi's own compaction are not ours", () => {
    expect(readFact(customEntry(`${"context-ledger/"}${"x".repeat(5000)}`, { v: 1 }))).toMatchObject({ ok: false });
    expect(readFact(customEntry("someone-else/state", { v: 1 }))).toBeUndefined();
    expect(
      readFact({ ...base, type: "compaction", summary: "s", firstKeptEntryId: "e0", tokensBefore: 1 } as SessionEntry),
    ).toBeUndefined();
  });
});
