// A superseded compaction's large details leave memory (spill.ts) and read back as the JSON Pi's file would hold;
// reads close together (a planner checking every prior compaction) parse the spilled text once.
import { describe, expect, it } from "vitest";
import { SimulatedLedger } from "../../src/lab/rows/ledger-row.ts";
import { spilledBytes } from "../../src/lab/spill.ts";

describe("a superseded compaction's details", () => {
  it("move out of memory, read back equal, and repeated reads in one job share one parse", () => {
    const ledger = new SimulatedLedger("t-");
    ledger.appendSource({
      type: "message",
      id: "u1",
      parentId: null,
      timestamp: "2026-01-01T00:00:00.000Z",
      message: { role: "user", content: "hello", timestamp: 0 },
    } as never);
    const spans = Array.from({ length: 400 }, (_, n) => ({
      n,
      items: [{ kind: "user", head: `span ${n}`, body: [] }],
    }));
    const details = { v: 1, strategy: "checkpoint", spans };
    const first = ledger.appendFact({
      type: "compaction",
      summary: "s",
      firstKeptEntryId: "u1",
      tokensBefore: 1,
      details,
    });
    const before = spilledBytes();
    ledger.appendFact({ type: "compaction", summary: "t", firstKeptEntryId: "u1", tokensBefore: 1, details: { v: 1 } });
    expect(spilledBytes()).toBeGreaterThan(before);
    const stored = first as unknown as { details: { v: number; strategy: string; spans: unknown } };
    // The small fields stay plain; the large one is a reader.
    expect(Object.getOwnPropertyDescriptor(stored.details, "spans")?.get).toBeTypeOf("function");
    expect(Object.getOwnPropertyDescriptor(stored.details, "strategy")?.value).toBe("checkpoint");
    const once = stored.details.spans;
    expect(once).toEqual(spans);
    expect(once).not.toBe(spans);
    expect(stored.details.spans).toBe(once);
    // The planner's own object was not changed.
    expect(Object.getOwnPropertyDescriptor(details, "spans")?.value).toBe(spans);
  });
});
