// Invariant 4: with no ledger facts on the branch, our projection equals Pi's buildSessionProjection. A user's own
// `<keepContext>` span is a pin (it outlives any compaction), so it counts as a fact here.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { buildSessionProjection, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { isLedgerEntry } from "../../src/log/entries.ts";
import { branchTo, indexById } from "../../src/log/branch.ts";
import { keepsContext } from "../../src/projection/pins.ts";
import { projectBranch } from "../../src/projection/project.ts";
import { ledgerArb, type GeneratedLedger } from "../arbitraries/index.ts";
import { loadRealSessions } from "./real-sessions.ts";
import { propertyTimeout } from "../support/fast-check.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";

function expectNeutral(entries: SessionEntry[], leafId: string | null, byId = indexById(entries)): void {
  const ours = projectBranch(branchTo(entries, leafId, byId), LEDGER_FACTS);
  const pi = buildSessionProjection(entries, leafId, byId);
  expect(ours.messages).toEqual(pi.messages);
  expect(ours.entries.map((e) => e.sourceEntry.id)).toEqual(pi.entries.map((e) => e.sourceEntry.id));
  expect(ours.thinkingLevel).toBe(pi.thinkingLevel);
  expect(ours.model).toEqual(pi.model);
}

/** Every leaf the session had while it was built: after each append and each /tree move. */
function leavesOf(ledger: GeneratedLedger): { entries: SessionEntry[]; leafId: string | null }[] {
  const out: { entries: SessionEntry[]; leafId: string | null }[] = [];
  let count = 0;
  for (const step of ledger.steps) {
    if (step.kind === "append") count++;
    out.push({ entries: ledger.entries.slice(0, count), leafId: step.kind === "append" ? step.entry.id : step.leafId });
  }
  return out;
}

describe("neutrality (invariant 4)", () => {
  it(
    "equals Pi's projection on generated ledgers without ledger facts, at every leaf",
    () => {
      fc.assert(
        fc.property(ledgerArb({ folds: false }), (ledger) => {
          for (const { entries, leafId } of leavesOf(ledger)) expectNeutral(entries, leafId);
        }),
      );
    },
    propertyTimeout(),
  );

  it(
    "equals Pi's projection wherever the active branch carries no ledger fact (facts on other branches)",
    () => {
      fc.assert(
        fc.property(ledgerArb(), (ledger) => {
          const byId = indexById(ledger.entries);
          for (const step of ledger.steps) {
            if (step.kind !== "move") continue;
            if (branchTo(ledger.entries, step.leafId, byId).some((e) => isLedgerEntry(e) || keepsContext(e))) continue;
            expectNeutral(ledger.entries, step.leafId, byId);
          }
          if (!branchTo(ledger.entries, ledger.leafId, byId).some((e) => isLedgerEntry(e) || keepsContext(e)))
            expectNeutral(ledger.entries, ledger.leafId, byId);
        }),
      );
    },
    propertyTimeout(),
  );

  describe.each(loadRealSessions())("real session $name", ({ entries }) => {
    const byId = indexById(entries);

    it("equals Pi's projection at the final leaf", () => {
      expect(entries.length).toBeGreaterThan(900);
      expectNeutral(entries, entries[entries.length - 1].id, byId);
    });

    it(
      "equals Pi's projection at any earlier leaf",
      () => {
        fc.assert(fc.property(fc.nat({ max: entries.length - 1 }), (i) => expectNeutral(entries, entries[i].id, byId)));
      },
      propertyTimeout(),
    );
  });
});
