// Budget awareness, pure side: the threshold each strategy acts at, the crossing rule and the notice text.
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/log/entries.ts";
import {
  budgetNoticeDraft,
  isArmed,
  renderBudgetNotice,
  shouldNotify,
  thresholdFor,
} from "../../src/projection/budget.ts";
import { budgetOf } from "../../src/strategies/registry.ts";
import { triggerTokens } from "../../src/strategies/preserve/reserve.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";

const PI = { enabled: true, reserveTokens: 16_384 };

/** An assistant entry whose provider reported `tokens` of context. */
function answered(b: LedgerBuilder, tokens: number): string {
  const id = b.assistant("ok");
  const entry = b.entries.at(-1) as unknown as { message: { usage: Record<string, unknown> } };
  entry.message.usage = { ...entry.message.usage, input: tokens, totalTokens: tokens };
  return id;
}

describe("thresholdFor", () => {
  it("is Pi's compaction point for the compacting strategies, preserve's own curve for preserve, the window when compaction is off", () => {
    expect(thresholdFor(budgetOf("checkpoint"), 128_000, PI).tokens).toBe(111_616);
    expect(thresholdFor(budgetOf("native"), 128_000, { enabled: true, reserveTokens: 30_000 }).tokens).toBe(98_000);
    expect(thresholdFor(budgetOf("preserve"), 128_000, PI).tokens).toBe(triggerTokens(128_000));
    expect(thresholdFor(budgetOf("planned"), 128_000, { enabled: false, reserveTokens: 16_384 })).toMatchObject({
      tokens: 128_000,
      action: expect.stringContaining("compaction is off"),
    });
  });
});

describe("crossing rule", () => {
  const threshold = thresholdFor(budgetOf("checkpoint"), 128_000, PI);
  const base = { threshold, share: 0.8, armed: true, busy: false };

  it("notifies between the share and the threshold, once armed and when nothing else changes the context", () => {
    expect(shouldNotify({ ...base, usage: 89_000 })).toBe(false);
    expect(shouldNotify({ ...base, usage: 90_000 })).toBe(true);
    expect(shouldNotify({ ...base, usage: 111_616 })).toBe(false); // the strategy acts anyway
    expect(shouldNotify({ ...base, usage: 90_000, armed: false })).toBe(false);
    expect(shouldNotify({ ...base, usage: 90_000, busy: true })).toBe(false);
    expect(shouldNotify({ ...base, usage: null })).toBe(false);
  });

  it("re-arms only when a later request was reported below the level; read from the branch alone", () => {
    const b = new LedgerBuilder();
    b.user("go");
    answered(b, 50_000);
    expect(isArmed(b.entries as SessionEntry[], 80_000)).toBe(true);
    const notice = budgetNoticeDraft(85_000, threshold, 0.8, true);
    b.custom(notice.customType, notice.content, notice.details);
    answered(b, 95_000);
    expect(isArmed(b.entries as SessionEntry[], 80_000)).toBe(false);
    answered(b, 30_000); // a fold or a compaction brought usage down
    expect(isArmed(b.entries as SessionEntry[], 80_000)).toBe(true);
  });
});

describe("notice text", () => {
  it("states usage, the threshold and what happens there, and the fold tools only when they exist", () => {
    const threshold = thresholdFor(budgetOf("preserve"), 200_000, PI);
    const text = renderBudgetNotice(150_000, threshold, true);
    expect(text).toContain("~150,000 tokens");
    expect(text).toContain(`${threshold.tokens.toLocaleString("en-US")}-token point (window 200,000)`);
    expect(text).toContain("replaced by a tool summary");
    expect(text).toMatch(/context_compact.*context_timeline/);
    expect(renderBudgetNotice(150_000, threshold, false)).not.toContain("context_compact");
  });
});
