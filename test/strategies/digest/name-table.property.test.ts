// The digest's name table numbers names by looking each occurrence up by its characters. Against `namesIn` on every
// text, on one table used for many texts from a tiny start (so it grows and its probes collide).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { namesIn } from "../../../src/strategies/digest/lines.ts";
import { NameTable } from "../../../src/strategies/digest/name-table.ts";
import { codeArb, pathArb, proseArb } from "../../arbitraries/index.ts";

const textArb = fc.oneof(
  codeArb,
  pathArb,
  proseArb,
  fc.string({ unit: fc.constantFrom("a", "b", "B", "_", "$", ".", "/", "-", "+", " ", "\n"), maxLength: 40 }),
  fc.string(),
);

describe("the name table", () => {
  it("lists each text's names as namesIn does, one number per distinct name, across texts and growth", () => {
    fc.assert(
      fc.property(fc.array(textArb, { maxLength: 12 }), fc.integer({ min: 1, max: 4 }), (texts, bits) => {
        const table = new NameTable(bits);
        const numbered = new Map<string, number>();
        for (const text of texts) {
          const ids = table.idsIn(text);
          expect(Array.from(ids, (id) => table.list[id])).toEqual([...namesIn(text)]);
          for (const id of ids) {
            const name = table.list[id];
            expect(numbered.get(name) ?? id).toBe(id);
            numbered.set(name, id);
            expect(table.idOf(name)).toBe(id);
          }
        }
        expect(new Set(table.list).size).toBe(table.list.length);
        expect(table.idOf("\u0000 not a name")).toBeUndefined();
      }),
    );
  });
});
