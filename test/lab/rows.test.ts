// Lab rows that follow what the host does beyond the strategy's own act.
import { describe, expect, it } from "vitest";
import { DEFAULT_PRICES } from "../../src/lab/metrics.ts";
import { replaySession } from "../../src/lab/replay.ts";
import { defaultSettings } from "../../src/lab/row.ts";
import { selectRows } from "../../src/lab/rows/registry.ts";
import { SimulatedLedger } from "../../src/lab/rows/ledger-row.ts";
import { spilledBytes } from "../../src/lab/spill.ts";
import { chars, Ledger } from "./fixtures.ts";

describe("preserve row", () => {
  it("when the dialogue alone outgrows the window, the request overflows and Pi compacts natively, as the host lets it", async () => {
    // 50 turns of prose only (1,000 tokens each): no tool traffic for a tool summary to take.
    const l = new Ledger();
    for (let i = 0; i < 50; i++) {
      l.user(`${i}: ${chars(1996, "u")}`);
      l.say(`${i}: ${chars(1996, "a")}`);
    }
    const settings = defaultSettings(40_000);
    const result = await replaySession(
      { name: "prose", cwd: "", entries: l.entries },
      { settings, rows: selectRows("preserve").factories, prices: DEFAULT_PRICES },
    );
    const [row] = result.rows;
    expect(row.overWindow).toBe(0);
    expect(row.peakTokens).toBeLessThanOrEqual(settings.window);
    expect(row.actions.length).toBeGreaterThan(0);
    expect(row.actions.every((a) => a.kind === "compaction" && a.modelCall === true)).toBe(true);
    // The summarization calls Pi would make are costed.
    expect(row.actions.every((a) => a.sideCalls.length > 0)).toBe(true);
  });
});

describe("simulated ledger", () => {
  it("keeps a superseded compaction summary packed, and reading it gives back the same text", () => {
    const ledger = new SimulatedLedger("lab-test-");
    const first = `## Goal\n${"line of a long summary\n".repeat(2000)}`;
    const a = ledger.appendFact({ type: "compaction", summary: first, firstKeptEntryId: "x", tokensBefore: 1 });
    ledger.appendFact({ type: "compaction", summary: "second", firstKeptEntryId: "x", tokensBefore: 1 });
    const spilled = spilledBytes();
    expect(Object.getOwnPropertyDescriptor(a, "summary")?.get).toBeTypeOf("function");
    // The text left memory for the spill file (deflated, so fewer bytes than the text).
    expect(spilled).toBeGreaterThan(0);
    expect((a as { summary: string }).summary).toBe(first);
    expect(JSON.parse(JSON.stringify(a)).summary).toBe(first);
  });

  it("keeps a superseded compaction's large details packed too, and reading them gives back equal details", () => {
    // A planned compaction's details: a kind code per summary line, as long as the summary is.
    const ledger = new SimulatedLedger("lab-test-");
    const details = {
      v: 1,
      strategy: "planned",
      provenance: { digest: "00abcdef123456", kinds: "s1t3p2m1".repeat(1500) },
      files: ["/src/a.ts"],
    };
    const small = { v: 1, strategy: "planned", provenance: { digest: "0", kinds: "s1t1" } };
    const a = ledger.appendFact({
      type: "compaction",
      summary: "short",
      firstKeptEntryId: "x",
      tokensBefore: 1,
      details,
    });
    const b = ledger.appendFact({
      type: "compaction",
      summary: "second",
      firstKeptEntryId: "x",
      tokensBefore: 1,
      details: small,
    });
    ledger.appendFact({ type: "compaction", summary: "third", firstKeptEntryId: "x", tokensBefore: 1 });
    // Moved field by field: what the reducers read on every rebuild stays plain, the large field is read back.
    const packed = (a as { details: Record<string, unknown> }).details;
    expect(Object.getOwnPropertyDescriptor(packed, "strategy")?.value).toBe("planned");
    expect(Object.getOwnPropertyDescriptor(packed, "v")?.value).toBe(1);
    expect(Object.getOwnPropertyDescriptor(packed, "provenance")?.get).toBeTypeOf("function");
    expect(packed).toEqual(details);
    // The planner's own object is left as it was.
    expect(Object.getOwnPropertyDescriptor(details, "provenance")?.value).toBeTypeOf("object");
    expect(JSON.parse(JSON.stringify(a)).details).toEqual(details);
    // Short details are not worth a buffer and stay plain.
    expect(Object.getOwnPropertyDescriptor(b, "details")?.value).toBe(small);
  });
});
