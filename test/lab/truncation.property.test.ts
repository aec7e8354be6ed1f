// The truncate baseline finds its cut from running token sums and the turn starts it has seen, instead of walking
// back over the whole view at every request (on 10 MB of tiny steps the view held 25k messages, walked at each of
// 15k requests). On any messages, budget and earlier cut it gives the walk's answer.
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { describe, expect, it } from "vitest";
import { TruncationIndex } from "../../src/lab/baselines/truncate.ts";
import { messageTokens } from "../../src/lab/metrics.ts";
import { referenceTruncationStart } from "./reference/truncation-reference.ts";

const messageArb = fc
  .tuple(fc.constantFrom("user", "assistant", "toolResult", "toolResult", "bashExecution", "custom"), fc.nat(400))
  .map(([role, size]) => {
    const text = "x".repeat(size);
    if (role === "user") return { role, content: text, timestamp: 0 };
    if (role === "assistant") return { role, content: [{ type: "text", text }], timestamp: 0 };
    if (role === "toolResult")
      return {
        role,
        toolCallId: "c",
        toolName: "read",
        content: [{ type: "text", text }],
        isError: false,
        timestamp: 0,
      };
    if (role === "bashExecution") return { role, command: "ls", output: text, exitCode: 0, timestamp: 0 };
    return { role, customType: "x", content: text, display: true, timestamp: 0 };
  }) as fc.Arbitrary<AgentMessage>;

describe("the truncate baseline's cut", () => {
  it("is the walk back's, for any messages, budget and earlier cut", () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 40 }),
        fc.nat(1_000),
        fc.integer({ min: -1, max: 1 }),
        fc.nat(1_000),
        (messages, atShare, off, cutShare) => {
          const index = new TruncationIndex();
          for (const m of messages) index.push(m);
          const at = Math.floor((atShare / 1_000) * messages.length);
          // A budget at, just under or just over the tokens from some message on: the borders where a cut moves.
          let suffix = 0;
          for (let i = messages.length - 1; i >= at; i--) suffix += messageTokens(messages[i]);
          const budget = Math.max(0, suffix + off);
          const from = Math.floor((cutShare / 1_000) * at);
          expect(index.start(from, budget)).toBe(referenceTruncationStart(messages, from, budget));
        },
      ),
    );
  });
});
