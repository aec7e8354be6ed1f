// The lab rows' live projection (`BranchProjection` in src/lab/rows/ledger-row.ts) against the whole-branch
// computation it replaces: at every point it is asked, it equals `projectBranch` of the entries appended so far,
// including when the appended entries do not chain by their parent links (it then falls back to the whole branch).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchTo, indexById } from "../../src/log/branch.ts";
import { projectBranch } from "../../src/projection/project.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";
import { BranchProjection } from "../../src/lab/rows/ledger-row.ts";
import { ledgerArb } from "../arbitraries/index.ts";

/** The generated ledger's active branch, root to leaf. */
function branchOf(ledger: { entries: SessionEntry[]; leafId: string | null }): SessionEntry[] {
  return branchTo(ledger.entries, ledger.leafId, indexById(ledger.entries));
}

/** Append `entries` one by one, asking for the projection where `ask` says so; every answer is checked. */
function replayAndCheck(entries: readonly SessionEntry[], ask: readonly boolean[]): number {
  const branch: SessionEntry[] = [];
  const live = new BranchProjection(branch);
  let checks = 0;
  entries.forEach((entry, i) => {
    branch.push(entry);
    if (ask[i % ask.length] || i === entries.length - 1) {
      expect(live.entries()).toEqual(projectBranch(branch.slice(), LEDGER_FACTS).entries);
      checks++;
    }
  });
  return checks;
}

describe("the lab rows' live projection", () => {
  it("equals projectBranch of the branch so far, wherever it is asked", () => {
    fc.assert(
      fc.property(ledgerArb(), fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), (ledger, ask) => {
        replayAndCheck(branchOf(ledger), ask);
      }),
    );
  });

  it("still equals it when an appended entry's parent link does not name the entry before it", () => {
    fc.assert(
      fc.property(
        ledgerArb(),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.constantFrom("dangling", "root", "skip", "duplicate"),
        (ledger, ask, pick, damage) => {
          const branch = branchOf(ledger);
          fc.pre(branch.length >= 3);
          const at = 1 + (pick % (branch.length - 1));
          const damaged = branch.slice();
          const parentId =
            damage === "dangling" ? "no-such-entry" : damage === "root" ? null : at >= 2 ? branch[at - 2].id : null;
          if (damage === "duplicate") damaged.splice(at, 0, { ...branch[at - 1], parentId: branch[at - 1].id });
          else damaged[at] = { ...branch[at], parentId } as SessionEntry;
          replayAndCheck(damaged, ask);
        },
      ),
    );
  });
});
