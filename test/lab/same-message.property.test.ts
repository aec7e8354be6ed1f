// The cached-prefix comparison: two messages are the same when they put the same bytes on the wire. It walks both
// values instead of serializing them, so a projection's rebuilt copy that shares most of its parts with the old one
// is compared at the cost of what differs; the answer stays JSON.stringify's, on any value.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sameMessage } from "../../src/lab/metrics.ts";
import { runs } from "../support/fast-check.ts";

/** Leaves JSON.stringify treats specially: dropped keys, null in arrays, -0, NaN, Infinity, and a Date's toJSON. */
const leaf = fc.oneof(
  fc.constantFrom("a", "b", "", "\u2028", 0, -0, 1, Number.NaN, Number.POSITIVE_INFINITY, null, true, false, undefined),
  fc.constantFrom(new Date(0), new Date(1)),
  fc.constant(() => 1),
);
const key = fc.constantFrom("role", "content", "text", "0", "1", "toJSON", "z");

const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.dictionary(key, tie("value"), { maxKeys: 4 }),
}));

/** A copy of `v` that differs from it in a few places, or not at all, keeping some parts shared by reference. */
function variant(v: unknown, edits: number[]): unknown {
  const edit = edits.shift() ?? 0;
  if (edit % 7 === 1) return v; // shared, as a rebuilt message shares its unchanged parts
  if (edit % 11 === 2) return "changed";
  if (edit % 13 === 3) return undefined;
  if (Array.isArray(v)) return v.map((x) => variant(x, edits));
  if (v && typeof v === "object" && !(v instanceof Date)) {
    const out: Record<string, unknown> = {};
    const keys = Object.keys(v);
    if (edit % 17 === 4) keys.reverse();
    for (const k of keys) out[k] = variant((v as Record<string, unknown>)[k], edits);
    return out;
  }
  return v;
}

describe("sameMessage", () => {
  it("says two values are the same exactly when JSON.stringify writes the same bytes for them (property)", () => {
    fc.assert(
      fc.property(value, fc.array(fc.nat(40)), value, (a, edits, other) => {
        const b = variant(a, [...edits]);
        for (const [x, y] of [
          [a, b],
          [b, a],
          [a, other],
        ])
          expect(sameMessage(x as AgentMessage, y as AgentMessage)).toBe(JSON.stringify(x) === JSON.stringify(y));
      }),
      { numRuns: runs(2) },
    );
  });

  it("does not read the parts a rebuilt message shares with the old one", () => {
    let reads = 0;
    const block = {
      type: "text",
      get text() {
        reads++;
        return "a long tool output";
      },
    };
    const content = [block];
    const old = { role: "toolResult", toolCallId: "c", content, isError: false, timestamp: 1 };
    const rebuilt = { ...old };
    expect(sameMessage(old as unknown as AgentMessage, rebuilt as unknown as AgentMessage)).toBe(true);
    expect(reads).toBe(0);
    expect(sameMessage(old as unknown as AgentMessage, { ...old, timestamp: 2 } as unknown as AgentMessage)).toBe(
      false,
    );
  });
});
