// Pi's compaction preparation and Pi's own projection read a simulated ledger's `piWindow()` (the branch from the
// newest compaction's kept entries on) exactly as they read the whole branch. The lab calls them at every
// compaction; on the whole branch that work grew with the session's square. Any branch the generator writes, with
// our facts and Pi's compactions, replayed as the lab does (source entries, then compactions at random steps with
// the cut Pi picks), and also fed its raw entries in file order (a tree, repeated ids, links that skip).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchTo, indexById } from "../../src/log/branch.ts";
import { SimulatedLedger } from "../../src/lab/rows/ledger-row.ts";
import { piCompaction, piCore } from "../../src/lab/pi-internals.ts";
import { ledgerArb } from "../arbitraries/index.ts";
import { runs } from "../support/fast-check.ts";

const pi = await piCompaction();
const core = await piCore();
const SETTINGS = { enabled: true, reserveTokens: 2_000, keepRecentTokens: 1_500 };

function checkAlong(source: readonly SessionEntry[], compactAt: readonly boolean[]): number {
  const ledger = new SimulatedLedger("w-");
  let shorter = 0;
  source.forEach((entry, i) => {
    ledger.appendSource(entry);
    const window = ledger.piWindow();
    if (window.length < ledger.branch.length) shorter++;
    const whole = pi.prepareCompaction(ledger.branch, SETTINGS);
    expect(pi.prepareCompaction(window, SETTINGS)).toEqual(whole);
    expect(core.buildSessionProjection(window).messages).toEqual(core.buildSessionProjection(ledger.branch).messages);
    if (whole && compactAt[i % compactAt.length]) {
      ledger.appendFact({
        type: "compaction",
        summary: `summary ${i}`,
        firstKeptEntryId: whole.firstKeptEntryId,
        tokensBefore: whole.tokensBefore,
        fromHook: false,
      });
    }
  });
  return shorter;
}

const compactAtArb = fc.array(fc.boolean(), { minLength: 1, maxLength: 8 });

describe("the branch Pi's compaction reads (piWindow)", () => {
  it("prepares the same compaction and projects the same messages as the whole branch, on a path", () => {
    let shortened = 0;
    fc.assert(
      fc.property(ledgerArb(), compactAtArb, (ledger, compactAt) => {
        shortened += checkAlong(branchTo(ledger.entries, ledger.leafId, indexById(ledger.entries)), compactAt);
      }),
      { numRuns: runs(0.25, 40) },
    );
    // The property would hold trivially if the window were always the whole branch.
    expect(shortened).toBeGreaterThan(0);
  });

  it("does the same on raw entries in file order, whatever their links and ids", () => {
    fc.assert(
      fc.property(ledgerArb(), compactAtArb, (ledger, compactAt) => {
        checkAlong(ledger.entries, compactAt);
      }),
      { numRuns: runs(0.25, 40) },
    );
  });
});
