// Outcome labels of tool-call lines, and which pairs count as evidence: only a result that unambiguously
// answers its call gives `ok` or `error`; everything else is `unknown` and is never used as evidence.
import { describe, expect, it } from "vitest";
import { planCheckpoint } from "../../../src/strategies/checkpoint/planner.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { inputFor, spanBody, UNCAPPED } from "./fixtures.ts";

function callLines(b: LedgerBuilder, firstKept: string): string[] {
  return spanBody(planCheckpoint(inputFor(b.entries, firstKept), UNCAPPED).summary, 1).filter((l) =>
    l.startsWith("[call "),
  );
}

describe("outcome labels", () => {
  it("labels a paired result ok or error", () => {
    const b = new LedgerBuilder();
    b.user("go");
    const a1 = b.assistant("", [{ id: "k1", name: "bash", args: { command: "make" } }]);
    b.toolResult("k1", "bash", "fine");
    const a2 = b.assistant("", [{ id: "k2", name: "bash", args: { command: "make test" } }]);
    b.toolResult("k2", "bash", "boom", true);
    const u = b.user("next");
    expect(callLines(b, u)).toEqual([
      `[call ${a1}] bash command="make" → ok`,
      `[call ${a2}] bash command="make test" → error`,
    ]);
  });

  it("labels a result whose tool name differs from its call's unknown", () => {
    const b = new LedgerBuilder();
    b.user("go");
    const a = b.assistant("", [{ id: "k1", name: "bash", args: { command: "make" } }]);
    b.toolResult("k1", "read", "not the bash output");
    const u = b.user("next");
    expect(callLines(b, u)).toEqual([`[call ${a}] bash command="make" → unknown`]);
  });

  it("labels a call whose result appears before it unknown", () => {
    const b = new LedgerBuilder();
    b.user("go");
    b.toolResult("k1", "bash", "early result");
    const a = b.assistant("", [{ id: "k1", name: "bash", args: { command: "make" } }]);
    const u = b.user("next");
    expect(callLines(b, u)).toEqual([`[call ${a}] bash command="make" → unknown`]);
  });

  it("labels two calls sharing one id unknown, even though a result follows each", () => {
    const b = new LedgerBuilder();
    b.user("go");
    const a1 = b.assistant("", [{ id: "dup", name: "bash", args: { command: "one" } }]);
    b.toolResult("dup", "bash", "first");
    const a2 = b.assistant("", [{ id: "dup", name: "bash", args: { command: "two" } }]);
    b.toolResult("dup", "bash", "second", true);
    const u = b.user("next");
    expect(callLines(b, u)).toEqual([
      `[call ${a1}] bash command="one" → unknown`,
      `[call ${a2}] bash command="two" → unknown`,
    ]);
  });

  it("does not fall back to the raw session's result for an ambiguous id when an edit hid the visible one", () => {
    const b = new LedgerBuilder();
    b.user("go");
    const a1 = b.assistant("", [{ id: "dup", name: "bash", args: { command: "one" } }]);
    const r1 = b.toolResult("dup", "bash", "first");
    b.edit(r1, null);
    const u2 = b.user("middle");
    // A later call reuses the id; its result must not label the hidden first call.
    b.assistant("", [{ id: "dup", name: "bash", args: { command: "two" } }]);
    b.toolResult("dup", "bash", "second", true);
    const u3 = b.user("next");
    const lines = spanBody(planCheckpoint(inputFor(b.entries, u3), UNCAPPED).summary, 1);
    expect(lines).toContain(`[call ${a1}] bash command="one" → unknown`);
    expect(lines).toContain(`[user ${u2}]`);
  });
});

describe("evidence from ambiguous pairs", () => {
  /** Compacted history that read and then edited `a.ts`, so the file is listed; the test fills in the tail. */
  function history() {
    const b = new LedgerBuilder();
    b.user("start");
    b.tool("read", { path: "a.ts" }, "old contents");
    const tailStart = b.user("continue");
    return { b, tailStart };
  }
  const fileLine = (summary: string) => summary.split("\n").find((l) => l.startsWith('[read] "a.ts"'));

  it("uses an unambiguous read in the tail as evidence", () => {
    const { b, tailStart } = history();
    b.assistant("", [{ id: "r1", name: "read", args: { path: "a.ts" } }]);
    b.toolResult("r1", "read", "whole file");
    expect(fileLine(planCheckpoint(inputFor(b.entries, tailStart), UNCAPPED).summary)).toBe(
      '[read] "a.ts" (full read in tail)',
    );
  });

  it("leaves duplicate-id read pairs in the tail out of the evidence", () => {
    const { b, tailStart } = history();
    b.assistant("", [{ id: "r1", name: "read", args: { path: "a.ts" } }]);
    b.toolResult("r1", "read", "whole file");
    b.assistant("", [{ id: "r1", name: "read", args: { path: "a.ts" } }]);
    b.toolResult("r1", "read", "whole file again");
    expect(fileLine(planCheckpoint(inputFor(b.entries, tailStart), UNCAPPED).summary)).toBe('[read] "a.ts"');
  });

  it("leaves a read answered by a result of another tool out of the evidence", () => {
    const { b, tailStart } = history();
    b.assistant("", [{ id: "r1", name: "read", args: { path: "a.ts" } }]);
    b.toolResult("r1", "bash", "not a read");
    expect(fileLine(planCheckpoint(inputFor(b.entries, tailStart), UNCAPPED).summary)).toBe('[read] "a.ts"');
  });
});
