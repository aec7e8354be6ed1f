// Paging of context_timeline: bounded pages, newest first, every row exactly once across pages, and cursors that
// are checked like the recall tools' cursors.
import { describe, expect, it } from "vitest";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import type { FoldView } from "../../src/strategies/fold/targets.ts";
import { renderTimeline, renderTimelinePage, TIMELINE_PAGE, timelineRows } from "../../src/strategies/fold/timeline.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";

function view(b: LedgerBuilder): FoldView {
  const live = new LiveLedger(LEDGER_FACTS);
  live.sync(b.leaf, (id) => b.byId().get(id));
  return {
    path: live.entries,
    indexOf: (id) => live.indexOf(id),
    isHidden: (id) => live.isHidden(id),
    labels: {},
    exists: (id) => b.byId().has(id),
    labelledElsewhere: () => [],
  };
}

function page(v: FoldView, cursor?: string) {
  const out = renderTimelinePage(v, cursor);
  if ("error" in out) throw new Error(out.error);
  return out;
}

describe("context_timeline pages", () => {
  it("is unchanged when the timeline fits one page", () => {
    const b = new LedgerBuilder();
    for (let i = 0; i < 10; i++) b.user(`message ${i}`);
    expect(page(view(b))).toEqual({ text: renderTimeline(view(b)) });
  });

  it("bounds every page of a long session and lists each row once, newest page first", () => {
    const b = new LedgerBuilder();
    for (let i = 0; i < 1_200; i++) {
      b.user(`question ${i} ${"words ".repeat(30)}`);
      b.assistant(`answer ${i}`);
    }
    const v = view(b);
    const whole = renderTimeline(v);
    expect(whole.length).toBeGreaterThan(100_000);
    const pages: string[][] = [];
    let cursor: string | undefined;
    let first = "";
    do {
      const p = page(v, cursor);
      if (!cursor) first = p.text;
      expect(p.text.length).toBeLessThanOrEqual(TIMELINE_PAGE.chars + 400);
      pages.push(p.text.split("\n").filter((l) => /^\S+ (user|assistant):/.test(l)));
      cursor = p.nextCursor;
    } while (cursor && pages.length < 10_000);
    expect(pages.length).toBeGreaterThan(10);
    expect(pages.every((p) => p.length > 0 && p.length <= TIMELINE_PAGE.rows)).toBe(true);
    // Newest first: the first page ends with the last entry and starts with root.
    expect(first.split("\n")[0]).toMatch(/^root/);
    expect(first).toContain(`${b.leaf} assistant: answer 1199`);
    // Read back to front, the pages give the whole timeline in order, each row once.
    const rows = timelineRows(v).map((r) => r.line);
    expect([...pages].reverse().flat()).toEqual(rows);
    expect(pages.at(-1)!.length).toBeGreaterThan(0);
  });

  it("refuses a cursor from a changed branch, a forged position and a foreign cursor", () => {
    const b = new LedgerBuilder();
    const early = b.user("first");
    for (let i = 0; i < 400; i++) b.user(`m ${i} ${"x".repeat(100)}`);
    const cursor = page(view(b)).nextCursor!;
    expect(cursor).toBeTruthy();
    const parts = cursor.split(":");
    const forged = [parts[0], parts[1], "9".repeat(30), ...parts.slice(3)].join(":");
    expect(renderTimelinePage(view(b), forged)).toEqual({ error: expect.stringContaining("out of range") });
    expect(renderTimelinePage(view(b), "g:00000000:1:0:x")).toEqual({
      error: expect.stringContaining("invalid cursor"),
    });
    // New entries at the end leave earlier pages where they were.
    b.user("later");
    expect("error" in renderTimelinePage(view(b), cursor)).toBe(false);
    // A /tree move back to the first message takes the cursor's rows away.
    b.moveTo(early);
    b.user("another branch");
    expect(renderTimelinePage(view(b), cursor)).toEqual({ error: expect.stringContaining("timeline changed") });
  });
});
