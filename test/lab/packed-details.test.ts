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

describe("our messages a compaction leaves before its cut", () => {
  const user = (id: string, parentId: string | null) =>
    ({
      type: "message",
      id,
      parentId,
      timestamp: "2026-01-01T00:00:00.000Z",
      message: { role: "user", content: `question ${id}`, timestamp: 0 },
    }) as never;
  const digest = (text: string) => ({
    type: "custom_message",
    customType: "context-ledger/digest",
    content: text,
    display: false,
    details: { v: 1 },
  });

  it("move out of memory and read back equal; those after the cut, and Pi's own, stay", () => {
    const ledger = new SimulatedLedger("t-");
    ledger.appendSource(user("u1", null));
    const covered = ledger.appendFact(digest(`digest one\n${"a line of the digest\n".repeat(200)}`));
    const short = ledger.appendFact(digest("a short digest"));
    // A custom message of the session itself (an extension's): the replay's own spilling handles those.
    const theirs = {
      ...digest(`their note\n${"x".repeat(5000)}`),
      id: "c1",
      parentId: "u1",
      timestamp: "2026-01-01T00:00:00.000Z",
    };
    ledger.appendSource(theirs as never);
    ledger.appendSource(user("u2", "c1"));
    const kept = ledger.appendFact(digest(`digest two\n${"another line\n".repeat(200)}`));
    const before = spilledBytes();
    ledger.appendFact({ type: "compaction", summary: "s", firstKeptEntryId: "u2", tokensBefore: 1, details: { v: 1 } });
    expect(spilledBytes()).toBeGreaterThan(before);
    const descriptor = (entry: object) => Object.getOwnPropertyDescriptor(entry, "content");
    expect(descriptor(covered)?.get).toBeTypeOf("function");
    expect((covered as unknown as { content: string }).content).toBe(
      `digest one\n${"a line of the digest\n".repeat(200)}`,
    );
    // Too short to pay for its reader, and after the cut: both stay plain.
    expect(descriptor(short)?.value).toBe("a short digest");
    expect(descriptor(kept)?.get).toBeUndefined();
    expect(descriptor(ledger.branch.find((e) => e.id === "c1")!)?.get).toBeUndefined();
  });
});
