// Entry ids named like members of every object (`constructor`, `toString`, `__proto__`): a crafted session file may use
// them, and a record keyed by ids must treat them as ordinary ids. Renaming a generated ledger's ids to such names must
// change nothing but the names: the same view, the same acts, the same labels, the same restore answers, and with no
// ledger facts still Pi's own projection.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildSessionProjection, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchTo } from "../../src/log/branch.ts";
import { reduceBranch } from "../../src/projection/ledger-state.ts";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import { projectBranch } from "../../src/projection/project.ts";
import { listActs, resolveRestoreTarget } from "../../src/projection/restore.ts";
import { listEntries } from "../../src/recall/search.ts";
import { DEFAULT_RECALL_LIMITS } from "../../src/recall/settings.ts";
import { buildTranscript } from "../../src/recall/transcript.ts";
import { PROTOTYPE_KEYS, renameIds, renameInJson } from "../arbitraries/hostile.ts";
import { ledgerArb, type GeneratedLedger } from "../arbitraries/index.ts";
import { propertyTimeout } from "../support/fast-check.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";

/** A ledger and a renaming of some of its ids (acts and labelled entries first, where records keyed by ids matter). */
const renamedArb = (options: Parameters<typeof ledgerArb>[0] = {}) =>
  ledgerArb({ minCommands: 3, ...options }).chain((ledger) =>
    fc
      .shuffledSubarray([...PROTOTYPE_KEYS], { minLength: 1 })
      .chain((names) =>
        fc.tuple(
          fc.constant(ledger),
          fc.constant(names),
          fc.array(fc.nat(), { minLength: names.length, maxLength: names.length }),
        ),
      ),
  );

function rename(
  ledger: GeneratedLedger,
  names: readonly string[],
  picks: readonly number[],
): { map: Map<string, string>; entries: SessionEntry[]; leafId: string | null } {
  const path = branchTo(ledger.entries, ledger.leafId);
  // Prefer the entries records are keyed by: acts (folds, compactions, preserve messages) and label targets.
  const keyed = path.filter(
    (e) =>
      e.type === "compaction" ||
      e.type === "custom_message" ||
      path.some((l) => l.type === "label" && l.targetId === e.id),
  );
  const pool = [...keyed, ...ledger.entries].map((e) => e.id);
  const map = new Map<string, string>();
  // A name the ledger already holds (a pin fact's stray target is `__proto__` or `constructor` on purpose) is not a
  // rename: giving an entry that id would aim the stray fact at it and change the session, not just its names.
  const text = JSON.stringify(ledger.entries);
  names.forEach((name, i) => {
    if (text.includes(JSON.stringify(name))) return;
    const free = pool.filter((id) => !map.has(id));
    if (free.length) map.set(free[picks[i] % Math.min(free.length, keyed.length || free.length)], name);
  });
  const entries = renameIds(ledger.entries, map);
  return { map, entries, leafId: ledger.leafId === null ? null : (map.get(ledger.leafId) ?? ledger.leafId) };
}

const json = (value: unknown) => JSON.stringify(value);
/** Text with every original id, wherever it stands as a word (in JSON strings or in prose), renamed. */
const renameText = (text: string, map: ReadonlyMap<string, string>) =>
  map.size
    ? text.replace(new RegExp(`(?<!\\w)(?:${[...map.keys()].join("|")})(?!\\w)`, "g"), (id) => map.get(id)!)
    : text;

describe("ids named like prototype members (item 7)", () => {
  it(
    "renaming ids to prototype keys renames the view, the acts, the labels and the listing, and changes nothing else",
    () => {
      fc.assert(
        fc.property(renamedArb(), ([ledger, names, picks]) => {
          const { map, entries, leafId } = rename(ledger, names, picks);
          const before = branchTo(ledger.entries, ledger.leafId);
          const after = branchTo(entries, leafId);
          const stateBefore = reduceBranch(before, LEDGER_FACTS);
          const stateAfter = reduceBranch(after, LEDGER_FACTS);
          expect(json(projectBranch(after, LEDGER_FACTS).messages)).toBe(
            renameInJson(json(projectBranch(before, LEDGER_FACTS).messages), map),
          );
          expect(json(listActs(after, stateAfter, LEDGER_FACTS))).toBe(
            renameInJson(json(listActs(before, stateBefore, LEDGER_FACTS)), map),
          );
          // Key order aside (integer-like ids come first in any object), the same records under the new names.
          const sorted = (record: Record<string, string>) =>
            json(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
          const renamedRecord = (record: Record<string, string>) =>
            Object.fromEntries(Object.entries(record).map(([k, v]) => [map.get(k) ?? k, map.get(v) ?? v]));
          expect(sorted(stateAfter.labels)).toBe(sorted(renamedRecord(stateBefore.labels)));
          expect(sorted(stateAfter.revoked)).toBe(sorted(renamedRecord(stateBefore.revoked)));
          for (const name of map.values()) {
            const found = resolveRestoreTarget(name, after, stateAfter, LEDGER_FACTS);
            const original = resolveRestoreTarget(
              [...map].find(([, n]) => n === name)![0],
              before,
              stateBefore,
              LEDGER_FACTS,
            );
            expect(json(found)).toBe(renameText(json(original), map));
          }
          // The live ledger Pi's requests go through agrees with the pure projection on the renamed branch.
          const live = new LiveLedger(LEDGER_FACTS);
          const byId = new Map(entries.map((e) => [e.id, e]));
          live.sync(leafId, (id) => byId.get(id));
          const request = structuredClone(buildSessionProjection(entries, leafId).messages);
          expect(json(live.requestContext(request) ?? request)).toBe(json(projectBranch(after, LEDGER_FACTS).messages));
          const list = (path: SessionEntry[]) => listEntries(buildTranscript(path), {}, DEFAULT_RECALL_LIMITS);
          expect(json(list(after))).toBe(renameText(json(list(before)), map));
        }),
      );
    },
    propertyTimeout(),
  );

  it(
    "with no ledger facts, the renamed session still projects as Pi projects it",
    () => {
      fc.assert(
        fc.property(renamedArb({ folds: false }), ([ledger, names, picks]) => {
          const { entries, leafId } = rename(ledger, names, picks);
          const ours = projectBranch(branchTo(entries, leafId), LEDGER_FACTS);
          expect(ours.messages).toEqual(buildSessionProjection(entries, leafId).messages);
        }),
      );
    },
    propertyTimeout(),
  );

  it("a fold named constructor, a compaction named toString and a label on __proto__ read as ordinary ids", () => {
    // The regression cases the property found first, written out.
    const state = reduceBranch(
      [
        {
          type: "label",
          id: "l1",
          parentId: null,
          timestamp: "2026-01-01T00:00:00.000Z",
          targetId: "__proto__",
          label: "start",
        },
        {
          type: "compaction",
          id: "toString",
          parentId: "l1",
          timestamp: "2026-01-01T00:00:00.000Z",
          summary: "s",
          firstKeptEntryId: "l1",
          tokensBefore: 1,
        },
      ] as SessionEntry[],
      LEDGER_FACTS,
    );
    expect(Object.entries(state.labels)).toEqual([["__proto__", "start"]]);
    expect(state.labels.constructor).toBeUndefined();
    expect(state.revoked.toString).toBeUndefined();
  });
});
