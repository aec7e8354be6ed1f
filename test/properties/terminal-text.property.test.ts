// Strings from a session file or a provider on their way to the user's terminal or onto one line of ours (items 3, 9,
// 11, 12): whatever they hold (ESC, OSC 52, BEL, C1, Unicode separators, bidi controls, megabytes), what is shown has
// no raw control, stays bounded, and a stored name never breaks the line it is listed on.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { forTerminal, LINE_BREAK, NOTICE_MAX_CHARS, quoted, shownName } from "../../src/log/display.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { reduceBranch } from "../../src/projection/ledger-state.ts";
import { listActs, resolveRestoreTarget } from "../../src/projection/restore.ts";
import {
  controlCharsArb,
  hasRawTerminalControl,
  hostileStringArb,
  terminalControlArb,
} from "../arbitraries/hostile.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";

/** A hostile string made of terminal controls, separators and bidi marks around ordinary text. */
const storedStringArb = fc.oneof(
  hostileStringArb,
  fc
    .array(fc.oneof(controlCharsArb, terminalControlArb, fc.string({ maxLength: 8 })), { minLength: 1, maxLength: 6 })
    .map((parts) => parts.join("")),
);

describe("text for the terminal and for one line (fast-check)", () => {
  it("forTerminal escapes every control, separator and bidi mark and bounds the length; shownName and quoted stay on one line", () => {
    fc.assert(
      fc.property(storedStringArb, (text) => {
        const shown = forTerminal(text);
        expect(hasRawTerminalControl(shown)).toBe(false);
        expect(shown.length).toBeLessThanOrEqual(NOTICE_MAX_CHARS);
        for (const one of [shownName(text), quoted(text)]) {
          expect(hasRawTerminalControl(one)).toBe(false);
          expect(LINE_BREAK.test(one)).toBe(false);
          expect(one.length).toBeLessThanOrEqual(82);
        }
      }),
    );
  });

  it("a label and a compaction strategy from the file never break the restore listing or its errors", () => {
    fc.assert(
      fc.property(storedStringArb, storedStringArb, storedStringArb, (label, strategy, target) => {
        const b = new LedgerBuilder();
        const u = b.user("old");
        b.assistant("answer");
        const k = b.user("kept");
        const c = b.compaction(k, "summary", { v: 1, strategy });
        b.label(c, label);
        b.label(u, label);
        const path = b.entries as SessionEntry[];
        const state = reduceBranch(path, LEDGER_FACTS);
        for (const act of listActs(path, state, LEDGER_FACTS)) {
          expect(LINE_BREAK.test(act.title), act.title).toBe(false);
          expect(hasRawTerminalControl(act.title)).toBe(false);
        }
        const missed = resolveRestoreTarget(target, path, state, LEDGER_FACTS);
        if (!missed.ok) {
          expect(LINE_BREAK.test(missed.error), missed.error).toBe(false);
          expect(hasRawTerminalControl(missed.error)).toBe(false);
          expect(missed.error.length).toBeLessThan(1_500);
        }
      }),
    );
  });
});
