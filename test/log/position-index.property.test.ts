// The position index answers as a Map from id to position would, for the way branches use one: ids pushed at the end
// of an array (again, for a duplicate id), looked up, and deleted when the array is cut back.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PositionIndex } from "../../src/log/position-index.ts";

type Op = { push: string } | { cut: number } | { get: string };

/** Ids from a small pool, so duplicates and misses are common; enough pushes to grow the table several times. */
const idArb = fc.oneof(
  fc.constantFrom("a", "b", "c"),
  fc.string({ minLength: 0, maxLength: 12 }),
  fc.nat(400).map(String),
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: idArb.map((push) => ({ push })) },
  { weight: 1, arbitrary: fc.nat(1000).map((cut) => ({ cut })) },
  { weight: 3, arbitrary: idArb.map((get) => ({ get })) },
);

describe("the position index", () => {
  it("agrees with a Map after any pushes, cuts and lookups", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 600, size: "max" }), fc.boolean(), (ops, poor) => {
        const entries: string[] = [];
        // A poor hash puts most ids in a few probe runs, which deletions must shift back across the table's end.
        const index = poor
          ? new PositionIndex(
              (position) => entries[position],
              (id) => (id.length % 5) * 3 - 1,
            )
          : new PositionIndex((position) => entries[position]);
        const map = new Map<string, number>();
        for (const op of ops) {
          if ("push" in op) {
            index.set(op.push, entries.length);
            map.set(op.push, entries.length);
            entries.push(op.push);
          } else if ("cut" in op) {
            const length = op.cut % (entries.length + 1);
            for (const id of entries.slice(length)) {
              index.delete(id);
              map.delete(id);
            }
            entries.length = length;
          } else {
            expect(index.get(op.get)).toBe(map.get(op.get));
            expect(index.has(op.get)).toBe(map.has(op.get));
          }
          expect(index.size).toBe(map.size);
        }
        for (const [id, position] of map) expect(index.get(id)).toBe(position);
      }),
    );
  });
});
