// The model view a planned compaction reads (the compaction heading it, the entries Pi keeps), computed with work
// that follows the view rather than the whole branch. Pure: no I/O; a bounded memo of recent branches.
import type { SessionEntry } from "../../log/entries.ts";
import type { LedgerFacts } from "../../log/facts.ts";
import { type LedgerState, reduceBranch } from "../../projection/ledger-state.ts";
import { backwardLookup, type ProjectedEntry, projectView } from "../../projection/project.ts";
import type { PathLookup } from "../../projection/ranges.ts";

/** A branch this memo has read: its own copy of the entries, and the ledger state they reduce to. */
interface Reading {
  facts: LedgerFacts;
  entries: readonly SessionEntry[];
  state: LedgerState;
}

/**
 * A list as a memo may hold it: the list itself when it is frozen (nobody can change it, so it is its own copy, and
 * it is known by identity when it comes back; the lab freezes the branch it hands each compaction), else a copy.
 */
export function heldCopy<T>(list: readonly T[]): readonly T[] {
  return Object.isFrozen(list) ? list : list.slice();
}

/** Length of the longest common prefix of two entry lists, compared by identity. */
function commonPrefix(a: readonly SessionEntry[], b: readonly SessionEntry[]): number {
  if (a === b) return a.length;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * Views of branches that grow by appending, as a replay or a live session makes them. The ledger state of a branch
 * is its recorded facts folded in order, so the state of a known prefix, folded on with the entries after it, is the
 * state of the whole: each branch costs the entries appended since a branch it extends. Which prefix is known is
 * checked entry by entry (by identity, against the memo's own copy), so a branch edited in place, or another one,
 * is read from the root. `slots` bounds the memo: the lab replays its two planned rows side by side.
 */
export class BranchViews {
  private readings: Reading[] = [];
  private readonly slots: number;

  constructor(slots = 2) {
    this.slots = slots;
  }

  /** Forget every reading (each holds a copy of a branch, and so its entries). */
  clear(): void {
    this.readings = [];
  }

  /** Branches the memo holds now. */
  get size(): number {
    return this.readings.length;
  }

  /** The ledger state of `branch` under `facts`: `reduceBranch(branch, facts)`. */
  state(branch: readonly SessionEntry[], facts: LedgerFacts): LedgerState {
    let best: Reading | undefined;
    for (const reading of this.readings) {
      if (reading.facts !== facts || reading.entries.length > branch.length) continue;
      if (reading.entries === branch) return reading.state;
      if (best && reading.entries.length <= best.entries.length) continue;
      const last = reading.entries.length - 1;
      // Branches of other rows part at their first compaction: their last entries tell them apart at once.
      if (last >= 0 && reading.entries[last] !== branch[last]) continue;
      if (commonPrefix(reading.entries, branch) === reading.entries.length) best = reading;
    }
    if (best && best.entries.length === branch.length) return best.state;
    const state = best
      ? reduceBranch(branch.slice(best.entries.length), facts, best.state)
      : reduceBranch(branch, facts);
    const reading: Reading = { facts, entries: heldCopy(branch), state };
    // The prefix read is superseded by its extension; otherwise the least recent reading makes room.
    this.readings = [reading, ...this.readings.filter((r) => r !== best)].slice(0, this.slots);
    return state;
  }

  /** `projectBranch(branch, facts).entries`, from the memo's state and a lookup that reads from the end. */
  view(branch: readonly SessionEntry[], facts: LedgerFacts): ProjectedEntry[] {
    const state = this.state(branch, facts);
    let lookup: PathLookup | undefined;
    return projectView(branch, state, facts, () => (lookup ??= backwardLookup(branch)));
  }
}
