import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { attemptWindow, decideLookupAttempt } from "../../src/recall/attempts.ts";
import { Branch, toolCall, type Block } from "./fixtures.ts";

const lookup = (id: string) => toolCall("context_lookup", { question: "q" }, id);

/** Decide through the host's path: the minimal window walked back from the leaf. */
function decideFromLeaf(b: Branch, callId: string, max = 1) {
  return decideLookupAttempt(attemptWindow(b.leafId, b.byId(), callId), callId, max);
}

describe("one context_lookup attempt until a reset", () => {
  it("allows the first lookup after a user message and blocks the next one", () => {
    const b = new Branch();
    b.user("what was the error?");
    b.assistant([lookup("L1")]);
    expect(decideFromLeaf(b, "L1")).toEqual({ allowed: true, ordinal: 0 });
    b.toolResult("L1", "context_lookup", "findings");
    b.assistant([lookup("L2")]);
    expect(decideFromLeaf(b, "L2")).toEqual({ allowed: false, ordinal: 1 });
  });

  it("is not reset by fallback searches, assistant text or thinking; is reset by user input, bash and other tools", () => {
    const b = new Branch();
    b.user("go");
    b.assistant([lookup("L1")]);
    b.toolResult("L1", "context_lookup", "findings");
    b.assistant([
      { type: "thinking", thinking: "hmm" },
      { type: "text", text: "let me grep" },
      toolCall("context_grep", { pattern: "x" }, "G1"),
    ]);
    b.toolResult("G1", "context_grep", "no matches");
    b.assistant([lookup("L2")]);
    expect(decideFromLeaf(b, "L2").allowed).toBe(false);
    b.toolResult("L2", "context_lookup", "blocked");
    b.assistant([toolCall("read", { path: "a.ts" }, "R1")]);
    b.toolResult("R1", "read", "contents");
    b.assistant([lookup("L3")]);
    expect(decideFromLeaf(b, "L3")).toEqual({ allowed: true, ordinal: 0 });
    b.toolResult("L3", "context_lookup", "ok");
    b.bash("ls", "a.ts");
    b.assistant([lookup("L4")]);
    expect(decideFromLeaf(b, "L4").allowed).toBe(true);
  });

  it("counts calls pending in the same batch: of parallel lookups only the first runs", () => {
    const b = new Branch();
    b.user("two questions");
    b.assistant([lookup("P1"), toolCall("read", { path: "x" }, "R"), lookup("P2"), lookup("P3")]);
    expect(decideFromLeaf(b, "P1")).toEqual({ allowed: true, ordinal: 0 });
    expect(decideFromLeaf(b, "P2")).toEqual({ allowed: false, ordinal: 1 });
    expect(decideFromLeaf(b, "P3")).toEqual({ allowed: false, ordinal: 2 });
    // A sibling result persisted before the lookup runs (sequential execution) changes nothing.
    b.toolResult("R", "read", "x contents");
    expect(decideFromLeaf(b, "P2").allowed).toBe(false);
    expect(decideFromLeaf(b, "P1").allowed).toBe(true);
    // With a higher allowance the first two run.
    expect(decideFromLeaf(b, "P2", 2).allowed).toBe(true);
    expect(decideFromLeaf(b, "P3", 2).allowed).toBe(false);
  });

  it("a call that is not on the branch (nested) is judged by the lookups already there", () => {
    const b = new Branch();
    b.user("go");
    b.assistant([toolCall("codemode", { script: "..." }, "C1")]);
    expect(decideFromLeaf(b, "C1/1").allowed).toBe(true);
    b.toolResult("C1", "codemode", "done");
    b.assistant([lookup("L1")]);
    b.toolResult("L1", "context_lookup", "found");
    b.assistant([toolCall("codemode", { script: "..." }, "C2")]);
    expect(decideFromLeaf(b, "C2/1").allowed).toBe(false);
  });

  it("matches a naive count on random histories, and the leaf window agrees with the whole branch", () => {
    type Step =
      | { kind: "user" }
      | { kind: "bash" }
      | { kind: "step"; calls: ("lookup" | "grep" | "read")[]; resultsFirst: number };
    const stepArb: fc.Arbitrary<Step> = fc.oneof(
      fc.constant<Step>({ kind: "user" }),
      fc.constant<Step>({ kind: "bash" }),
      fc.record({
        kind: fc.constant("step" as const),
        calls: fc.array(fc.constantFrom("lookup" as const, "grep" as const, "read" as const), {
          minLength: 1,
          maxLength: 4,
        }),
        resultsFirst: fc.nat({ max: 4 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 3 }), (steps, max) => {
        const b = new Branch();
        let since = 0; // naive model: lookups since the last reset
        let n = 0;
        for (const step of steps) {
          if (step.kind === "user") {
            b.user("u");
            since = 0;
          } else if (step.kind === "bash") {
            b.bash("ls", "out");
            since = 0;
          } else {
            const ids = step.calls.map(() => `c${++n}`);
            const tool = (k: string) => (k === "lookup" ? "context_lookup" : k === "grep" ? "context_grep" : "read");
            b.assistant(step.calls.map((k, i) => toolCall(tool(k), {}, ids[i])) as Block[]);
            // Some sibling results land before the lookups are judged (sequential execution).
            const early = Math.min(step.resultsFirst, ids.length);
            for (let i = 0; i < early; i++) b.toolResult(ids[i], tool(step.calls[i]), "r");
            const branch: SessionEntry[] = [...b.entries];
            let k = since;
            step.calls.forEach((kind, i) => {
              if (kind !== "lookup") return;
              const expected = { allowed: k < max, ordinal: k };
              expect(decideLookupAttempt(branch, ids[i], max)).toEqual(expected);
              expect(decideFromLeaf(b, ids[i], max)).toEqual(expected);
              k++;
            });
            for (let i = early; i < ids.length; i++) b.toolResult(ids[i], tool(step.calls[i]), "r");
            const reset = step.calls.some((k2) => k2 === "read");
            since = reset ? 0 : k;
          }
        }
      }),
    );
  });
});
