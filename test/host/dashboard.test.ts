import { describe, expect, it } from "vitest";
import { renderDashboard } from "../../src/host/dashboard.ts";
import { LedgerSession } from "../../src/host/ledger-session.ts";
import { DEFAULT_SETTINGS } from "../../src/host/settings.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";

describe("/context dashboard", () => {
  it("reports usage, labels, folds and tool summaries with their sizes and hidden counts", () => {
    const b = new LedgerBuilder();
    const u = b.user("start");
    b.label(u, "cp-start");
    const a = b.assistant("work ".repeat(40));
    b.fold({ afterId: u, throughId: a }, "folded summary");
    const preserve = b.fold({ afterId: null, throughId: b.leaf!, keepDialogue: true }, "tool context");
    (b.entries.at(-1) as { customType: string }).customType = "context-ledger/preserve";
    // A response after the ranges: Pi's usage figure describes the view as it now is.
    b.assistant("next");
    const session = new LedgerSession(DEFAULT_SETTINGS);
    session.sync({ getLeafId: () => b.leaf, getEntry: (id) => b.byId().get(id) });
    const text = renderDashboard(session, {
      getContextUsage: () => ({ tokens: 1234, contextWindow: 128_000, percent: 1 }) as never,
    });
    expect(text).toContain("1,234 / 128,000 tokens (1%)");
    expect(text).toMatch(/labels: cp-start \(\S+\)/);
    expect(text).toMatch(/fold \S+: hides history after/);
    expect(text).toContain(`tool summary ${preserve}: hides tool traffic`);
    // The assistant turn under the fold, and the fold message itself under the preserve range (it is not dialogue).
    expect(text).toMatch(/6 entries, 2 hidden by ranges/);
    expect(text).toContain("(itself folded later)");
    // One entry is one entry (issue 24, item 22).
    expect(text).toContain("hid 1 entry (~");
    expect(text).not.toMatch(/\b1 entries\b/);
  });

  it("names a digest as a digest", () => {
    const b = new LedgerBuilder();
    b.user("start");
    b.tool("read", { path: "a.ts" }, "export const a = 1;");
    const digest = b.custom("context-ledger/digest", "[context digest #1: …]", {
      v: 1,
      strategy: "digest",
      range: { afterId: null, throughId: b.leaf!, keepDialogue: true },
    });
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
    expect(text).toContain(
      `compaction ${c}: checkpoint, kept from ${u}; summarized 0 entries (~0 tokens), summary ~2 tokens (newest part restored by ${r2})`,
    );
  });

  it("shows a preserve marker compaction as a marker that hides nothing", () => {
    const b = new LedgerBuilder();
    const u = b.user("start");
    b.tool("bash", {}, "out");
    const marker = b.compaction(u, "checkpoint text", { v: 1, strategy: "preserve", checkpoint: 1 });
    const session = new LedgerSession(DEFAULT_SETTINGS);
    session.sync({ getLeafId: () => b.leaf, getEntry: (id) => b.byId().get(id) });
    const text = renderDashboard(session, { getContextUsage: () => undefined });
    expect(text).toContain(`compaction ${marker}: preserve marker (manual /compact; hides nothing)`);
  });
});

describe("/context dashboard, read by a person", () => {
  it("after /compact, when Pi does not know the usage yet, shows the ledger's own estimate instead of '?'", () => {
    const b = new LedgerBuilder();
    const u = b.user("start ".repeat(50));
    b.assistant("answer ".repeat(50));
    b.compaction(u, "summary", { v: 1, strategy: "checkpoint" });
    const session = new LedgerSession(DEFAULT_SETTINGS);
    session.sync({ getLeafId: () => b.leaf, getEntry: (id) => b.byId().get(id) });
    const text = renderDashboard(session, {
      getContextUsage: () => ({ tokens: null, contextWindow: 128_000, percent: null }) as never,
    });
    expect(text).not.toContain("?");
    expect(text).toMatch(/usage: ~\d[\d,]* \/ 128,000 tokens \(estimated; Pi reports usage after the next response\)/);
  });

  it("names labelled entries, says what a fold hid in entries and tokens, and keeps calibration for /context details", () => {
    const b = new LedgerBuilder();
    const u = b.user("start");
    b.label(u, "cp-start");
    b.assistant("work ".repeat(400));
    const r = b.tool("read", { path: "a.ts" }, "x".repeat(4_000));
    const fold = b.fold({ afterId: u, throughId: r.result }, "folded summary");
    const session = new LedgerSession(DEFAULT_SETTINGS);
    session.sync({ getLeafId: () => b.leaf, getEntry: (id) => b.byId().get(id) });
    const text = renderDashboard(session, {
      getContextUsage: () => ({ tokens: 1234, contextWindow: 128_000, percent: 1 }) as never,
    });
    expect(text).toContain(`fold ${fold}: hides history after "cp-start" (${u})`);
    expect(text).toMatch(/hid 3 entries \(~1,\d{3} tokens\), summary ~\d+ tokens/);
    expect(text).not.toMatch(/calibration/);
    const details = renderDashboard(session, { getContextUsage: () => undefined }, { details: true });
    expect(details).toMatch(/estimator calibration x1\.00 \(0 samples\)/);
  });
});
