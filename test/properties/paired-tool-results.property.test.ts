// Invariant 1: in our projection every tool result follows the assistant call it answers, and every kept
// call keeps its result (when the branch has one), on generated ledgers with folds and on real sessions.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchTo, indexById } from "../../src/log/branch.ts";
import { projectBranch } from "../../src/projection/project.ts";
import { ledgerArb } from "../arbitraries/index.ts";
import { loadRealSessions } from "./real-sessions.ts";
import { answeredCallIds, pairingViolations } from "./tool-pairing.ts";
import { propertyTimeout } from "../support/fast-check.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";

function violationsAt(entries: SessionEntry[], leafId: string | null, byId = indexById(entries)): string[] {
  const branch = branchTo(entries, leafId, byId);
  return pairingViolations(projectBranch(branch, LEDGER_FACTS).messages, answeredCallIds(branch));
}

describe("paired tool results (invariant 1)", () => {
  it("the checker flags orphan results and unanswered calls, and ignores calls the branch never answered", () => {
    const call = { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "read", arguments: {} }] };
    const result = (id: string) => ({
      role: "toolResult",
      toolCallId: id,
      toolName: "read",
      content: [],
      isError: false,
    });
    const user = { role: "user", content: "hi" };
    const m = (...list: object[]) => list as AgentMessage[];
    expect(pairingViolations(m(call, result("c1")))).toEqual([]);
    expect(pairingViolations(m(call, user, result("c1")))).toEqual(["unanswered-call:c1", "orphan-result:c1"]);
    expect(pairingViolations(m(user, result("c1")))).toEqual(["orphan-result:c1"]);
    expect(pairingViolations(m(call, user), new Set())).toEqual([]);
    expect(pairingViolations(m(call, user), new Set(["c1"]))).toEqual(["unanswered-call:c1"]);
  });

  it(
    "holds at every leaf of generated ledgers with folds, compactions and /tree moves",
    () => {
      fc.assert(
        fc.property(ledgerArb(), (ledger) => {
          let count = 0;
          for (const step of ledger.steps) {
            if (step.kind === "append") count++;
            const leafId = step.kind === "append" ? step.entry.id : step.leafId;
            const entries = ledger.entries.slice(0, count);
            expect(violationsAt(entries, leafId), `leaf ${leafId}`).toEqual([]);
          }
        }),
      );
    },
    propertyTimeout(),
  );

  describe.each(loadRealSessions())("real session $name", ({ entries }) => {
    const byId = indexById(entries);

    it("holds at the final leaf", () => {
      expect(violationsAt(entries, entries[entries.length - 1].id, byId)).toEqual([]);
    });

    it(
      "holds at any earlier leaf",
      () => {
        fc.assert(
          fc.property(fc.nat({ max: entries.length - 1 }), (i) => {
            expect(violationsAt(entries, entries[i].id, byId)).toEqual([]);
          }),
        );
      },
      propertyTimeout(),
    );
  });
});
