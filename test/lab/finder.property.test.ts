// The finder's memo: a message's hits are remembered per object and per text. A projection rebuilds summaries,
// digests and stubs as new objects with the same text; those must not be searched again, and whatever the memo
// holds or has dropped, the answer is the one a fresh search of the message's text gives.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_TUNING, Finder, VIEW_TEXT } from "../../src/lab/finder.ts";
import { viewText } from "../../src/lab/probes.ts";
import { WORKING_TEXT, workingText } from "../../src/lab/working-set.ts";
import { unescapeLine } from "../../src/strategies/checkpoint/render.ts";
import { QUOTE } from "../../src/strategies/digest/lines.ts";
import { runs } from "../support/fast-check.ts";

// Patterns with a line break ("x = 1;\n  y", "\nbeta", "a\n") span lines; the others occur within one.
const PATTERNS = [
  "alpha",
  "beta",
  "src/a.ts",
  "TypeError",
  "x = 1;\n  y",
  "ph",
  "  | quoted line",
  "a",
  "\nbeta",
  "a\n",
];

const user = (text: string) => ({ role: "user", content: text, timestamp: 0 }) as AgentMessage;

describe("the finder's memo", () => {
  it("does not search again a message rebuilt with the same text, and searches one whose text changed", () => {
    const finder = new Finder(PATTERNS);
    const summary = { role: "compactionSummary", summary: "alpha and src/a.ts", tokensBefore: 1, timestamp: 0 };
    const first = [...finder.inMessage(summary as unknown as AgentMessage)];
    const searched = finder.searched;
    expect(searched).toBe("alpha and src/a.ts".length);
    // The projection's next copy: a new object, the same text.
    expect([...finder.inMessage({ ...summary } as unknown as AgentMessage)]).toEqual(first);
    expect(finder.searched).toBe(searched);
    // A copy with another text is searched.
    expect([...finder.inMessage({ ...summary, summary: "beta" } as unknown as AgentMessage)]).toEqual([1, 7]);
    expect(finder.searched).toBe(searched + 4);
  });

  it("does not read again the content a rebuilt message shares with an earlier one", () => {
    let reads = 0;
    const block = {
      type: "text",
      get text() {
        reads++;
        return "alpha, moved out of memory";
      },
    };
    const output = { role: "toolResult", toolCallId: "c", toolName: "read", content: [block], isError: false };
    for (const finder of [new Finder(PATTERNS), new Finder(PATTERNS, WORKING_TEXT)]) {
      reads = 0;
      const first = [...finder.inMessage(output as unknown as AgentMessage)];
      expect(reads).toBe(1);
      expect([...finder.inMessage({ ...output, timestamp: 2 } as unknown as AgentMessage)]).toEqual(first);
      expect(reads).toBe(1);
    }
  });

  it("does not read again the one block a rebuilt message's new content array shares with an earlier one", () => {
    let reads = 0;
    const block = {
      type: "text",
      get text() {
        reads++;
        return "alpha, moved out of memory";
      },
    };
    const output = { role: "toolResult", toolCallId: "c", toolName: "read", content: [block], isError: false };
    for (const finder of [new Finder(PATTERNS), new Finder(PATTERNS, WORKING_TEXT)]) {
      reads = 0;
      const first = [...finder.inMessage(output as unknown as AgentMessage)];
      expect(reads).toBe(1);
      const rebuilt = { ...output, content: [block], timestamp: 2 };
      expect([...finder.inMessage(rebuilt as unknown as AgentMessage)]).toEqual(first);
      expect(reads).toBe(1);
      // Two blocks are held by their array only: a new array around them is read.
      const two = { ...output, content: [block, block] };
      finder.inMessage(two as unknown as AgentMessage);
      expect(reads).toBe(3);
    }
  });

  it("searches of a growing summary only what is new: the work follows the session, not the sum of the summaries", () => {
    const finder = new Finder(PATTERNS);
    const lines: string[] = [];
    let summed = 0;
    const rounds = 50;
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < 20; i++)
        lines.push(`round ${round} line ${i}: alpha ${"x".repeat((round * 7 + i * 3) % 40)}`);
      const summary = lines.join("\n");
      summed += summary.length;
      const message = { role: "compactionSummary", summary, tokensBefore: 1, timestamp: round };
      expect([...finder.inMessage(message as unknown as AgentMessage)]).toEqual(
        [...new Finder(PATTERNS).find(summary)].sort((a, b) => a - b),
      );
    }
    const final = lines.join("\n").length;
    // Each summary re-reads at most the chunk its predecessor ended in, besides its own new lines.
    expect(finder.searched).toBeLessThanOrEqual(final + rounds * DEFAULT_TUNING.maxChunkChars);
    expect(finder.searched).toBeLessThan(summed / 4);
  });

  it("keeps the chunks of summaries only: a long session text is searched whole and leaves no chunk behind", () => {
    const finder = new Finder(PATTERNS);
    const lines = Array.from({ length: 400 }, (_, i) => `line ${i}: alpha ${"y".repeat(i % 30)}`);
    const text = lines.join("\n");
    const output = { role: "toolResult", toolCallId: "c", toolName: "read", content: [{ type: "text", text }] };
    const fresh = (searched: string) => [...new Finder(PATTERNS).find(searched)].sort((a, b) => a - b);
    expect([...finder.inMessage(output as unknown as AgentMessage)]).toEqual(fresh(text));
    expect(finder.searched).toBe(text.length);
    // A summary quoting the output's lines: nothing of the output was kept, so all of it is searched (its chunks
    // whole, the line breaks between them aside).
    const first = `${text}\nsummary end`;
    const summary = (text: string) => ({ role: "compactionSummary", summary: text, tokensBefore: 1, timestamp: 0 });
    expect([...finder.inMessage(summary(first) as unknown as AgentMessage)]).toEqual(fresh(first));
    expect(finder.searched - text.length).toBeGreaterThan(first.length - lines.length);
    // The next summary repeats the first one's lines: only about its new part is searched.
    const second = `${first}\nbeta, a new line`;
    const before = finder.searched;
    expect([...finder.inMessage(summary(second) as unknown as AgentMessage)]).toEqual(fresh(second));
    expect(finder.searched - before).toBeLessThan(second.length / 4);
  });

  it("keeps about its limit of text: a text that stops coming back is dropped and searched again", () => {
    const finder = new Finder(PATTERNS, VIEW_TEXT, { memoChars: 16 });
    finder.inMessage(user("alpha beta"));
    const searched = finder.searched;
    // A text seen again soon is remembered.
    finder.inMessage(user("alpha beta"));
    expect(finder.searched).toBe(searched);
    // Two generations' worth of other texts push it out.
    for (let i = 0; i < 8; i++) finder.inMessage(user(`other ${i}`));
    const before = finder.searched;
    expect([...finder.inMessage(user("alpha beta"))]).toEqual([0, 1, 5, 7]);
    expect(finder.searched).toBe(before + "alpha beta".length);
  });

  it("answers as a fresh search of the message's text, whatever the memo holds (property)", () => {
    const piece = fc.constantFrom("alpha", "beta", "src/a.ts", "TypeError", "x = 1;", "  y", "ph", "  | quoted line");
    const text = fc
      .array(fc.tuple(piece, fc.constantFrom(" ", "\n", "\r\n", "  \n", "\n\n")), { maxLength: 24 })
      .map((parts) => parts.map(([p, sep]) => p + sep).join(""));
    const shape = fc.record({
      role: fc.constantFrom("user", "toolResult", "custom", "compactionSummary", "assistant"),
      text,
      reuse: fc.nat(),
      copy: fc.constantFrom("same", "copy", "recast", "blocks"),
    });
    fc.assert(
      fc.property(
        fc.array(shape, { maxLength: 40 }),
        fc.constantFrom(0, 8, 40, 1 << 20),
        // By chunks of lines from 0 or 30 characters (most texts then), or never; chunks cut at the length cap only, or
        // after about 2 or 16 lines, and at most 5 or 4096 characters.
        fc.record({
          lineWiseChars: fc.constantFrom(0, 30, Number.POSITIVE_INFINITY),
          chunkBits: fc.constantFrom(0, 31, 28),
          maxChunkChars: fc.constantFrom(5, 4096),
        }),
        (shapes, memoChars, cut) => {
          const views = new Finder(PATTERNS, VIEW_TEXT, { memoChars, ...cut });
          const working = new Finder(PATTERNS, WORKING_TEXT, { memoChars, ...cut });
          const made: AgentMessage[] = [];
          for (const s of shapes) {
            // An earlier message again (the same object, a rebuilt copy sharing its content, or one recast in another
            // role around the same content), or a new one.
            const earlier = made.length && s.reuse % 3 === 0 ? made[s.reuse % made.length] : undefined;
            const recast = () => ({
              ...earlier,
              role: s.role,
              summary: s.role === "compactionSummary" ? s.text : undefined,
            });
            const message = !earlier
              ? build(s.role, s.text)
              : s.copy === "same"
                ? earlier
                : ((s.copy === "copy"
                    ? { ...earlier }
                    : s.copy === "blocks"
                      ? // A new array around the same blocks, in another role.
                        { ...recast(), content: blocksOf(earlier) }
                      : recast()) as AgentMessage);
            made.push(message);
            const fresh = (finder: Finder, searched: string) => [...finder.find(searched)].sort((a, b) => a - b);
            expect([...views.inMessage(message)]).toEqual(fresh(new Finder(PATTERNS), viewText([message])));
            expect([...working.inMessage(message)]).toEqual(fresh(new Finder(PATTERNS), workingText(message)));
          }
          // A view of them all: the patterns any of them holds.
          const counts = new Int32Array(PATTERNS.length);
          for (const m of made) views.tally(m, counts, 1);
          const union = new Set(made.flatMap((m) => [...new Finder(PATTERNS).find(viewText([m]))]));
          expect(PATTERNS.map((_, id) => counts[id] > 0)).toEqual(PATTERNS.map((_, id) => union.has(id)));
        },
      ),
      { numRuns: runs(1) },
    );
  });

  it("normalizes a text line by line, rebuilding only the lines that change (property: whitespace, quotes, escapes)", () => {
    const bit = fc.constantFrom(
      "a",
      "b c",
      " ",
      "\t",
      "\u00a0",
      "\u2028",
      "\u3000",
      "\r",
      "\r\n",
      "\n",
      QUOTE,
      '\\"x\\t"',
      '\\"bad',
      '"',
      "\\",
    );
    fc.assert(
      fc.property(fc.array(bit, { maxLength: 12 }), fc.boolean(), (bits, generated) => {
        const text = bits.join("");
        const role = generated ? "custom" : "user";
        const message = {
          role,
          customType: "t",
          content: text,
          display: true,
          timestamp: 0,
        } as unknown as AgentMessage;
        expect(workingText(message)).toBe(normalizedByLines(text, generated));
      }),
      { numRuns: runs(2) },
    );
  });

  it("tells a strategy's text from the session's by variant, so one key gives each its own reading", () => {
    const quoted = "  | quoted line";
    const custom = { role: "custom", customType: "x", content: quoted, display: true, timestamp: 0 };
    const finder = new Finder(["quoted line", "  | quoted"], WORKING_TEXT);
    expect(WORKING_TEXT.key(custom as unknown as AgentMessage)).toBe(WORKING_TEXT.key(user(quoted)));
    // The same raw text: the strategy's quote reads as the line it quotes, the session's line as it is.
    expect([...finder.inMessage(custom as unknown as AgentMessage)]).toEqual([0]);
    expect([...finder.inMessage(user(quoted))]).toEqual([0, 1]);
    expect(workingText(custom as unknown as AgentMessage)).toBe("quoted line");
    expect(workingText(user(quoted))).toBe(quoted);
  });
});

/** The working set's normalization as its definition states it: every line unquoted (strategy text) and trimmed. */
function normalizedByLines(text: string, generated: boolean): string {
  const unquote = (line: string) => {
    if (line.startsWith(QUOTE)) return line.slice(QUOTE.length);
    if (!line.startsWith('\\"')) return line;
    try {
      return unescapeLine(line);
    } catch {
      return line;
    }
  };
  return text
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => (generated ? unquote(line) : line).trimEnd())
    .join("\n");
}

/** A message's content, as a new array when it is one. */
function blocksOf(message: AgentMessage): unknown {
  const content = (message as { content?: unknown }).content;
  return Array.isArray(content) ? [...content] : content;
}

function build(role: string, text: string): AgentMessage {
  switch (role) {
    case "toolResult":
      return {
        role,
        toolCallId: "c",
        toolName: "bash",
        content: [{ type: "text", text }],
        isError: false,
        timestamp: 0,
      } as AgentMessage;
    case "custom":
      return { role, customType: "t", content: text, display: true, timestamp: 0 } as unknown as AgentMessage;
    case "compactionSummary":
      return { role, summary: text, tokensBefore: 1, timestamp: 0 } as unknown as AgentMessage;
    case "assistant":
      return {
        role,
        content: [
          { type: "text", text },
          { type: "toolCall", id: "c", name: "edit", arguments: { path: "src/a.ts", newText: text, oldText: "beta" } },
        ],
        stopReason: "toolUse",
        timestamp: 0,
      } as unknown as AgentMessage;
    default:
      return user(text);
  }
}
