// Pins as properties: on generated ledgers rich in pin and unpin facts (and `<keepContext>` user messages), every
// pinned entry is in the model view whatever the acts around it (invariant 1 pairs kept, invariant 3 live = pure);
// and a thousand pins on a real session survive a compaction, live and pure alike.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { buildSessionProjection, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchTo, indexById } from "../../src/log/branch.ts";
import { LedgerType, LEDGER_FACTS } from "../../src/strategies/catalog.ts";
import { activePins, reduceBranch } from "../../src/projection/ledger-state.ts";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import { isPinnable } from "../../src/projection/pins.ts";
import { projectBranch } from "../../src/projection/project.ts";
import { ledgerArb, naivePinnedIds } from "../arbitraries/index.ts";
import { loadRealSessions } from "./real-sessions.ts";
import { propertyTimeout, runs } from "../support/fast-check.ts";
import { answeredCallIds, pairingViolations } from "./tool-pairing.ts";

/** Pin-heavy ledgers: pins, folds, tool checkpoints, compactions and restores in one mix. */
const pinnedLedgerArb = ledgerArb({
  minCommands: 10,
  weights: { pin: 10, fold: 4, compaction: 3, toolCheckpoint: 3, restore: 2 },
});

/** Entries a context edit in the view removed (Pi's edits still apply to pinned entries), and revoked acts' messages. */
function silenced(branch: readonly SessionEntry[]): Set<string> {
  const out = new Set<string>();
  for (const e of branch) if (e.type === "context_edit") out.add(e.targetId);
  const state = reduceBranch(branch, LEDGER_FACTS);
  for (const id of Object.keys(state.revoked)) out.add(id);
  for (const e of branch) if (e.type === "custom_message" && e.customType === LedgerType.recap) out.add(e.id);
  return out;
}

describe("pins (properties)", () => {
  it(
    "every pinned entry is in the view with its own messages; pairs intact; the live request equals the projection",
    () => {
      fc.assert(
        fc.property(pinnedLedgerArb, (ledger) => {
          const byId = indexById(ledger.entries);
          const live = new LiveLedger(LEDGER_FACTS);
          const entries: SessionEntry[] = [];
          for (const step of ledger.steps) {
            if (step.kind === "append") entries.push(step.entry);
            const leafId = step.kind === "append" ? step.entry.id : step.leafId;
            live.sync(leafId, (id) => byId.get(id));
            const branch = branchTo(entries, leafId, byId);
            const projection = projectBranch(branch, LEDGER_FACTS);
            const shown = new Set(projection.entries.filter((e) => e.messages.length).map((e) => e.sourceEntry.id));
            const quiet = silenced(branch);
            for (const id of naivePinnedIds(branch))
              if (isPinnable(byId.get(id)) && !quiet.has(id))
                expect(shown.has(id), `pinned ${id} is in the view`).toBe(true);
            expect(pairingViolations(projection.messages, answeredCallIds(branch))).toEqual([]);
            const request = buildSessionProjection(entries, leafId, byId).messages.filter((m) => m.role !== "system");
            expect(live.requestContext(structuredClone(request), "conversation") ?? request).toEqual(
              projection.messages.filter((m) => m.role !== "system"),
            );
          }
        }),
        { numRuns: runs(1 / 4, 20) },
      );
    },
    propertyTimeout(),
  );

  describe.each(loadRealSessions())("real session $name", ({ entries }) => {
    it("a thousand pins survive a compaction verbatim, live and pure alike, pairs intact", () => {
      const all = entries.slice();
      let parentId = all[all.length - 1].id;
      const append = (entry: Record<string, unknown>) => {
        const id = `pin-test-${all.length}`;
        all.push({ id, parentId, timestamp: new Date(0).toISOString(), ...entry } as SessionEntry);
        parentId = id;
        return id;
      };
      const pinnable = entries.filter((e) => isPinnable(e) && e.type === "message" && e.message.role !== "toolResult");
      const targets = Array.from({ length: 1000 }, (_, i) => pinnable[(i * 7919) % pinnable.length].id);
      for (const targetId of targets)
        append({ type: "custom", customType: LedgerType.pin, data: { v: 1, targetId, pinned: true } });
      const kept = [...entries].reverse().find((e) => e.type === "message" && e.message.role === "user")!;
      append({ type: "compaction", summary: "THOUSAND-PIN-SUMMARY", firstKeptEntryId: kept.id, tokensBefore: 1 });
      append({ type: "message", message: { role: "user", content: "after", timestamp: 1 } });

      const byId = indexById(all);
      const branch = branchTo(all, parentId, byId);
      expect(activePins(reduceBranch(branch, LEDGER_FACTS)).length).toBe(new Set(targets).size);
      const pure = projectBranch(branch, LEDGER_FACTS);
      const shown = new Set(pure.entries.filter((e) => e.messages.length).map((e) => e.sourceEntry.id));
      for (const id of targets) expect(shown.has(id)).toBe(true);
      expect(pairingViolations(pure.messages, answeredCallIds(branch))).toEqual([]);
      const live = new LiveLedger(LEDGER_FACTS);
      live.sync(parentId, (id) => byId.get(id));
      const request = buildSessionProjection(all, parentId, byId).messages;
      expect(live.requestContext(structuredClone(request)) ?? request).toEqual(pure.messages);
      // The pinned messages come right after the summary, in path order.
      const order = pure.entries.filter((e) => e.messages.length).map((e) => e.sourceEntry.id);
      expect(byId.get(order[0])!.type).toBe("compaction");
      const positions = order.slice(1, 1 + new Set(targets).size).map((id) => branch.findIndex((e) => e.id === id));
      expect(positions).toEqual([...positions].sort((a, b) => a - b));
    });
  });
});
