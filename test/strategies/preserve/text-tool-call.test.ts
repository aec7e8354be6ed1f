import { describe, expect, it } from "vitest";
import { isTextToolCall, judgeReply } from "../../../src/strategies/preserve/prompt.ts";

const SUMMARY =
  "## Tool Context\n### User message 1\n#### Findings\n- x\n\n#### Changes & Validation\n- (none)\n\n#### Unresolved\n- (none)";
const reply = (text: string) => judgeReply({ stopReason: "stop", text, toolCalls: 0 }, 8_000);

describe("a tool call written as text", () => {
  it("is no summary, and earns the text-only retry", () => {
    for (const text of [
      '<tool_call>{"name":"read","arguments":{"path":"a.ts"}}</tool_call>',
      'Let me check.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>',
      '<function_call name="read">{"path":"a.ts"}</function_call>',
      '{"name":"read","arguments":{"path":"a.ts"}}',
    ]) {
      expect(isTextToolCall(text)).toBe(true);
      expect(reply(text)).toEqual({
        ok: false,
        reason: "the reply wrote a tool call as text instead of the tool summary",
        textOnlyRetry: true,
      });
    }
  });

  it("is not a summary that only mentions the tags or quotes JSON", () => {
    for (const text of [
      `${SUMMARY}\n- the parser splits \`<tool_call>{…}</tool_call>\` blocks`,
      `${SUMMARY}\n- fixture: {"name":"read","arguments":{}}`,
      "{not json}",
    ])
      expect(isTextToolCall(text)).toBe(false);
    expect(reply(`${SUMMARY}\n- the parser splits \`<tool_call>{…}</tool_call>\` blocks`).ok).toBe(true);
  });
});
