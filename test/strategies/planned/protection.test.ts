import { describe, expect, it } from "vitest";
import { pinnedLines } from "../../../src/strategies/planned/protection.ts";

describe("keepContext spans", () => {
  it("pins a whole-line span including its tags", () => {
    expect(pinnedLines(["a", "<keepContext>", "b", "c", "</keepContext>", "d"])).toEqual([
      false,
      true,
      true,
      true,
      true,
      false,
    ]);
  });
  it("pins the inline whole-line form, with surrounding whitespace", () => {
    expect(pinnedLines(["  <keepContext>HTTP 409 is expected.</keepContext> ", "x"])).toEqual([true, false]);
  });
  it("ignores tags that share a line with other text", () => {
    expect(pinnedLines(["see <keepContext>x</keepContext> here", "text <keepContext>", "</keepContext> tail"])).toEqual(
      [false, false, false],
    );
  });
  it("runs an unclosed span to the end of the message", () => {
    expect(pinnedLines(["a", "<keepContext>", "b", "c"])).toEqual([false, true, true, true]);
  });
  it("is case sensitive and exact", () => {
    expect(pinnedLines(["<keepcontext>", "b", "<KeepContext>x</KeepContext>"])).toEqual([false, false, false]);
  });
  it("closes at the first closing tag; a nested opening tag is content", () => {
    expect(pinnedLines(["<keepContext>", "<keepContext>", "</keepContext>", "after", "</keepContext>"])).toEqual([
      true,
      true,
      true,
      false,
      false,
    ]);
  });
});
