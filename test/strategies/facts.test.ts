// What each writer of this package produces, read by the one fact reader the live ledger and the lab use: records
// that change the view read back as their fact, the rest (notices, failure records) as none; another version, an
// unknown record or another extension's entry is never guessed at.
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/log/entries.ts";
import { LedgerType } from "../../src/strategies/catalog.ts";
import { budgetNoticeDraft } from "../../src/projection/budget.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";
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

type RecordName = keyof typeof LedgerType | "compaction";

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

/** The fact each record reads as: what it does to the view. */
const KIND: Record<RecordName, string> = {
  fold: "range",
  preserve: "range",
  digest: "range",
  restore: "restore",
  pin: "pin",
  compaction: "compaction",
  notice: "none",
  recap: "none",
  plannerFailure: "none",
  nativeCompaction: "none",
};

describe("facts this package writes", () => {
  it("every record name has a writer case here, and each reads back as the fact it is to the view", () => {
    const names = new Set(written.map(([name]) => name));
    for (const name of [...Object.keys(LedgerType), "compaction"])
      expect(names.has(name as RecordName), name).toBe(true);
    for (const [name, entry] of written) expect(LEDGER_FACTS.read(entry).kind, name).toBe(KIND[name]);
    const compaction = LEDGER_FACTS.read(written.find(([n]) => n === "compaction")![1]);
    expect(compaction).toMatchObject({ kind: "compaction", strategy: "checkpoint" });
  });

  it("another version of a record that changes the view changes nothing (a compaction is then Pi's own)", () => {
    for (const [name, entry] of written) {
      if (KIND[name] === "none") continue;
      const bumped = structuredClone(entry) as SessionEntry & { details?: { v?: number }; data?: { v?: number } };
      if (bumped.type === "custom") (bumped.data as { v: number }).v = 2;
      else (bumped.details as { v: number }).v = 2;
      const fact = LEDGER_FACTS.read(bumped);
      if (name === "compaction")
        expect(fact, name).toMatchObject({ kind: "compaction", strategy: LEDGER_FACTS.piCompaction });
      else expect(fact.kind, name).toBe("none");
    }
  });

  it("an unknown record under our prefix and other extensions' entries are no fact; Pi's own compaction is Pi's", () => {
    expect(LEDGER_FACTS.read(customEntry(`${"context-ledger/"}${"x".repeat(5000)}`, { v: 1 })).kind).toBe("none");
    expect(LEDGER_FACTS.read(customEntry("someone-else/state", { v: 1 })).kind).toBe("none");
    expect(
      LEDGER_FACTS.read({
        ...base,
        type: "compaction",
        summary: "s",
        firstKeptEntryId: "e0",
        tokensBefore: 1,
      } as SessionEntry),
    ).toMatchObject({ kind: "compaction", strategy: LEDGER_FACTS.piCompaction });
  });
});
