// The OpenCode prune baseline finds its targets from running token sums over the outputs it has seen, instead of
// walking back to the last pruned output at every user turn (on 10 MB of tiny steps nothing is pruned for
// thousands of turns, so each walk reached further back). On any messages, protection and minimum, after every message
// (the row asks at user turns), it gives the walk's answer, and a prune moves both to the same place.
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { describe, expect, it } from "vitest";
import { PruneIndex } from "../../src/lab/baselines/prune.ts";
import { referencePruneTargets } from "./reference/prune-reference.ts";

const messageArb = fc
  .tuple(
    fc.oneof(
      { arbitrary: fc.constant("user"), weight: 4 },
      { arbitrary: fc.constant("assistant"), weight: 2 },
      { arbitrary: fc.constant("toolResult"), weight: 12 },
      { arbitrary: fc.constant("skill"), weight: 1 },
      { arbitrary: fc.constant("compactionSummary"), weight: 1 },
    ),
    fc.nat(40),
  )
  .map(([role, size]) => {
    const text = "x".repeat(size);
    if (role === "user") return { role, content: text, timestamp: 0 };
    if (role === "assistant") return { role, content: [{ type: "text", text }], timestamp: 0 };
    if (role === "compactionSummary") return { role, summary: text, tokensBefore: 0, timestamp: 0 };
    return {
      role: "toolResult",
      toolCallId: "c",
      toolName: role === "skill" ? "skill" : "read",
      content: [{ type: "text", text }],
      isError: false,
      timestamp: 0,
    };
  }) as fc.Arbitrary<AgentMessage>;

describe("the prune baseline's targets", () => {
  it("are the walk back's after every message, for any messages, protection and minimum", () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { minLength: 20, maxLength: 200 }),
        fc.nat(80),
        fc.nat(40),
        (messages, protect, minimum) => {
          const index = new PruneIndex();
          const pruned = new Set<number>();
          const seen: AgentMessage[] = [];
          for (const m of messages) {
            index.push(m);
            seen.push(m);
            const want = referencePruneTargets(seen, pruned, protect, minimum);
            expect(index.targets(protect, minimum)).toEqual(want);
            for (const i of want) pruned.add(i);
            index.pruned(want);
          }
        },
      ),
    );
  });
});
