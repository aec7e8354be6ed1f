// Where the model view starts on a branch: the entries before it are behind a compaction's cut, so no checkpoint or
// digest will cover them again. Kept per branch array as it grows, so asking costs the entries appended since the
// last ask. Pure: no I/O.
import type { SessionEntry } from "../../log/entries.ts";
import { activePins, evolve, initialLedgerState, type LedgerState } from "../../projection/ledger-state.ts";
import { viewCut } from "../../projection/project.ts";
import { LEDGER_FACTS } from "../catalog.ts";
import { BranchFold } from "./branch-fold.ts";

/**
 * The ledger state of a branch without its range rules: what decides the view's cut (compactions, restores of them,
 * pins). Range rules only hide entries after the cut, and appending each would copy the growing rule list.
 */
const cutState = new BranchFold<{ state: LedgerState }>(
  () => ({ state: initialLedgerState() }),
  (held, entry) => {
    const fact = LEDGER_FACTS.read(entry);
    if (fact.kind !== "none" && fact.kind !== "range") held.state = evolve(held.state, fact);
  },
);

/**
 * Index of the first entry the model view may show, as the projection cuts it (`viewCut`): 0 without a compaction.
 * Pins keep entries from before the cut in view, and a repeated id (a malformed file) leaves positions unclear: 0
 * then too, so no entry the view shows ever lies before the floor.
 */
export function viewFloor(
  branch: readonly SessionEntry[],
  lookup: { indexOf(id: string): number; unique: boolean },
): number {
  const { state } = cutState.of(branch);
  if (!lookup.unique || activePins(state).length > 0) return 0;
  const { head, from } = viewCut(state, (id) => lookup.indexOf(id));
  return head < 0 ? 0 : from;
}
