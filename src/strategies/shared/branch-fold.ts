// Indexes over a branch, kept up to date as the branch grows instead of rebuilt at every decision: a planner that
// scans the whole branch at every digest or compaction makes a long session's replay grow with its square. Two ways to
// find the work done for an earlier call: by the array object, for callers that keep one live array (the lab's rows
// and the host's live ledger), and by the entries, for callers handed a fresh copy each time. Pure: no I/O.
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
 * What both folds share: the state of an empty branch and how one entry extends it. They differ in how they find the
 * work done for an earlier call: {@link BranchFold} by the array object (callers that keep one live array),
 * {@link PrefixFold} by the entries (callers handed a fresh copy of the branch each time).
 */
abstract class FoldOverBranches<S> {
  protected readonly init: () => S;
  protected readonly step: (state: S, entry: SessionEntry, index: number) => void;

  /** `step` adds entry `index` of the array to `state` (mutating it); `init` gives the state of an empty array. */
  constructor(init: () => S, step: (state: S, entry: SessionEntry, index: number) => void) {
    this.init = init;
    this.step = step;
  }

  /** The state after folding every entry of `branch`, in order. */
  abstract of(branch: readonly SessionEntry[]): S;
}

/**
 * A fold over branch arrays, remembered per array object. Asked again with the same array, it folds only the entries
 * appended since; an array that no longer starts and ends its folded part with the same entry objects (shortened,
 * moved to another branch, replaced) is folded again from its start. The arrays callers pass are root-to-leaf paths
 * that only grow at the leaf between calls: such a path is fixed by its last entry, so the two checks keep the index
 * exact. A new array costs one full fold, what a scan would cost.
 */
export class BranchFold<S> extends FoldOverBranches<S> {
  private readonly memo = new WeakMap<readonly SessionEntry[], Folded<S>>();

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

// A compaction hands its planner a new array each time (Pi's `branchEntries` is a fresh copy of the branch, and so is
// the lab's), so an index remembered per array object would be built from scratch at every compaction: PrefixFold
// finds its earlier work by the entries themselves.
/** One folded prefix: the state after a branch's first `length` entries, the last of them `last`. */
interface FoldedPrefix<S> {
  state: S;
  length: number;
  last: SessionEntry;
}

/** Prefixes kept per root entry: a few branches of one session (forks, a `/tree` jump back and forth). */
const KEPT_PER_ROOT = 4;

/**
 * A fold over root-to-leaf branch arrays, remembered per root entry object. Asked with an array whose entry at the
 * end of a folded prefix is that prefix's last entry (the same object), it folds only the entries after it: a
 * root-to-leaf path is fixed by its root and its last entry, so the prefix is the same path. Any other array is
 * folded from its start (and kept, the oldest kept prefix of that root giving way). Keyed weakly by the root, so a
 * session's entries are not held once nothing else does. The state returned is live: it is extended by later calls,
 * so read it before asking again.
 */
export class PrefixFold<S> extends FoldOverBranches<S> {
  private readonly byRoot = new WeakMap<SessionEntry, FoldedPrefix<S>[]>();

  /** The state after folding every entry of `branch`, in order. */
  of(branch: readonly SessionEntry[]): S {
    if (branch.length === 0) return this.init();
    const root = branch[0];
    let kept = this.byRoot.get(root);
    if (!kept) {
      kept = [];
      this.byRoot.set(root, kept);
    }
    let best = -1;
    for (let k = 0; k < kept.length; k++) {
      const f = kept[k];
      if (f.length <= branch.length && branch[f.length - 1] === f.last && (best < 0 || f.length > kept[best].length))
        best = k;
    }
    let folded: FoldedPrefix<S>;
    if (best < 0) {
      folded = { state: this.init(), length: 0, last: root };
      if (kept.length >= KEPT_PER_ROOT) kept.shift();
    } else folded = kept.splice(best, 1)[0];
    kept.push(folded);
    for (let i = folded.length; i < branch.length; i++) this.step(folded.state, branch[i], i);
    folded.length = branch.length;
    folded.last = branch[branch.length - 1];
    return folded.state;
  }
}
