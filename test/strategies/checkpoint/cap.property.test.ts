import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { capSpans, MIN_CONVERSATION_CHARS, STUB_KEEP_CHARS } from "../../../src/strategies/checkpoint/cap.ts";
import { planCheckpoint, type CheckpointDetails } from "../../../src/strategies/checkpoint/planner.ts";
import { spansLines, TRIM_NOTE } from "../../../src/strategies/checkpoint/render.ts";
import type { CheckpointSpan, SpanItem } from "../../../src/strategies/checkpoint/spans.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { compactInto, inputFor, spanBody, UNCAPPED } from "./fixtures.ts";

const user = (id: string, body: string[]): SpanItem => ({ kind: "user", head: `[user ${id}]`, body });
const other = (id: string, body: string[] = []): SpanItem => ({ kind: "other", head: `[assistant ${id}]`, body });
const span = (n: number, items: SpanItem[]): CheckpointSpan => ({ n, from: `f${n}`, through: `t${n}`, items });
const size = (spans: ReturnType<typeof capSpans>["spans"]) =>
  spansLines(spans).reduce((sum, line) => sum + line.length + 1, 0);

describe("cap stages", () => {
  const spans = () => [
    span(1, [
      user("u1", ["first request"]),
      other("a1", ["x".repeat(400)]),
      user(
        "u2",
        Array.from({ length: 60 }, (_, i) => `long line ${i} ${"y".repeat(60)}`),
      ),
    ]),
    span(2, [other("a2", ["z".repeat(400)]), user("u3", ["latest request"])]),
  ];

  it("stage 1 removes non-user content oldest first and leaves user messages alone", () => {
    const full = size(capSpans(spans(), Infinity).spans);
    const result = capSpans(spans(), full - 200);
    expect(result.spans[0].span.items.map((i) => i.head)).toEqual(["[user u1]", "[user u2]"]);
    expect(result.spans[1].span.items.map((i) => i.head)).toEqual(["[assistant a2]", "[user u3]"]);
    expect(result.spans.map((s) => s.trimmed)).toEqual([true, false]);
    expect(result.removedItems).toBe(1);
    expect(spansLines(result.spans)).toContain(TRIM_NOTE);
    expect(spansLines(result.spans)[0]).toBe('<span n="1" from="f1" through="t1" trimmed="true">');
  });

  it("stage 2 shortens long user messages to marked prefix stubs, oldest first", () => {
    const result = capSpans(spans(), 2_000);
    const items = result.spans.flatMap((s) => s.span.items);
    expect(items.some((i) => i.kind === "other")).toBe(false);
    const stub = items.find((i) => i.head.startsWith("[user u2"))!;
    expect(stub.head).toMatch(/^\[user u2; trimmed\] kept lines 1-\d+ of 60$/);
    expect(stub.body.join("\n").length).toBeLessThanOrEqual(STUB_KEEP_CHARS);
    expect(stub.body[0]).toBe(`long line 0 ${"y".repeat(60)}`);
    expect(items.find((i) => i.head === "[user u1]")?.body).toEqual(["first request"]);
    expect(result.shortenedItems).toBe(1);
    expect(size(result.spans)).toBeLessThanOrEqual(2_000);
  });

  it("stage 3 removes the oldest remaining content, user messages included", () => {
    const result = capSpans(spans(), 700);
    const heads = result.spans.flatMap((s) => s.span.items.map((i) => i.head));
    expect(heads).not.toContain("[user u1]");
    expect(heads[heads.length - 1]).toBe("[user u3]");
    expect(size(result.spans)).toBeLessThanOrEqual(700);
    expect(result.spans.every((s) => s.trimmed)).toBe(true);
  });

  it("cuts the front lines of the last item it touches rather than dropping it whole", () => {
    // Below the stub threshold, so stage 2 leaves it whole and stage 3 has to cut it.
    const big = span(1, [
      user(
        "u1",
        Array.from({ length: 40 }, (_, i) => `line ${i} ${"q".repeat(36)}`),
      ),
    ]);
    const result = capSpans([big], 1_000);
    const [item] = result.spans[0].span.items;
    expect(item.head).toMatch(/^\[user u1; trimmed\] kept lines \d+-40 of 40$/);
    expect(item.body[item.body.length - 1]).toBe(`line 39 ${"q".repeat(36)}`);
    expect(item.body.length).toBeGreaterThan(10);
    expect(size(result.spans)).toBeLessThanOrEqual(1_000);
  });

  it("never marks an originally empty span and never goes below the 500-character minimum", () => {
    const result = capSpans([span(1, []), span(2, [user("u", ["a".repeat(300)])])], 10);
    expect(result.spans[0].trimmed).toBe(false);
    // The 300-character message fits in the minimum budget, so nothing is cut.
    expect(result.spans[1].trimmed).toBe(false);
    expect(size(result.spans)).toBeLessThanOrEqual(MIN_CONVERSATION_CHARS);
  });

  it("keeps the rendered size within the budget unless nothing is left to trim (property)", () => {
    const itemArb = fc.record({
      kind: fc.constantFrom<"user" | "other">("user", "other"),
      head: fc.nat({ max: 999 }).map((n) => `[user i${n}]`),
      body: fc.array(
        fc.string({ maxLength: 300 }).map((s) => s.replace(/\n/g, " ")),
        { maxLength: 30 },
      ),
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(itemArb, { maxLength: 8 }), { maxLength: 5 }),
        fc.integer({ min: 0, max: 20_000 }),
        (items, budget) => {
          const spans = items.map((list, i) => span(i + 1, list));
          const result = capSpans(spans, budget);
          const rendered = size(result.spans);
          if (rendered !== result.chars) return false;
          const empty = result.spans.every((s) => s.span.items.length === 0);
          return rendered <= Math.max(budget, MIN_CONVERSATION_CHARS) || empty;
        },
      ),
    );
  });

  it("caps the same span objects again, under other budgets, as it caps fresh copies (the size memos)", () => {
    const itemArb = fc.record({
      kind: fc.constantFrom<"user" | "other">("user", "other"),
      head: fc.constantFrom("[user a]", "[assistant <keepContext> b]", "[user </summary> c]"),
      body: fc.array(fc.string({ maxLength: 120 }), { maxLength: 12 }),
    });
    fc.assert(
      fc.property(
        fc.array(fc.array(itemArb, { maxLength: 6 }), { maxLength: 5 }),
        fc.array(fc.integer({ min: 0, max: 8_000 }), { minLength: 2, maxLength: 4 }),
        (items, budgets) => {
          // Earlier checkpoints' spans come back as the same objects at every compaction, as here.
          const spans = items.map((list, i) => span(i + 1, list));
          for (const budget of budgets)
            expect(capSpans(spans, budget)).toEqual(capSpans(structuredClone(spans), budget));
        },
      ),
    );
  });
});

describe("cap in the planner", () => {
  it("budgets 25% of the context window by default, keeps details uncapped, and marks trimmed spans", () => {
    const b = new LedgerBuilder();
    const u1 = b.user("please do it");
    for (let i = 0; i < 30; i++)
      b.tool("bash", { command: `step ${i}` }, "out", { text: `narration ${i} ${"n".repeat(200)}` });
    const u2 = b.user("next");
    const plan = planCheckpoint(inputFor(b.entries, u2, { contextWindow: 4_000 }), {
      capPercent: 25,
      startupReads: true,
    });
    const details = plan.details as CheckpointDetails;
    expect(details.stats.budgetTokens).toBe(1_000);
    expect(details.stats.trimmedSpans).toBe(1);
    expect(details.spans[0].items).toHaveLength(61);
    expect(plan.summary).toMatch(/<span [^>]*trimmed="true">/);
    expect(spanBody(plan.summary, 1)).toContain(`[user ${u1}]`);
    expect(spanBody(plan.summary, 1)).toContain("please do it");
    expect(Math.ceil(plan.summary.length / 4)).toBeLessThanOrEqual(1_000);
  });

  it("re-caps earlier spans from their uncapped details at the next checkpoint", () => {
    const b = new LedgerBuilder();
    b.user("one");
    b.assistant("a".repeat(3_000));
    const u2 = b.user("two");
    const first = compactInto(b, u2, UNCAPPED);
    expect(first.plan.summary).not.toMatch(/<span [^>]*trimmed="true">/);
    b.assistant("b".repeat(3_000));
    const u3 = b.user("three");
    const second = planCheckpoint(inputFor(b.entries, u3, { contextWindow: 4_000 }), {
      capPercent: 25,
      startupReads: false,
    });
    // The oldest non-user content goes first: span 1's prose, then span 2's.
    expect(spanBody(second.summary, 1)).not.toContain("a".repeat(3_000));
    expect(spanBody(second.summary, 1)).toContain("one");
    expect(spanBody(second.summary, 2)).toContain("two");
  });
});
