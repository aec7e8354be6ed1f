// The checkpoint's file lists and startup reads on Pi's default settings: files a codemode script touched, an
// instruction file naming a path relative to its own folder, one file named two ways from outside the cwd, and a
// tool-call id used twice on the branch. Assertions read the summary the provider is sent. Issue 24, items 13-16.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import { createCodemodeExtension } from "@earendil-works/pi-coding-agent";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:";
const textOf = (m: Message): string =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("");

/** One step of tool calls, then a short answer. */
async function toolTurn(prompt: string, calls: ReturnType<typeof fauxToolCall>[], answer = "done"): Promise<void> {
  h!.script([fauxAssistantMessage(calls, { stopReason: "toolUse" }), fauxAssistantMessage(answer)]);
  await h!.session.prompt(prompt);
}

/** A long answer pushes everything before it out of the recent tail Pi keeps by default (about 20,000 tokens). */
async function longAnswer(): Promise<void> {
  h!.script([fauxAssistantMessage(`LONG ${"explanation ".repeat(9_000)}`)]);
  await h!.session.prompt("explain at length");
}

/** Compact with `/compact` (the default strategy, checkpoint, no model call) and return the summary sent next. */
async function compactAndResume(): Promise<string> {
  const calls = h!.faux.state.callCount;
  await h!.session.compact();
  expect(h!.faux.state.callCount).toBe(calls);
  h!.script([fauxAssistantMessage("resumed")]);
  await h!.session.prompt("go on");
  const summary = h!.requests
    .at(-1)!
    .map(textOf)
    .find((t) => t.startsWith(SUMMARY_PREFIX));
  if (!summary) throw new Error("no checkpoint summary in the request");
  return summary;
}

const fileLines = (summary: string) => summary.split("\n").filter((l) => /^\[(read|modified)\] "/.test(l));

describe("checkpoint file lists and startup reads", () => {
  it("lists files a codemode script wrote and read, and labels the written one as Pi's own lists would", async () => {
    h = await startHarness({
      extensions: [createCodemodeExtension()],
      settings: { defaultTools: ["+codemode"] },
      files: { "notes.md": "NOTES\n" },
    });
    const script = [
      `await tools.write({ path: "made-by-script.txt", content: "x" });`,
      `await tools.read({ path: "notes.md" });`,
      `text("wrote it");`,
    ].join("\n");
    await toolTurn("write a file from a script", [fauxToolCall("codemode", { code: script } as never)]);
    await longAnswer();
    const summary = await compactAndResume();
    expect(fileLines(summary)).toEqual([
      '[read] "notes.md"',
      '[modified] "made-by-script.txt" (no read-tool output in tail)',
    ]);
  });

  it("retains a startup read that an instruction file in a subfolder names relative to itself", async () => {
    h = await startHarness({
      files: { "sub/AGENTS.md": "Before any change, read ../docs/guide.md.\n", "docs/guide.md": "GUIDE-FOURTEEN\n" },
    });
    await toolTurn("start", [
      fauxToolCall("read", { path: "sub/AGENTS.md" }, { id: "r1" }),
      fauxToolCall("read", { path: "docs/guide.md" }, { id: "r2" }),
    ]);
    await longAnswer();
    const summary = await compactAndResume();
    const retained = summary.split("\n").filter((l) => l.startsWith("<startup-read "));
    expect(retained.some((l) => l.includes('path="docs/guide.md"'))).toBe(true);
    expect(summary).toContain("GUIDE-FOURTEEN");
  });

  it("keeps one entry for a file outside the cwd named relatively and absolutely, with its evidence merged", async () => {
    h = await startHarness({ files: { "../lib/a.ts": "export const a = 1;\n" } });
    const absolute = h.cwd.replace(/\/project$/, "/lib/a.ts");
    await toolTurn("look and change", [fauxToolCall("read", { path: "../lib/a.ts" }, { id: "r1" })], "read it");
    await toolTurn(
      "now write",
      [fauxToolCall("write", { path: absolute, content: "export const a = 2;\n" }, { id: "w1" })],
      "written",
    );
    await longAnswer();
    await toolTurn("check again", [fauxToolCall("read", { path: "../lib/a.ts" }, { id: "r2" })], "checked");
    const summary = await compactAndResume();
    expect(fileLines(summary)).toEqual([`[modified] ${JSON.stringify(absolute)} (full read in tail)`]);
  });

  it("judges a tool-call id used twice over the whole branch: no startup read and no tail evidence from it", async () => {
    h = await startHarness({
      files: { "AGENTS.md": "Read docs/guide.md first.\n", "docs/guide.md": "GUIDE-SIXTEEN\n" },
    });
    await toolTurn("start", [fauxToolCall("read", { path: "docs/guide.md" }, { id: "dup" })], "read the guide");
    await longAnswer();
    await toolTurn("read it again", [fauxToolCall("read", { path: "docs/guide.md" }, { id: "dup" })], "read again");
    const summary = await compactAndResume();
    expect(summary).toMatch(/read path="docs\/guide\.md" → unknown/);
    expect(summary).not.toContain("<startup-read ");
    expect(summary).not.toContain("GUIDE-SIXTEEN");
    expect(fileLines(summary)).toEqual(['[read] "docs/guide.md"']);
  });
});
