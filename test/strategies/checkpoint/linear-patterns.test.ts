// Checkpoint's patterns on hostile text: the same answers as the backtracking patterns they replaced, and one
// read of the text (a prompt of unclosed instruction tags, a read whose last line repeats " exceeds ").
import { describe, expect, it } from "vitest";
import { classifyRead } from "../../../src/strategies/shared/file-evidence.ts";
import { instructionBlocks } from "../../../src/strategies/shared/startup-reads.ts";

describe("linear checkpoint patterns", () => {
  it("instruction blocks: the same blocks as the lazy pattern, and many unclosed openers read once", () => {
    const reference = (text: string) =>
      [...text.matchAll(/<project_instructions path="([^"]*)">\n([\s\S]*?)\n<\/project_instructions>/g)].map((m) => ({
        path: m[1],
        content: m[2],
      }));
    const open = (p: string) => `<project_instructions path="${p}">\n`;
    const close = "\n</project_instructions>";
    for (const text of [
      `${open("a")}x${close}${open("b")}${close}\n${open("c")}</project_instructions>y${close}`,
      `${open("a")}\n${close}${open("b")}never closed`,
      `intro ${open("a")}one\ntwo${close} middle ${open("/x/AGENTS.md")}three${close} end`,
    ])
      expect(instructionBlocks(text)).toEqual(reference(text));
    expect(instructionBlocks(open("p").repeat(200_000))).toEqual([]);
  });

  it("a read's continuation notice is found from its first ' exceeds ', and a long last line is read once", () => {
    expect(classifyRead({ path: "a" }, "x\n[Line 3 is 90KB, exceeds 50KB limit. Use bash]", undefined, false)).toBe(
      "partial",
    );
    expect(classifyRead({ path: "a" }, "x\n[Line 3 is big exceeds a exceeds b limit]", undefined, false)).toBe(
      "partial",
    );
    expect(classifyRead({ path: "a" }, "x\nplain last line", undefined, false)).not.toBe("partial");
    expect(classifyRead({ path: "a" }, `[Line 1 is ${" exceeds ".repeat(200_000)}`, undefined, false)).not.toBe(
      "partial",
    );
  });
});
