// Long patterns in the many-pattern finder. An edit can replace a whole function, and the working set looks for that
// text in every view; a trie of every character of every such text takes tens of bytes per character, more than the
// session file itself. The finder keeps only a bounded anchor of a long pattern in its trie and checks the rest where
// the anchor occurs, so its size follows the number of patterns, and its work stays linear in the text on any input.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Finder } from "../../src/lab/finder.ts";
import { runs } from "../support/fast-check.ts";

/** Distinct texts of `length` characters from a small vocabulary of code lines (one per seed). */
function codeText(seed: number, length: number): string {
  let text = "";
  for (let i = seed; text.length < length; i++)
    text += `export function f${(i * 2654435761) >>> 0}(x) { return x + ${i}; }\n`;
  return text.slice(0, length);
}

describe("long patterns in the finder", () => {
  it("finds exactly the patterns a naive search finds, whatever the anchor (property: shared anchors, periodic texts)", () => {
    const alphabet = fc.constantFrom("a", "b", "\n", "é", "💡");
    const word = fc.array(alphabet, { minLength: 0, maxLength: 24 }).map((cs) => cs.join(""));
    // Periodic texts ("abab…") make an anchor occur at many positions where the pattern does not.
    const periodic = fc
      .tuple(fc.array(alphabet, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 60 }))
      .map(([unit, times]) => unit.join("").repeat(times));
    const text = fc.oneof(
      fc.array(alphabet, { maxLength: 120 }).map((cs) => cs.join("")),
      periodic,
    );
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 30 }),
        fc.array(text, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 4 }),
        (patterns, texts, anchorChars, anchorGroup) => {
          const finder = new Finder(patterns, undefined, { anchorChars, anchorGroup });
          for (const t of texts) {
            const naive = patterns.flatMap((p, id) => (p && t.includes(p) ? [id] : []));
            expect([...finder.find(t)].sort((a, b) => a - b)).toEqual(naive);
          }
        },
      ),
      { numRuns: runs(1.5) },
    );
  });

  it("keeps a bounded anchor of each long pattern, not its every character", () => {
    // 200 replaced texts of 20,000 characters: four million characters of patterns.
    const patterns = Array.from({ length: 200 }, (_, i) => codeText(i * 1000, 20_000));
    const finder = new Finder(patterns);
    expect(finder.nodes).toBeLessThan(200 * 2 * 64);
    const text = `${codeText(5 * 1000, 30_000)}\n${patterns[17]}`;
    const naive = patterns.flatMap((p, id) => (text.includes(p) ? [id] : []));
    expect(naive).toContain(17);
    expect([...finder.find(text)].sort((a, b) => a - b)).toEqual(naive);
  });

  it("does work linear in the text where a shared anchor occurs everywhere (many patterns of one letter and a tail)", () => {
    // Every pattern starts with 5,000 times "a"; the text is a long run of "a", so their anchor occurs at
    // every position and none of them occurs.
    const patterns = Array.from({ length: 100 }, (_, i) => `${"a".repeat(5000)}${i}`);
    const finder = new Finder(patterns);
    for (const length of [20_000, 200_000]) {
      const before = finder.checks;
      expect([...finder.find("a".repeat(length))]).toEqual([]);
      expect(finder.checks - before).toBeLessThanOrEqual(16 * length);
    }
  });
});
