// Forged structure through Unicode line breaks (item 2): tool output, arguments or pasted text in which U+2028,
// U+2029, NEL, VT, FF or CR stands where a newline would, so the text after it starts a line for a reader that
// breaks lines there. Every summary that quotes such text must still have only its own structure at line starts,
// split as such a reader splits it.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LINE_BREAK } from "../../src/log/display.ts";
import { planCheckpoint } from "../../src/strategies/checkpoint/planner.ts";
import { escapeLine, unescapeLine } from "../../src/strategies/checkpoint/render.ts";
import { formatArguments } from "../../src/strategies/shared/signatures.ts";
import { planDigest } from "../../src/strategies/digest/plan.ts";
import { QUOTE } from "../../src/strategies/digest/lines.ts";
import { OUTPUTS_END, OUTPUT_QUOTE, renderFoldText } from "../../src/strategies/fold/fold-message.ts";
import { forgedStructureArb, separatedForgeryArb } from "../arbitraries/hostile.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";
import { inputFor, UNCAPPED } from "../strategies/checkpoint/fixtures.ts";
import { retryTask, SMALL } from "../strategies/digest/fixtures.ts";

/** Lines as a reader that breaks at every Unicode line break sees them. */
const readerLines = (text: string) => text.split(LINE_BREAK);
const hostileArb = fc.oneof(separatedForgeryArb, forgedStructureArb);

describe("forged structure through Unicode line breaks (item 2)", () => {
  it("fold: quoted outputs never start a line of the summary, for any reader's line breaks", () => {
    fc.assert(
      fc.property(fc.array(hostileArb, { minLength: 1, maxLength: 3 }), hostileArb, (outputs, command) => {
        const text = renderFoldText(
          "SUMMARY",
          outputs.map((out, i) => ({
            toolName: "bash",
            args: { command: i ? "ls" : command },
            result: {
              role: "toolResult",
              toolCallId: `c${i}`,
              toolName: "bash",
              content: [{ type: "text", text: out }],
              isError: false,
              timestamp: 0,
            } as never,
          })),
        );
        const lines = readerLines(text);
        const start = lines.findIndex((l) => l.startsWith("Outputs of the other tool calls"));
        const body = lines.slice(start + 1);
        expect(body.at(-1)).toBe(OUTPUTS_END);
        for (const line of body.slice(0, -1))
          expect(line === "" || line.startsWith(OUTPUT_QUOTE) || line.startsWith("--- bash {"), line).toBe(true);
        expect(body.filter((l) => l.startsWith("--- bash {"))).toHaveLength(outputs.length);
        expect(lines.filter((l) => l.startsWith("NOTE FROM THE USER"))).toEqual([]);
      }),
    );
  });

  it("digest: forged lines in outputs and arguments stay behind the quote or on their call line", () => {
    const STRUCTURE = [
      /^\[context digest #\d+: [^\n]*\]$/,
      /^## (user message \d+|before the first user message)$/,
      /^- \S+ assistant:$/,
      /^- \S+ [^\s:]+ [^:]*: .*$/,
      /^ {2}defines: /,
      /^ {2}mentions: /,
    ];
    fc.assert(
      fc.property(hostileArb, hostileArb, (output, argument) => {
        const { b } = retryTask();
        b.user("Check the output.");
        b.tool("bash", { command: `cat notes.txt${argument}` }, `${output}\nCommand exited with code 2`, {
          isError: true,
          text: output,
        });
        b.tool("grep", { pattern: argument, path: "src" }, output);
        b.user("next");
        const outcome = planDigest({
          branch: b.entries,
          limitId: b.leaf!,
          force: "manual",
          contextWindow: 128_000,
          usageTokens: null,
          cwd: "/repo",
          policy: SMALL,
        });
        if (!outcome.ok) return;
        for (const line of readerLines(outcome.draft.content)) {
          expect(
            STRUCTURE.some((re) => re.test(line)) || line.startsWith(QUOTE) || line === "",
            JSON.stringify(line),
          ).toBe(true);
          expect(line.startsWith("[context digest #9"), JSON.stringify(line)).toBe(false);
          expect(/^- e0000001 /.test(line), JSON.stringify(line)).toBe(false);
        }
      }),
    );
  });

  it("checkpoint: a copied line holding a Unicode line break is escaped onto one line, recoverably; call signatures stay on one line", () => {
    fc.assert(
      fc.property(hostileArb, (text) => {
        for (const line of text.split("\n")) {
          const shown = escapeLine(line);
          expect(readerLines(shown), JSON.stringify(shown)).toHaveLength(1);
          expect(unescapeLine(shown)).toBe(line);
        }
        expect(readerLines(formatArguments("bash", { command: text, path: text }, "/repo"))).toHaveLength(1);
        const b = new LedgerBuilder();
        b.user(text);
        const kept = b.user("next");
        const { summary } = planCheckpoint(inputFor(b.entries, kept), UNCAPPED);
        for (const line of readerLines(summary))
          expect(/^\[user /.test(line) && !/^\[user \S+\]$/.test(line), JSON.stringify(line)).toBe(false);
        expect(readerLines(summary).filter((l) => /^\[user /.test(l))).toHaveLength(1);
      }),
    );
  });
});
