// Hostile input inside a user's Pi, second round: odd session lines, terminal controls and forged structure in
// stored strings, prototype-named ids, arguments changed after validation. Each case drives a real AgentSession on
// the faux provider and asserts what reaches the model (tool results) or the user (`ctx.ui.notify`).
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { hasRawControl } from "../arbitraries/hostile.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
let root: string | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

const textOf = (m: { content: unknown }): string =>
  typeof m.content === "string" ? m.content : (m.content as { type: string; text?: string }[]).map((b) => (b.type === "text" ? b.text : "")).join("\n");
const toolResults = (name: string) =>
  h!.session.sessionManager
    .getBranch()
    .flatMap((e) => (e.type === "message" && e.message.role === "toolResult" && e.message.toolName === name ? [e.message] : []));

/** A persisted session with one exchange, closed; returns its file. */
async function persistedSession(): Promise<string> {
  root = mkdtempSync(join(tmpdir(), "ctx-ledger-hostile-"));
  const first = await startHarness({ persist: true, root });
  first.script([fauxAssistantMessage("hello back")]);
  await first.session.prompt("hello");
  const file = first.sessionFile()!;
  await first.dispose();
  return file;
}

describe("an odd last line in the session file (item 1)", () => {
  for (const [name, line] of [
    ["{}", "{}"],
    ["[1]", "[1]"],
    ["42", "42"],
    ["a label without target", '{"type":"label"}'],
    ["a message without an id", '{"type":"message","message":{"role":"user","content":"x"}}'],
  ] as const) {
    it(`${name}: context_grep and context_list_entries answer at once`, async () => {
      const file = await persistedSession();
      appendFileSync(file, `${line}\n`);
      h = await startHarness({ sessionFile: file, root });
      h.script([
        fauxAssistantMessage([fauxToolCall("context_grep", { pattern: "hello" }), fauxToolCall("context_list_entries", {})], { stopReason: "toolUse" }),
        fauxAssistantMessage("done"),
      ]);
      await h.session.prompt("search");
      expect(h.requests).toHaveLength(2);
      const grep = toolResults("context_grep")[0];
      const list = toolResults("context_list_entries")[0];
      expect(grep.isError, textOf(grep)).toBe(false);
      expect(list.isError, textOf(list)).toBe(false);
      // The same branch Pi itself walks: the new prompt is on it.
      expect(textOf(list)).toContain("search");
    });
  }
});

/** Append a line to a closed session file, as a parent of nothing new: a child of the file's last entry. */
function appendChild(file: string, body: Record<string, unknown>): string {
  const lines = readFileSync(file, "utf8").trim().split("\n");
  const last = JSON.parse(lines[lines.length - 1]) as { id: string };
  const id = `e${(lines.length + 1000).toString(16)}`;
  appendFileSync(file, `${JSON.stringify({ ...body, id, parentId: last.id, timestamp: "2026-01-01T00:00:00.000Z" })}\n`);
  return id;
}

const firstUserId = (file: string) =>
  (readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as { id: string; type: string; message?: { role: string } })
    .find((e) => e.type === "message" && e.message?.role === "user") as { id: string }).id;

describe("a compaction whose summary is not a string (item 5)", () => {
  for (const [name, summary] of [
    ["an object", { text: "forged" }],
    ["a number", 42],
    ["null", null],
    ["an array", ["a", 1]],
  ] as const) {
    it(`${name}: context_timeline, context_grep and context_list_entries still answer`, async () => {
      const file = await persistedSession();
      appendChild(file, { type: "compaction", summary, firstKeptEntryId: firstUserId(file), tokensBefore: 100 });
      h = await startHarness({ sessionFile: file, root });
      h.script([
        fauxAssistantMessage(
          [fauxToolCall("context_timeline", {}), fauxToolCall("context_grep", { pattern: "hello" }), fauxToolCall("context_list_entries", { role: "compaction" })],
          { stopReason: "toolUse" },
        ),
        fauxAssistantMessage("done"),
      ]);
      await h.session.prompt("look back");
      for (const tool of ["context_timeline", "context_grep", "context_list_entries"]) {
        const result = toolResults(tool)[0];
        expect(result.isError, `${tool}: ${textOf(result)}`).toBe(false);
      }
      expect(textOf(toolResults("context_list_entries")[0])).toContain("1 of 1 compaction entries");
    });
  }
});

/** An extension that rewrites a tool's arguments after Pi validated them (Pi passes the same object on). */
const rewriter = (tool: string, change: (input: Record<string, unknown>) => void) => (pi: ExtensionAPI) => {
  pi.on("tool_call", (event) => {
    if (event.toolName === tool) change(event.input as Record<string, unknown>);
  });
};

describe("arguments another extension changes after validation (item 10)", () => {
  for (const tool of ["context_compact", "context_restore", "context_checkpoint", "context_grep"] as const) {
    it(`${tool} with its string argument set to undefined fails with a clean error`, async () => {
      const field = tool === "context_checkpoint" ? "name" : tool === "context_grep" ? "pattern" : "target";
      h = await startHarness({ extensions: [rewriter(tool, (input) => (input[field] = undefined))] });
      const args: Record<string, string> = tool === "context_compact" ? { target: "root", summary: "s" } : { [field]: "x" };
      h.script([fauxAssistantMessage([fauxToolCall(tool, args)], { stopReason: "toolUse" }), fauxAssistantMessage("ok")]);
      await h.session.prompt("go");
      const result = toolResults(tool)[0];
      expect(result.isError).toBe(true);
      expect(textOf(result)).not.toMatch(/Cannot read properties|is not a function|undefined \(reading/);
      expect(textOf(result)).toContain(field);
    });
  }
});

export type { Message };
export { hasRawControl };
