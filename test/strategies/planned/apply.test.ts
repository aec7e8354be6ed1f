import { describe, expect, it } from "vitest";
import { applyPlan, render, validateRanges } from "../../../src/strategies/planned/apply.ts";
import { PlanError } from "../../../src/strategies/shared/fallback.ts";
import { INTRO, markerText, type TranscriptLine } from "../../../src/strategies/planned/transcript.ts";
import { NO_FLOOR } from "./fixtures.ts";

const t = (text: string): TranscriptLine => ({ text, kind: "text" });
const s = (text: string): TranscriptLine => ({ text, kind: "structure" });
const p = (text: string): TranscriptLine => ({ text, kind: "pinned" });
const m = (n: number): TranscriptLine => ({ text: markerText(n), kind: "marker" });
const long = (tag: string) => `${tag} ${"y".repeat(200)}`;

// The seed's small example: lines 3-5 go, 2 is not needed, keepContext survives.
const example: TranscriptLine[] = [
  s("[user]"),
  t("Fix the login timeout without changing the public API."),
  t(long("500 lines of directory listing")),
  t(long("The same directory listing repeated")),
  t(long("Maybe Redis is broken")),
  t("auth.ts contains TIMEOUT_MS = 5000."),
  t("Root cause: TIMEOUT_MS is too low."),
  p("<keepContext>"),
  p("The public API must not change."),
  p("</keepContext>"),
];

const errorOf = (fn: () => unknown): PlanError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof PlanError) return error;
    throw error;
  }
  throw new Error("expected a PlanError");
};

describe("applying a ranked plan", () => {
  it("applies ranges in rank order and stops at the target", () => {
    const applied = applyPlan(
      example,
      [
        { from: 3, to: 4 },
        { from: 5, to: 5 },
        { from: 2, to: 2 },
      ],
      { ...NO_FLOOR, retainRatio: 0.3 },
    );
    expect(applied.summary.split("\n")).toEqual([
      INTRO,
      "[user]",
      "Fix the login timeout without changing the public API.",
      markerText(3),
      "auth.ts contains TIMEOUT_MS = 5000.",
      "Root cause: TIMEOUT_MS is too low.",
      "<keepContext>",
      "The public API must not change.",
      "</keepContext>",
    ]);
    expect(applied.appliedRanges).toBe(2);
    expect(applied.removedLines).toBe(3);
    expect(applied.kinds).toEqual(["structure", "text", "marker", "text", "text", "pinned", "pinned", "pinned"]);
  });

  it("splits ranges around protected lines", () => {
    const applied = applyPlan(example, [{ from: 1, to: 10 }], { ...NO_FLOOR, retainRatio: 0 });
    expect(applied.summary.split("\n")).toEqual([
      INTRO,
      "[user]",
      markerText(6),
      "<keepContext>",
      "The public API must not change.",
      "</keepContext>",
    ]);
  });

  it("folds carried markers into adjacent removals", () => {
    const lines = [s("[user]"), m(7), t(long("a")), t(long("b")), m(2), t("keep")];
    const applied = applyPlan(lines, [{ from: 3, to: 4 }], { ...NO_FLOOR, retainRatio: 0 });
    expect(applied.summary.split("\n")).toEqual([INTRO, "[user]", markerText(11), "keep"]);
    expect(render(lines, []).summary.split("\n")).toEqual([
      INTRO,
      "[user]",
      markerText(7),
      long("a"),
      long("b"),
      markerText(2),
      "keep",
    ]);
  });

  it("never goes below the floor: a piece that would cross it is trimmed to nothing", () => {
    const lines = [s("[user]"), ...Array.from({ length: 20 }, (_, i) => t(long(`l${i}`)))];
    const ranges = [
      { from: 2, to: 21 },
      { from: 1, to: 1 },
    ];
    const floor = 500;
    const applied = applyPlan(
      lines,
      [
        { from: 2, to: 11 },
        { from: 12, to: 21 },
      ],
      { retainRatio: 0, minRetainedTokens: floor, minSavedTokens: 0 },
    );
    expect(applied.keptTokens).toBeGreaterThanOrEqual(floor);
    expect(applied.appliedRanges).toBe(1);
    expect(() => applyPlan(lines, ranges, { retainRatio: 0, minRetainedTokens: 100_000, minSavedTokens: 1 })).toThrow(
      PlanError,
    );
  });

  it("trims the last applied range so the result lands near the target, never below it", () => {
    // One range over the whole region and a 50% target: the range is cut short instead of emptying the region.
    const lines = Array.from({ length: 100 }, (_, i) => t(`line ${i} ${"z".repeat(50)}`));
    const applied = applyPlan(lines, [{ from: 1, to: 100 }], {
      retainRatio: 0.5,
      minRetainedTokens: 0,
      minSavedTokens: 0,
    });
    expect(applied.keptTokens).toBeGreaterThanOrEqual(applied.targetTokens);
    // Within one line (and its marker) of the target.
    expect(applied.keptTokens - applied.targetTokens).toBeLessThanOrEqual(30);
    expect(applied.appliedRanges).toBe(1);
    expect(applied.trimmed).toBe(true);
    // The start of the range goes; the lines nearest the present stay.
    const body = applied.summary.split("\n").slice(1);
    expect(body[0]).toBe(markerText(applied.removedLines));
    expect(body.at(-1)).toBe(lines[99].text);
    expect(body.slice(1)).toEqual(lines.slice(applied.removedLines).map((l) => l.text));
  });

  it("merges overlapping ranges and applies them in rank order", () => {
    const lines = [s("[user]"), ...Array.from({ length: 10 }, (_, i) => t(long(`l${i}`)))];
    const applied = applyPlan(
      lines,
      [
        { from: 2, to: 5 },
        { from: 4, to: 8 },
        { from: 3, to: 3 },
      ],
      { ...NO_FLOOR, retainRatio: 0 },
    );
    expect(applied.summary.split("\n")).toEqual([INTRO, "[user]", markerText(7), long("l7"), long("l8"), long("l9")]);
    expect(applied.removedLines).toBe(7);
    // The third record adds nothing new: it is not counted as applied.
    expect(applied.appliedRanges).toBe(2);
  });

  it("refuses a plan that saves less than the minimum", () => {
    const error = errorOf(() => applyPlan(example, [{ from: 2, to: 2 }], { ...NO_FLOOR, minSavedTokens: 2_048 }));
    expect(error.category).toBe("too-little");
    expect(error.message).not.toContain("login");
  });
});

describe("validating ranges", () => {
  it("accepts overlapping ranges (they merge when applied)", () => {
    expect(
      validateRanges(
        [
          { from: 1, to: 3 },
          { from: 3, to: 5 },
        ],
        10,
      ),
    ).toEqual([
      { from: 1, to: 3 },
      { from: 3, to: 5 },
    ]);
  });
  it("collapses exact duplicates at their first rank", () => {
    expect(
      validateRanges(
        [
          { from: 3, to: 4 },
          { from: 1, to: 1 },
          { from: 3, to: 4 },
        ],
        5,
      ),
    ).toEqual([
      { from: 3, to: 4 },
      { from: 1, to: 1 },
    ]);
  });
  it.each([
    [[{ from: 0, to: 1 }], "bounds"],
    [[{ from: 2, to: 11 }], "bounds"],
    [[{ from: 4, to: 3 }], "reversed"],
    [[{ from: 1, to: 1.5 }], "shape"],
    [[{ from: Number.NaN, to: 2 }], "shape"],
  ])("rejects %j as %s", (ranges, category) => {
    expect(errorOf(() => validateRanges(ranges, 10)).category).toBe(category);
  });
});
