// `show` says what hid each hidden entry: a session without a fold reports no fold. Issue 24, item 21.
import { describe, expect, it } from "vitest";
import { renderShow, showReport } from "../../src/lab/commands/show.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";

describe("show's hidden counts", () => {
  it("counts entries under a digest as under digests, not as folded", () => {
    const b = new LedgerBuilder();
    b.user("start");
    b.tool("read", { path: "a.ts" }, "export const a = 1;\n".repeat(40));
    b.tool("read", { path: "b.ts" }, "export const b = 2;\n".repeat(40));
    b.custom("context-ledger/digest", "[context digest #1: …]", {
      v: 1,
      strategy: "digest",
      checkpoint: 1,
      range: { afterId: null, throughId: b.leaf!, keepDialogue: true },
    });
    b.user("next");
    const report = showReport("s.jsonl", b.entries, [], {});
    expect(report.hidden.folded).toBe(0);
    expect(report.hidden.ranges).toEqual({ digest: 4 });
    expect(renderShow(report)).toMatch(/hidden in the file: 0 compacted, 0 folded, 4 under digests \(/);
  });

  it("counts the summary of a restored fold as withdrawn, not as folded", () => {
    const b = new LedgerBuilder();
    const u = b.user("start");
    const a = b.assistant("work ".repeat(40));
    const fold = b.fold({ afterId: u, throughId: a }, "folded summary");
    b.restore(fold, "fold");
    b.user("next");
    const report = showReport("s.jsonl", b.entries, [], {});
    expect(report.hidden).toMatchObject({ compacted: 0, folded: 0, ranges: {}, withdrawn: 1 });
    expect(renderShow(report)).toMatch(/0 compacted, 0 folded, 1 withdrawn by restores \(/);
  });
});
