// A lab view's observer against a count from scratch: whatever pushes, replacements and whole-view replacements a
// row makes (messages kept, dropped, repeated, reordered, new ones), the observer has heard every message that
// entered minus every one that left, so its net count per message object is the view's own.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { View, type ViewObserver } from "../../src/lab/view.ts";

class Counter implements ViewObserver {
  readonly counts = new Map<AgentMessage, number>();
  added(message: AgentMessage): void {
    this.counts.set(message, (this.counts.get(message) ?? 0) + 1);
  }
  removed(message: AgentMessage): void {
    this.counts.set(message, (this.counts.get(message) ?? 0) - 1);
  }
}

function countsOf(messages: readonly AgentMessage[]): Map<AgentMessage, number> {
  const counts = new Map<AgentMessage, number>();
  for (const m of messages) counts.set(m, (counts.get(m) ?? 0) + 1);
  return counts;
}

type Op =
  | { kind: "push"; pick: number }
  | { kind: "replaceAt"; at: number; pick: number }
  | { kind: "replaceAll"; picks: number[] };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("push" as const), pick: fc.nat(12) }),
  fc.record({ kind: fc.constant("replaceAt" as const), at: fc.nat(), pick: fc.nat(12) }),
  fc.record({ kind: fc.constant("replaceAll" as const), picks: fc.array(fc.nat(12), { maxLength: 10 }) }),
);

describe("a lab view's observer", () => {
  it("nets, per message object, exactly what the view holds after any sequence of changes", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 30 }), fc.boolean(), (ops, observeFirst) => {
        // A small pool, so replacements keep, repeat and reorder the same objects.
        const pool = Array.from(
          { length: 13 },
          (_, i) => ({ role: "user", content: `m${i % 5}`, timestamp: i }) as AgentMessage,
        );
        const view = new View();
        const counter = new Counter();
        // The observer joins before the first change or half-way through.
        const joins = observeFirst ? 0 : Math.floor(ops.length / 2);
        ops.forEach((op, k) => {
          if (k === joins) view.observe(counter);
          if (op.kind === "push") view.push(pool[op.pick]);
          else if (op.kind === "replaceAt" && view.length) view.replaceAt(op.at % view.length, pool[op.pick]);
          else if (op.kind === "replaceAll") view.replaceAll(op.picks.map((p) => pool[p]));
        });
        if (joins >= ops.length) view.observe(counter);
        const expected = countsOf(view.messages);
        for (const m of pool) expect(counter.counts.get(m) ?? 0).toBe(expected.get(m) ?? 0);
      }),
    );
  });
});

describe("dropping a view's oldest messages", () => {
  it("is replaceAll of the rest: the same messages, tokens, cached prefixes and observer counts", () => {
    type Step = { kind: "push"; pick: number } | { kind: "drop"; count: number } | { kind: "request" };
    const stepArb: fc.Arbitrary<Step> = fc.oneof(
      fc.record({ kind: fc.constant("push" as const), pick: fc.nat(12) }),
      fc.record({ kind: fc.constant("drop" as const), count: fc.nat(6) }),
      fc.constant({ kind: "request" as const }),
    );
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 40 }), (steps) => {
        // Byte-equal messages in distinct objects, so the kept prefix is sometimes found by comparing bytes.
        const pool = Array.from(
          { length: 13 },
          (_, i) => ({ role: "user", content: `m${i % 3}`.repeat(1 + (i % 4)), timestamp: 0 }) as AgentMessage,
        );
        const dropped = new View();
        const replaced = new View();
        const a = new Counter();
        const b = new Counter();
        dropped.observe(a);
        replaced.observe(b);
        for (const step of steps) {
          if (step.kind === "push") {
            dropped.push(pool[step.pick]);
            replaced.push(pool[step.pick]);
          } else if (step.kind === "drop") {
            const count = Math.min(step.count, dropped.length);
            replaced.replaceAll(replaced.messages.slice(count));
            dropped.dropFirst(count);
          } else expect(dropped.markRequest()).toEqual(replaced.markRequest());
          expect(dropped.messages).toEqual(replaced.messages);
          expect(dropped.tokens).toBe(replaced.tokens);
        }
        expect(dropped.markRequest()).toEqual(replaced.markRequest());
        for (const m of pool) expect(a.counts.get(m) ?? 0).toBe(b.counts.get(m) ?? 0);
      }),
    );
  });
});
