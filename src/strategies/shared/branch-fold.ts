// An index over a branch array, kept up to date as the array grows instead of rebuilt at every decision. The lab's
// rows and the host's live ledger hand the planners the same array again and again, longer by a few entries each
// time; a planner that scans the whole branch at every digest makes a long session's replay grow with its square.
// Pure: no I/O.
import type { SessionEntry } from "../../log/entries.ts";

/** An index of one branch array, as far as it has been read. */
interface Folded<S> {
  state: S;
  /** Entries folded into `state`: the array's first `length` entries. */
  length: number;
  /** The array's first and last folded entries, to tell an extended array from one that changed. */
  first: SessionEntry | undefined;
  last: SessionEntry | undefined;
}

/**
 * A fold over branch arrays, remembered per array object. Asked again with the same array, it folds only the entries
 * appended since; an array that no longer starts and ends its folded part with the same entry objects (shortened,
 * moved to another branch, replaced) is folded again from its start. The arrays callers pass are root-to-leaf paths
 * that only grow at the leaf between calls: such a path is fixed by its last entry, so the two checks keep the index
 * exact. A new array costs one full fold, what a scan would cost.
 */
export class BranchFold<S> {
  private readonly memo = new WeakMap<readonly SessionEntry[], Folded<S>>();
  private readonly init: () => S;
  private readonly step: (state: S, entry: SessionEntry, index: number) => void;

  /** `step` adds entry `index` of the array to `state` (mutating it); `init` gives the state of an empty array. */
  constructor(init: () => S, step: (state: S, entry: SessionEntry, index: number) => void) {
    this.init = init;
    this.step = step;
  }

  /** The state after folding every entry of `branch`, in order. */
  of(branch: readonly SessionEntry[]): S {
    let folded = this.memo.get(branch);
    if (
      !folded ||
      branch.length < folded.length ||
      (folded.length > 0 && (branch[0] !== folded.first || branch[folded.length - 1] !== folded.last))
    ) {
      folded = { state: this.init(), length: 0, first: undefined, last: undefined };
      this.memo.set(branch, folded);
    }
    for (let i = folded.length; i < branch.length; i++) this.step(folded.state, branch[i], i);
    if (branch.length > folded.length) {
      folded.length = branch.length;
      folded.first = branch[0];
      folded.last = branch[branch.length - 1];
    }
    return folded.state;
  }
}
