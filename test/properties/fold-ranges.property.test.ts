// Invariant 9 (ranges): a target is accepted only when it is strictly before the request and still visible, and a
// fold built from an accepted target hides exactly the foldable entries inside its range (minus the target's results).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { branchTo } from "../../src/log/branch.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { LedgerType, type FoldDetails, LEDGER_FACTS } from "../../src/strategies/catalog.ts";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import { projectBranch } from "../../src/projection/project.ts";
import {
  ALREADY_COMPACTED,
  assistantAtOrBefore,
  validateTarget,
  type FoldView,
} from "../../src/strategies/fold/targets.ts";
import { ledgerArb, naiveHiddenIds, visibleFoldTargets } from "../arbitraries/index.ts";

function viewOf(path: readonly SessionEntry[], all: readonly SessionEntry[]): FoldView {
  const live = new LiveLedger(LEDGER_FACTS);
  const byId = new Map(all.map((e) => [e.id, e]));
  live.sync(path.at(-1)?.id ?? null, (id) => byId.get(id));
  const labels: Record<string, string> = {};
  for (const [id, label] of Object.entries(live.state.labels)) if (live.indexOf(id) >= 0) labels[id] = label;
  return {
    path: live.entries,
    indexOf: (id) => live.indexOf(id),
    isHidden: (id) => live.isHidden(id),
    labels,
    exists: (id) => byId.has(id),
    labelledElsewhere: () => [],
  };
}

describe("invariant 9: fold ranges", () => {
  it("accepts exactly the visible targets before the request, and folds only inside the range", () => {
    fc.assert(
      fc.property(ledgerArb({ minCommands: 4 }), fc.nat(), (ledger, pick) => {
        const path = branchTo(ledger.entries, ledger.leafId);
        if (path.length < 2) return;
        const view = viewOf(path, ledger.entries);
        const request = path[path.length - 1];
        const candidates = path.slice(0, -1);
        const target = candidates[pick % candidates.length];
        const visible = new Set(visibleFoldTargets(path).map((e) => e.id));
        const verdict = validateTarget(target.id, request.id, view);
        if (visible.has(target.id))
          expect(verdict.ok, `visible target ${target.id} rejected: ${JSON.stringify(verdict)}`).toBe(true);
        if (naiveHiddenIds(path).has(target.id)) {
          expect(verdict.ok).toBe(false);
          if (!verdict.ok) expect(verdict.error).toContain(ALREADY_COMPACTED);
        }
        if (!verdict.ok) return;

        // Commit the fold the way the host does and compare what disappears with the naive model.
        const targetIndex = view.indexOf(target.id);
        const keeper = assistantAtOrBefore(view, targetIndex);
        const details: FoldDetails = {
          v: 1,
          range: { afterId: target.id, throughId: request.id, ...(keeper ? { keepToolResultsOf: keeper.id } : {}) },
          requestEntryId: request.id,
          target: target.id,
        };
        const fold = {
          type: "custom_message",
          id: "fold-under-test",
          parentId: request.id,
          timestamp: request.timestamp,
          customType: LedgerType.fold,
          content: "summary",
          display: true,
          details,
        } as SessionEntry;
        const before = new Set(
          projectBranch(path, LEDGER_FACTS)
            .entries.filter((e) => e.messages.length)
            .map((e) => e.sourceEntry.id),
        );
        const after = new Set(
          projectBranch([...path, fold], LEDGER_FACTS)
            .entries.filter((e) => e.messages.length)
            .map((e) => e.sourceEntry.id),
        );
        const newlyHidden = [...before].filter((id) => !after.has(id));
        for (const id of newlyHidden) {
          const at = path.findIndex((e) => e.id === id);
          expect(at, `${id} hidden outside the range`).toBeGreaterThan(targetIndex);
        }
        // Everything the naive model hides after the fold is hidden by our projection too.
        for (const id of naiveHiddenIds([...path, fold])) expect(after.has(id)).toBe(false);
      }),
    );
  });
});
