// Invariant 10 (reversible): a restore appended right after an act (a fold, or a compaction of any strategy) gives a
// model view byte-identical to the one before the act, in the pure projection and in the request the live ledger
// rewrites from Pi's; and the restore composes with /tree, reload (a real SessionManager reopening the file) and fork.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { buildSessionProjection, SessionManager, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchTo, indexById } from "../../src/log/branch.ts";
import { isRestoreEntry } from "../../src/log/entries.ts";
import { LedgerType, LEDGER_FACTS } from "../../src/strategies/catalog.ts";
import { reduceBranch } from "../../src/projection/ledger-state.ts";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import { projectBranch } from "../../src/projection/project.ts";
import {
  commandArb,
  DEFAULT_WEIGHTS,
  LedgerFolder,
  ledgerSeedArb,
  restorableActs,
  type CommandKind,
  type CommandWeights,
  type LedgerCommand,
  type LedgerSeed,
  toJsonl,
} from "../arbitraries/index.ts";
import { propertyTimeout, runs } from "../support/fast-check.ts";

const dir = mkdtempSync(join(tmpdir(), "ctx-ledger-restore-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bytes = (path: readonly SessionEntry[]) => JSON.stringify(projectBranch(path, LEDGER_FACTS).messages);

/** The live ledger after replaying every step, and the request it sends for Pi's projection at the leaf. */
function liveRequest(folder: LedgerFolder): string {
  const byId = indexById(folder.entries);
  const live = new LiveLedger(LEDGER_FACTS);
  for (const step of folder.steps)
    live.sync(step.kind === "append" ? step.entry.id : step.leafId, (id) => byId.get(id));
  const request = structuredClone(buildSessionProjection(folder.entries, folder.leafId, byId).messages);
  return JSON.stringify(live.requestContext(request) ?? request);
}

/** Command weights that draw only `kind`. */
function only(kind: CommandKind): CommandWeights {
  return Object.fromEntries(Object.keys(DEFAULT_WEIGHTS).map((k) => [k, k === kind ? 1 : 0])) as CommandWeights;
}

/** A history, then one act (a fold or a compaction). */
const scenarioArb = fc.record({
  seed: ledgerSeedArb,
  history: fc.array(commandArb(), { maxLength: 60 }),
  act: fc.oneof(commandArb(only("fold")), commandArb(only("compaction"))),
});

interface Scenario {
  folder: LedgerFolder;
  /** The leaf just before the act's fact (for a fold: after the step that asked for it). */
  beforeLeaf: string | null;
}

/** Build the history, apply the act, restore it whole. Undefined when the act could not be applied here. */
function actThenRestore(input: {
  seed: LedgerSeed;
  history: LedgerCommand[];
  act: LedgerCommand;
}): Scenario | undefined {
  const folder = new LedgerFolder(input.seed, true);
  for (const command of input.history) folder.apply(command);
  const count = folder.entries.length;
  folder.apply(input.act);
  const act = folder.entries
    .slice(count)
    .find((e) => e.type === "compaction" || (e.type === "custom_message" && e.customType === LedgerType.fold));
  if (!act) return undefined;
  const pick = restorableActs(folder.branch()).findIndex((e) => e.id === act.id);
  expect(pick).toBeGreaterThanOrEqual(0);
  folder.apply({ kind: "restore", dt: 1, pick, newest: false, cut: 0 });
  return { folder, beforeLeaf: act.parentId };
}

describe("invariant 10: a restore right after an act", () => {
  it(
    "gives the projection from before the act, byte for byte, in the pure view and in the live request",
    () => {
      let checked = 0;
      fc.assert(
        fc.property(scenarioArb, (input) => {
          const scenario = actThenRestore(input);
          if (!scenario) return;
          checked++;
          const { folder, beforeLeaf } = scenario;
          const before = bytes(folder.branch(beforeLeaf));
          const restored = folder.branch();
          expect(isRestoreEntry(restored.at(-1)!)).toBe(true);
          expect(bytes(restored)).toBe(before);
          expect(liveRequest(folder)).toBe(before);
        }),
      );
      expect(checked).toBeGreaterThan(runs() / 4);
    },
    propertyTimeout(),
  );

  it(
    "composes with /tree: leaving the restore brings the act back, returning undoes it again",
    () => {
      fc.assert(
        fc.property(scenarioArb, (input) => {
          const scenario = actThenRestore(input);
          if (!scenario) return;
          const { folder, beforeLeaf } = scenario;
          const byId = indexById(folder.entries);
          const restoreId = folder.leafId!;
          const actLeaf = byId.get(restoreId)!.parentId;
          const live = new LiveLedger(LEDGER_FACTS);
          const at = (leaf: string | null) => {
            live.sync(leaf, (id) => byId.get(id));
            const path = branchTo(folder.entries, leaf, byId);
            expect(live.state).toEqual(reduceBranch(path, LEDGER_FACTS));
            const request = structuredClone(buildSessionProjection(folder.entries, leaf, byId).messages);
            return JSON.stringify(live.requestContext(request) ?? request);
          };
          const before = bytes(folder.branch(beforeLeaf));
          expect(at(restoreId)).toBe(before);
          expect(at(actLeaf)).toBe(bytes(folder.branch(actLeaf)));
          expect(at(restoreId)).toBe(before);
        }),
      );
    },
    propertyTimeout(),
  );

  it(
    "survives reload and fork: Pi's SessionManager reopens the file, and a fork of the restored leaf, with the same view",
    () => {
      let n = 0;
      fc.assert(
        fc.property(scenarioArb, (input) => {
          const scenario = actThenRestore(input);
          if (!scenario) return;
          const { folder, beforeLeaf } = scenario;
          const expected = bytes(folder.branch(beforeLeaf));
          const file = join(dir, `s${n++}.jsonl`);
          writeFileSync(file, toJsonl(folder.result()));

          const reopened = SessionManager.open(file, dir);
          reopened.branch(folder.leafId!);
          expect(bytes(reopened.getBranch())).toBe(expected);

          // Forking switches the manager to a new session holding the path (labels re-appended at its end).
          const forkedFile = reopened.createBranchedSession(folder.leafId!)!;
          expect(reopened.getEntries().some((e) => isRestoreEntry(e))).toBe(true);
          expect(bytes(reopened.getBranch())).toBe(expected);
          // Pi writes the fork once it holds a conversation; reopening that file gives the same view again.
          if (existsSync(forkedFile)) expect(bytes(SessionManager.open(forkedFile, dir).getBranch())).toBe(expected);
        }),
        { numRuns: runs(1 / 4, 20) },
      );
    },
    propertyTimeout(),
  );
});
