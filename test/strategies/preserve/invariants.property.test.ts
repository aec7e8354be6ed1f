// Invariant 5 (byte-stable prefixes) and 1 (paired tool results) for preserve checkpoints on generated ledgers, and
// invariant 8 (determinism) of the extractive writer.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../../src/log/entries.ts";
import { LedgerType, LEDGER_FACTS } from "../../../src/strategies/catalog.ts";
import { projectBranch } from "../../../src/projection/project.ts";
import { extractiveCheckpoint, type PreserveDraft } from "../../../src/strategies/preserve/checkpoint.ts";
import { entryBefore } from "../../../src/strategies/shared/delta.ts";
import { ledgerArb } from "../../arbitraries/index.ts";
import { propertyTimeout, runs } from "../../support/fast-check.ts";
import { assertPaired, assistantIndices, batchEnd, pathOf, rewritesHistory } from "../../support/generated-paths.ts";
import { draftEntry } from "./fixtures.ts";

function asEntry(draft: PreserveDraft, parent: SessionEntry, n: number): SessionEntry {
  return draftEntry(draft, {
    id: `preserve-${n}`,
    parentId: parent.id,
    timestamp: new Date(Date.parse(parent.timestamp) + 1).toISOString(),
  });
}

// Histories without tool checkpoints of their own: this test writes the checkpoints.
const ledger = ledgerArb({ maxCommands: 50, weights: { assistant: 20, navigate: 1, toolCheckpoint: 0 } });

describe("preserve invariants on generated ledgers", () => {
  it(
    "context up to checkpoint k is byte-identical before and after checkpoint k+1; tool results stay paired",
    () => {
      let exercised = 0;
      fc.assert(
        fc.property(ledger, fc.nat(), fc.nat(), (generated, pickA, pickB) => {
          const path = pathOf(generated.entries, generated.leafId);
          const turns = assistantIndices(path, 1);
          if (turns.length < 2) return;
          // Checkpoint k at the end of the batch of assistant A, covering everything before A.
          const a = turns[pickA % (turns.length - 1)];
          const endA = batchEnd(path, a);
          const first = extractiveCheckpoint(path.slice(0, endA + 1), entryBefore(path, path[a].id)!);
          if (!first.ok) return;
          const cp1 = asEntry(first.draft, path[endA], 1);
          // Later turns continue from the checkpoint; checkpoint k+1 comes at the end of a later batch B.
          const laterTurns = turns.filter((i) => i > endA);
          if (!laterTurns.length) return;
          const b = laterTurns[pickB % laterTurns.length];
          const endB = batchEnd(path, b);
          const middle = path.slice(endA + 1, endB + 1);
          if (middle.some(rewritesHistory)) return;
          const before = [...path.slice(0, endA + 1), cp1, ...middle];
          const second = extractiveCheckpoint(before, entryBefore(before, path[b].id)!);
          if (!second.ok) return;
          const after = [...before, asEntry(second.draft, before.at(-1)!, 2)];

          const viewBefore = projectBranch(before, LEDGER_FACTS).messages;
          const viewAfter = projectBranch(after, LEDGER_FACTS).messages;
          const k = viewBefore.findIndex(
            (m) => m.role === "custom" && (m as { details?: { checkpoint?: number } }).details?.checkpoint === 1,
          );
          if (k < 0) return; // checkpoint k is outside the context (an earlier compaction boundary)
          exercised++;
          expect(JSON.stringify(viewAfter.slice(0, k + 1))).toBe(JSON.stringify(viewBefore.slice(0, k + 1)));
          // The new checkpoint sits right after its range and before the raw current batch.
          expect(
            viewAfter.filter(
              (m) => m.role === "custom" && (m as { customType?: string }).customType === LedgerType.preserve,
            ).length,
          ).toBe(2);
          assertPaired(viewBefore);
          assertPaired(viewAfter);
        }),
      );
      expect(exercised).toBeGreaterThan(runs() / 10);
    },
    propertyTimeout(),
  );

  it(
    "the extractive checkpoint is byte-identical for the same input (invariant 8)",
    () => {
      fc.assert(
        fc.property(ledger, (generated) => {
          const path = pathOf(generated.entries, generated.leafId);
          const limit = path.at(-1)?.id;
          if (!limit) return;
          const one = extractiveCheckpoint(path, limit);
          const two = extractiveCheckpoint(structuredClone(path), limit);
          expect(JSON.stringify(two)).toBe(JSON.stringify(one));
        }),
      );
    },
    propertyTimeout(),
  );
});
