// The item extractor does work linear in its input whatever the text: long tokens, long lines, many lines. Work
// is counted, not timed: the characters handed to the item expression, whose every attempt stays inside one token
// of at most MAX_TOKEN characters. On ordinary text (tokens up to MAX_TOKEN) it finds exactly what the single
// unbounded scan it replaced found.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ExtractWork, extractItems, MAX_TOKEN } from "../../src/lab/needed.ts";
import { codeArb, pathArb, proseArb } from "../arbitraries/text.ts";
import { referenceItems } from "./reference/needed-reference.ts";
import { runs } from "../support/fast-check.ts";

/** Token breaks, as the extractor defines them: an item never spans one. */
const BREAK = /[\s"'<>()[\]{}`]/;

/** The characters of `text` in tokens and the longest token: what bounds the item expression's work. */
function tokens(text: string): { longest: number; squares: number } {
  let longest = 0;
  let squares = 0;
  let run = 0;
  const end = () => {
    if (run <= MAX_TOKEN) squares += run * run;
    longest = Math.max(longest, run <= MAX_TOKEN ? run : 0);
    run = 0;
  };
  for (const ch of text) {
    if (BREAK.test(ch)) end();
    else run += ch.length;
  }
  end();
  return { longest, squares };
}

// Hostile pieces: long runs of one character class, a run that looks like a path but never gets its slash,
// dotted and dashed chains, and ordinary words between them.
const pieceArb = fc.oneof(
  fc
    .tuple(fc.constantFrom("a", "a-", "a$", "1.", "a.", "Ab", "f0", "x/", "+"), fc.integer({ min: 1, max: 3000 }))
    .map(([unit, n]) => unit.repeat(n)),
  fc.constantFrom(
    "src/lib/parser.ts",
    "parseConfig",
    "TypeError",
    "ENOENT",
    "1.6.0",
    "5f02f96",
    "https://example.com/a?b=c",
    "README.md",
    "word",
  ),
);
const separatorArb = fc.constantFrom(" ", "\n", "", ",", "(", "\t");
const hostileArb = fc
  .array(fc.tuple(pieceArb, separatorArb), { minLength: 1, maxLength: 40 })
  .map((parts) => parts.map(([p, s]) => p + s).join(""));

describe("the item extractor's work", () => {
  it("hands the item expression each character at most once, in tokens of at most MAX_TOKEN characters", () => {
    fc.assert(
      fc.property(hostileArb, (text) => {
        const work: ExtractWork = { scanned: 0, skipped: 0 };
        extractItems(text, "/home/u", work);
        expect(work.scanned + work.skipped).toBe(text.length);
        // What the expression reads is bounded by (characters read) × (longest token read): linear in the text.
        const { longest, squares } = tokens(text.slice(0, text.length));
        expect(longest).toBeLessThanOrEqual(MAX_TOKEN);
        expect(squares).toBeLessThanOrEqual(MAX_TOKEN * work.scanned);
      }),
    );
  });

  it("reads a million-character token once and finds nothing in it", () => {
    const work: ExtractWork = { scanned: 0, skipped: 0 };
    const blob = "Zm9v".repeat(250_000);
    expect(extractItems(`before src/a.ts ${blob} after parseConfig`, "", work).map((i) => i.text)).toEqual([
      "src/a.ts",
      "parseConfig",
    ]);
    expect(work.skipped).toBe(blob.length);
  });

  it("skips a token of eight million characters (a regular expression's backtracking stack overflowed at six)", () => {
    const work: ExtractWork = { scanned: 0, skipped: 0 };
    for (const blob of ["a".repeat(8_000_000), "a/".repeat(4_000_000), "1.".repeat(4_000_000)]) {
      expect(extractItems(`read src/a.ts\n${blob}\nthen parseConfig`, "", work).map((i) => i.text)).toEqual([
        "src/a.ts",
        "parseConfig",
      ]);
    }
    expect(work.skipped).toBe(24_000_000);
  });

  it("grows linearly: a hundred times the text is a hundred times the work", () => {
    const line = `${"a".repeat(MAX_TOKEN)} ${"a-".repeat(MAX_TOKEN / 2)} see src/x.ts\n`;
    const measure = (n: number) => {
      const work: ExtractWork = { scanned: 0, skipped: 0 };
      extractItems(line.repeat(n), "", work);
      return work.scanned;
    };
    expect(measure(100)).toBe(100 * measure(1));
  });
});

// Ordinary text, built from the characters items are made of, so that paths, names, numbers and their borders
// meet in every combination; every token is at most MAX_TOKEN long.
const ALPHABET = [
  "a",
  "B",
  "z",
  "E",
  "R",
  "_",
  "$",
  "-",
  ".",
  "@",
  "+",
  "/",
  "~",
  ":",
  ",",
  "1",
  "0",
  "f",
  " ",
  "\n",
  "(",
  '"',
  "h",
  "t",
  "p",
  "s",
];
const wordArb = fc.oneof(
  fc.constantFrom(
    "https://",
    "http://x.io/",
    "src/",
    ".ts",
    ".md",
    "Error",
    "ENOENT",
    "ERR_X",
    "TS2345",
    "camelCase",
    "snake_case",
    "1.2.3",
    "deadbeef1",
    "../",
    "~/",
    "./",
  ),
  fc.array(fc.constantFrom(...ALPHABET), { minLength: 1, maxLength: 12 }).map((c) => c.join("")),
);
const ordinaryArb = fc.oneof(
  fc.array(wordArb, { maxLength: 30 }).map((w) => w.join("")),
  fc.array(fc.oneof(proseArb, pathArb, codeArb), { maxLength: 8 }).map((w) => w.join(" ")),
);

describe("the bounded extractor on ordinary text", () => {
  it("finds the same items as the unbounded scan", () => {
    fc.assert(
      fc.property(ordinaryArb, fc.constantFrom("", "/home/u", "/home/u/src"), (text, cwd) => {
        fc.pre(tokens(text).longest <= MAX_TOKEN && !text.split(BREAK).some((t) => t.length > MAX_TOKEN));
        expect(extractItems(text, cwd)).toEqual(referenceItems(text, cwd));
      }),
      // Cheap, and the precondition drops the texts with an over-long token: 2,000 runs by default.
      { numRuns: runs(10) },
    );
  });
});
