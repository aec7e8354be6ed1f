// The tool boundary through a real AgentSession: a call whose arguments fail Pi's schema check gets Pi's error,
// but quoting a short, printable copy of the arguments; a result or error full of control bytes reaches the
// transcript escaped and bounded.
import { afterEach, describe, expect, it } from "vitest";
import { Type } from "typebox";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { startHarness, type Harness } from "../e2e/harness.ts";
import { guardedTool, TOOL_RESULT_MAX_CHARS } from "../../src/host/tool-boundary.ts";
import { hasRawControl } from "../arbitraries/hostile.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const echo = guardedTool({
  name: "echo_test",
  label: "Echo",
  description: "Echo the text, or fail with it",
  parameters: Type.Object({ text: Type.String(), fail: Type.Optional(Type.Boolean()) }),
  execute: async (_id, params) => {
    if (params.fail) throw new Error(`failed on ${params.text}`);
    return { content: [{ type: "text" as const, text: params.text }], details: undefined };
  },
});

async function call(args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
  const id = `c${Math.random().toString(36).slice(2)}`;
  h!.script([
    fauxAssistantMessage([fauxToolCall("echo_test", args as never, { id })], { stopReason: "toolUse" }),
    fauxAssistantMessage("ok"),
  ]);
  await h!.session.prompt("go");
  const entry = h!.session.sessionManager
    .getBranch()
    .find((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolCallId === id);
  if (entry?.type !== "message" || entry.message.role !== "toolResult") throw new Error("no result");
  return {
    text: entry.message.content.map((c) => (c.type === "text" ? c.text : "")).join(""),
    isError: entry.message.isError,
  };
}

describe("tool boundary", () => {
  it("a call failing Pi's schema check quotes a short, printable copy of its arguments", async () => {
    h = await startHarness({ extensions: [(pi) => pi.registerTool(echo)] });
    const result = await call({ text: `\u001b[2J${"x".repeat(1_000_000)}`, fail: "not a boolean" });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/Validation failed/);
    expect(result.text).toMatch(/fail/);
    expect(result.text.length).toBeLessThan(2_000);
    expect(hasRawControl(result.text)).toBe(false);
  });

  it("valid long arguments reach the tool unchanged; its result is escaped and bounded", async () => {
    h = await startHarness({ extensions: [(pi) => pi.registerTool(echo)] });
    const result = await call({ text: `\u001b[31m${"y".repeat(50_000)}` });
    expect(result.isError).toBe(false);
    expect(result.text.startsWith("\\u001b[31myyy")).toBe(true);
    expect(result.text.length).toBeLessThanOrEqual(TOOL_RESULT_MAX_CHARS);
    expect(result.text).toMatch(/\[cut: 50010 chars in all\]$/);
  });

  it("a thrown error reaches the model escaped and bounded", async () => {
    h = await startHarness({ extensions: [(pi) => pi.registerTool(echo)] });
    const result = await call({ text: `\u0007${"z".repeat(100_000)}`, fail: true });
    expect(result.isError).toBe(true);
    expect(result.text.length).toBeLessThanOrEqual(2_000);
    expect(result.text).toContain("failed on \\u0007zzz");
  });
});
