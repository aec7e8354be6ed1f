import { describe, expect, it } from "vitest";
import { LedgerType, LEDGER_FACTS } from "../../../src/strategies/catalog.ts";
import { projectBranch } from "../../../src/projection/project.ts";
import { checkpointDraft, extractiveCheckpoint } from "../../../src/strategies/preserve/checkpoint.ts";
import { entryBefore, fitDelta, ordinalsOf, selectDelta } from "../../../src/strategies/shared/delta.ts";
import { writeExtractiveCheckpoint } from "../../../src/strategies/preserve/extractive.ts";
import {
  chooseRequestShape,
  continuationAsk,
  deltaOnlyOverhead,
  deltaOnlyRequest,
  normalizeCheckpointText,
  renderUnit,
  unitFitCost,
} from "../../../src/strategies/preserve/prompt.ts";
import { decideTrigger, reserveTokens, triggerTokens } from "../../../src/strategies/preserve/reserve.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { appendDraft, twoRequests } from "./fixtures.ts";

describe("reserve curve", () => {
  it("matches the fitted curve at common windows", () => {
    expect(reserveTokens(8_000)).toBe(3_623);
    expect(reserveTokens(32_000)).toBe(7_001);
    expect(reserveTokens(128_000)).toBe(14_838);
    expect(reserveTokens(200_000)).toBe(18_823);
    expect(reserveTokens(1_000_000)).toBe(39_593);
    expect(triggerTokens(128_000)).toBe(128_000 - 14_838);
  });

  it("grows with the window and never exceeds it for realistic windows", () => {
    let previous = 0;
    for (let w = 4_000; w <= 2_000_000; w += 4_000) {
      const r = reserveTokens(w);
      expect(r).toBeGreaterThanOrEqual(previous);
      expect(r).toBeLessThan(w);
      previous = r;
    }
  });
});

describe("trigger", () => {
  const window = 128_000;
  const at = triggerTokens(window);
  it("fires at window − reserve when older technical state exists", () => {
    expect(decideTrigger({ usageTokens: at, contextWindow: window, compactableTokens: 10 })).toEqual({
      checkpoint: true,
      threshold: at,
    });
  });
  it("waits below the threshold, with unknown usage, and with nothing to compact", () => {
    expect(decideTrigger({ usageTokens: at - 1, contextWindow: window, compactableTokens: 10 })).toMatchObject({
      checkpoint: false,
      reason: "below threshold",
    });
    expect(decideTrigger({ usageTokens: null, contextWindow: window, compactableTokens: 10 })).toMatchObject({
      checkpoint: false,
      reason: "usage unknown",
    });
    expect(decideTrigger({ usageTokens: window, contextWindow: window, compactableTokens: 0 })).toMatchObject({
      checkpoint: false,
      reason: "nothing to compact",
    });
  });
});

describe("delta selection", () => {
  it("groups technical units by the absolute user ordinal and stops before the current assistant message", () => {
    const { b, ids } = twoRequests();
    const limit = entryBefore(b.entries, ids.current)!;
    expect(limit).toBe(ids.r3);
    const delta = selectDelta(b.entries, limit)!;
    expect(delta.afterId).toBeNull();
    expect(delta.checkpoint).toBe(1);
    expect(delta.units.map((u) => [u.ordinal, u.entryIds])).toEqual([
      [1, [ids.a1, ids.r1]],
      [1, [ids.a2, ids.r2]],
      [2, [ids.a3, ids.r3]],
    ]);
    expect(ordinalsOf(delta.units)).toEqual([1, 2]);
    // Dialogue and the current batch are never part of the delta.
    const all = delta.units.flatMap((u) => u.entryIds);
    for (const id of [ids.user1, ids.answer, ids.user2, ids.current, ids.r4]) expect(all).not.toContain(id);
  });

  it("starts after the previous checkpoint's range and numbers the next checkpoint", () => {
    const { b, ids } = twoRequests();
    const first = extractiveCheckpoint(b.entries, ids.r2);
    if (!first.ok) throw new Error(first.error);
    appendDraft(b, first.draft);
    const delta = selectDelta(b.entries, ids.r3)!;
    expect(delta.afterId).toBe(ids.r2);
    expect(delta.checkpoint).toBe(2);
    expect(delta.units.map((u) => u.entryIds)).toEqual([[ids.a3, ids.r3]]);
    expect(delta.units[0].ordinal).toBe(2); // absolute, even though user 1 is outside the delta
  });

  it("keeps parallel calls with all their results, and a custom message that arrives mid-batch, in one unit", () => {
    const { b } = twoRequests();
    const u3 = b.user("Check both files.");
    const a = b.assistant("", [
      { id: "p1", name: "read", args: { path: "a.ts" } },
      { id: "p2", name: "read", args: { path: "b.ts" } },
    ]);
    const r1 = b.toolResult("p1", "read", "A");
    const note = b.entries.length;
    b.entries.push({
      id: "note1",
      parentId: b.leaf,
      timestamp: "2026-01-01T00:10:00.000Z",
      type: "custom_message",
      customType: "other/x",
      content: "fyi",
      display: false,
    } as never);
    b.leaf = "note1";
    const r2 = b.toolResult("p2", "read", "B");
    const current = b.assistant("", [{ id: "p3", name: "read", args: { path: "c.ts" } }]);
    const delta = selectDelta(b.entries, entryBefore(b.entries, current)!)!;
    const last = delta.units.at(-1)!;
    expect(last.entryIds).toEqual([a, r1, b.entries[note].id, r2]);
    expect(last.ordinal).toBe(3);
    expect(u3).toBeTruthy();
  });

  it("skips technical state already hidden by a fold", () => {
    const { b, ids } = twoRequests();
    const withFold = b.entries.slice(
      0,
      b.entries.findIndex((e) => e.id === ids.answer),
    );
    const fb = Object.assign(Object.create(Object.getPrototypeOf(b)), b, { entries: withFold, leaf: ids.r2 });
    fb.fold({ afterId: ids.user1, throughId: ids.r2 }, "folded read and tests");
    const delta = selectDelta(fb.entries, ids.r2)!;
    expect(delta.units).toEqual([]);
  });
});

describe("fit and carry-over", () => {
  it("takes the largest older prefix that fits and carries the newest suffix raw", () => {
    const { b, ids } = twoRequests();
    const delta = selectDelta(b.entries, ids.r3)!;
    const costs = delta.units.map(unitFitCost);
    const fit = fitDelta(delta, costs[0] + costs[1], unitFitCost);
    expect(fit.ok).toBe(true);
    if (!fit.ok) return;
    expect(fit.included.length).toBe(2);
    expect(fit.carried.map((u) => u.entryIds)).toEqual([[ids.a3, ids.r3]]);
    // The rule ends at the last included unit, never before a tool result.
    expect(fit.throughId).toBe(ids.r2);
  });

  it("judges fit at UTF-8 bytes / 3, so non-ASCII tool output is not underestimated", () => {
    const b = new LedgerBuilder();
    b.user("Übersetze die Datei.");
    const text = "Größenänderung → ✓ 日本語テキスト ".repeat(300);
    const step = b.tool("read", { path: "de.txt" }, text);
    const delta = selectDelta(b.entries, step.result)!;
    const rendered = `${renderUnit(delta.units[0])}\n\n`;
    const bytes = new TextEncoder().encode(rendered).length;
    expect(bytes).toBeGreaterThan(rendered.length * 1.5);
    expect(unitFitCost(delta.units[0])).toBe(Math.ceil(bytes / 3));
    // The request shell is judged the same way.
    const shell = deltaOnlyRequest(1, [1], []);
    expect(deltaOnlyOverhead(1, [1])).toBe(
      Math.ceil(new TextEncoder().encode(shell.system + shell.prompt).length / 3) + 16,
    );
  });

  it("ends the rule at the delta's limit when everything fits", () => {
    const { b, ids } = twoRequests();
    const delta = selectDelta(b.entries, ids.r3)!;
    const fit = fitDelta(delta, 1e9, unitFitCost);
    expect(fit).toMatchObject({ ok: true, throughId: ids.r3, carried: [] });
  });

  it("fails closed when the first indivisible unit cannot fit", () => {
    const { b, ids } = twoRequests();
    const delta = selectDelta(b.entries, ids.r3)!;
    const fit = fitDelta(delta, unitFitCost(delta.units[0]) - 1, unitFitCost);
    expect(fit.ok).toBe(false);
    if (fit.ok) return;
    expect(fit.error).toMatch(/does not fit/);
    expect(fit.error).toMatch(/user message 1/);
  });

  it("refuses an empty delta instead of manufacturing a checkpoint", () => {
    const { b, ids } = twoRequests();
    const result = extractiveCheckpoint(b.entries, ids.user1);
    expect(result).toMatchObject({ ok: false });
  });

  it("a carried suffix becomes the start of the next checkpoint", () => {
    const { b, ids } = twoRequests();
    const delta = selectDelta(b.entries, ids.r3)!;
    const budgetForOne = unitFitCost(delta.units[0]) + 400; // overhead of the request shell included below
    const first = extractiveCheckpoint(b.entries, ids.r3, budgetForOne + 10_000);
    expect(first.ok).toBe(true);
    const small = extractiveCheckpoint(b.entries, ids.r3, 0);
    expect(small.ok).toBe(false);
    // Fit only the first unit by hand and persist it.
    const fit = fitDelta(delta, unitFitCost(delta.units[0]), unitFitCost);
    if (!fit.ok) throw new Error(fit.error);
    appendDraft(
      b,
      checkpointDraft({ delta, ...fit, body: writeExtractiveCheckpoint(fit.included), writer: "extractive" }),
    );
    const next = selectDelta(b.entries, ids.r4)!;
    expect(next.afterId).toBe(ids.r1);
    expect(next.units.map((u) => u.entryIds[0])).toEqual([ids.a2, ids.a3, ids.current]);
  });
});

describe("extractive writer", () => {
  it("writes the Tool Context format per user message", () => {
    const { b, ids } = twoRequests();
    const delta = selectDelta(b.entries, ids.r3)!;
    const text = writeExtractiveCheckpoint(delta.units);
    expect(text).toBe(
      [
        "## Tool Context",
        "### User message 1",
        "#### Findings",
        "- Read `src/retry.ts`",
        "",
        "#### Changes & Validation",
        "- `npm test`: exit 1; Tests: 12 passed, 1 failed",
        "",
        "#### Unresolved",
        "- bash: Error: expected 3 to be 4",
        "",
        "### User message 2",
        "#### Findings",
        "- (none)",
        "",
        "#### Changes & Validation",
        "- Edited `src/retry.ts`",
        "",
        "#### Unresolved",
        "- (none)",
      ].join("\n"),
    );
  });

  it("is deterministic: the same input gives the same bytes (invariant 8)", () => {
    const { b, ids } = twoRequests();
    const one = extractiveCheckpoint(b.entries, ids.r3);
    const two = extractiveCheckpoint(structuredClone(b.entries), ids.r3);
    expect(JSON.stringify(one)).toBe(JSON.stringify(two));
  });
});

describe("summary requests", () => {
  it("the continuation ask names the exact ordinals and forbids touching earlier tool summaries", () => {
    const ask = continuationAsk(3, [4, 7]);
    expect(ask).toContain("tool summary #3");
    expect(ask).toContain("user message(s) 4, 7");
    expect(ask).toContain("### User message 4");
    expect(ask).toContain("### User message 7");
    expect(ask).toMatch(/Do not repeat, merge/);
  });

  it("the delta-only request carries exactly the technical delta with call ids, names, arguments and full results", () => {
    const { b, ids } = twoRequests();
    const delta = selectDelta(b.entries, ids.r3)!;
    const req = deltaOnlyRequest(1, [1, 2], delta.units);
    expect(req.prompt).toContain('[tool call c1] read {"path":"src/retry.ts"}');
    expect(req.prompt).toContain("export function nextDelay(n) {\n  return n * 2;\n}");
    expect(req.prompt).toContain("[tool result c2 bash (error)]");
    expect(req.prompt).toContain("=== Work for user message 2 ===");
    expect(req.prompt).not.toContain("Why do retries loop forever");
    expect(req.prompt).not.toContain("nextDelay never caps");
    expect(req.prompt).not.toContain("Running the tests again");
  });

  it("prefers the cached continuation and switches to delta-only when it cannot leave room for the summary", () => {
    const base = { contextWindow: 10_000, askTokens: 300, outputCap: 3_000, deltaOverhead: 200 };
    expect(chooseRequestShape({ ...base, prefixTokens: 5_000 })).toEqual({ mode: "continuation", maxOutput: 3_000 });
    expect(chooseRequestShape({ ...base, prefixTokens: 8_000 })).toEqual({ mode: "continuation", maxOutput: 1_700 });
    expect(chooseRequestShape({ ...base, prefixTokens: 9_500 })).toEqual({
      mode: "delta-only",
      maxOutput: 3_000,
      deltaBudget: 6_800,
    });
  });

  it("normalizes model output and rejects unusable replies", () => {
    expect(normalizeCheckpointText("## Tool Context\n### User message 2\n#### Findings\n- x")).toBe(
      "## Tool Context\n### User message 2\n#### Findings\n- x",
    );
    expect(normalizeCheckpointText("Sure!\n## Tool Context\n### User message 2\n- x")).toBe(
      "## Tool Context\n### User message 2\n- x",
    );
    expect(normalizeCheckpointText("```markdown\n### User message 1\n- y\n```")).toBe(
      "## Tool Context\n### User message 1\n- y",
    );
    expect(normalizeCheckpointText("   ")).toBeUndefined();
    expect(normalizeCheckpointText("I will call a tool now.")).toBeUndefined();
  });
});

describe("tool summary draft and its place in the model view", () => {
  it("carries a versioned keepDialogue range, the ordinals, the writer and the accounting", () => {
    const { b, ids } = twoRequests();
    const result = extractiveCheckpoint(b.entries, ids.r3, Number.POSITIVE_INFINITY, 9_000);
    if (!result.ok) throw new Error(result.error);
    const { draft } = result;
    expect(draft.customType).toBe(LedgerType.preserve);
    expect(draft.content.startsWith("[Tool summary #1:")).toBe(true);
    expect(draft.details).toMatchObject({
      v: 1,
      strategy: "preserve",
      checkpoint: 1,
      range: { afterId: null, throughId: ids.r3, keepDialogue: true },
      userOrdinals: [1, 2],
      writer: "extractive",
      tokens: { contextBefore: 9_000, carried: 0, request: 0 },
    });
    expect(draft.details.tokens.hidden).toBeGreaterThan(0);
    expect(draft.details.tokens.checkpoint).toBeGreaterThan(0);
  });

  it("the view keeps the dialogue, shows the checkpoint after its range and the current batch raw", () => {
    const { b, ids } = twoRequests();
    const result = extractiveCheckpoint(b.entries, ids.r3);
    if (!result.ok) throw new Error(result.error);
    const cp = appendDraft(b, result.draft);
    const view = projectBranch(b.entries, LEDGER_FACTS)
      .entries.filter((e) => e.messages.length)
      .map((e) => e.sourceEntry.id);
    expect(view).toEqual([ids.user1, ids.answer, ids.user2, cp, ids.current, ids.r4]);
  });
});
