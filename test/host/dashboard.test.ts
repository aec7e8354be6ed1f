import { describe, expect, it } from "vitest";
import { renderDashboard } from "../../src/host/dashboard.ts";
import { LedgerSession } from "../../src/host/ledger-session.ts";
import { DEFAULT_SETTINGS } from "../../src/host/settings.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";

describe("/context dashboard", () => {
  it("reports usage, checkpoints, folds and preserve checkpoints with their sizes and hidden counts", () => {
    const b = new LedgerBuilder();
    const u = b.user("start");
    b.label(u, "cp-start");
    const a = b.assistant("work ".repeat(40));
    b.fold({ afterId: u, throughId: a }, "folded summary");
    const preserve = b.fold({ afterId: null, throughId: b.leaf!, keepDialogue: true }, "tool context");
    (b.entries.at(-1) as { customType: string }).customType = "context-ledger/preserve";
    const session = new LedgerSession(DEFAULT_SETTINGS);
    session.sync({ getLeafId: () => b.leaf, getEntry: (id) => b.byId().get(id) });
    const text = renderDashboard(session, { getContextUsage: () => ({ tokens: 1234, contextWindow: 128_000, percent: 1 }) as never });
    expect(text).toContain("1234 / 128000 tokens (1%)");
    expect(text).toContain("cp-start");
    expect(text).toMatch(/fold \S+: hides history after/);
    expect(text).toContain(`preserve checkpoint ${preserve}: hides tool traffic`);
    // The assistant turn under the fold, and the fold message itself under the preserve range (it is not dialogue).
    expect(text).toMatch(/5 entries, 2 hidden by folds/);
    expect(text).toContain("(itself folded later)");
  });

  it("names a digest as a digest", () => {
    const b = new LedgerBuilder();
    b.user("start");
    b.tool("read", { path: "a.ts" }, "export const a = 1;");
    const digest = b.custom("context-ledger/digest", "[context digest #1: …]", { v: 1, strategy: "digest", range: { afterId: null, throughId: b.leaf!, keepDialogue: true } });
    const session = new LedgerSession(DEFAULT_SETTINGS);
    session.sync({ getLeafId: () => b.leaf, getEntry: (id) => b.byId().get(id) });
    const text = renderDashboard(session, { getContextUsage: () => undefined });
    expect(text).toContain(`digest ${digest}: hides tool traffic after root`);
  });

  it("shows revoked and partly restored acts as such", () => {
    const b = new LedgerBuilder();
    const u = b.user("start");
    const a = b.assistant("work");
    const fold = b.fold({ afterId: u, throughId: a }, "folded summary");
    const kept = b.user("kept");
    const c = b.compaction(kept, "summary", { v: 1, strategy: "checkpoint" });
    const r1 = b.restore(fold, "fold");
    const r2 = b.restore(c, "compaction", { firstKeptEntryId: u });
    const session = new LedgerSession(DEFAULT_SETTINGS);
    session.sync({ getLeafId: () => b.leaf, getEntry: (id) => b.byId().get(id) });
    const text = renderDashboard(session, { getContextUsage: () => undefined });
    expect(text).toContain(`fold ${fold}: revoked by restore ${r1}`);
    expect(text).toContain(`compaction ${c}: checkpoint, kept from ${u} (newest part restored by ${r2})`);
  });

  it("shows a preserve marker compaction as a marker that hides nothing", () => {
    const b = new LedgerBuilder();
    const u = b.user("start");
    b.tool("bash", {}, "out");
    const marker = b.compaction(u, "checkpoint text", { v: 1, strategy: "preserve", checkpoint: 1 });
    const session = new LedgerSession(DEFAULT_SETTINGS);
    session.sync({ getLeafId: () => b.leaf, getEntry: (id) => b.byId().get(id) });
    const text = renderDashboard(session, { getContextUsage: () => undefined });
    expect(text).toContain(`compaction ${marker}: preserve checkpoint marker (manual /compact; hides nothing)`);
  });
});
