// A fold over branch arrays that finds its earlier work by the entries themselves rather than by the array object.
// A compaction hands the planner a new array each time (Pi's `branchEntries` is a fresh copy of the branch, and so is
// the lab's), so an index remembered per array object would be built from scratch at every compaction. Pure: no I/O.
import type { SessionEntry } from "../../log/entries.ts";

/** One folded prefix: the state after a branch's first `length` entries, the last of them `last`. */
interface Folded<S> {
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
export class PrefixFold<S> {
  private readonly byRoot = new WeakMap<SessionEntry, Folded<S>[]>();
  private readonly init: () => S;
  private readonly step: (state: S, entry: SessionEntry, index: number) => void;

  /** `step` adds entry `index` of the array to `state` (mutating it); `init` gives the state of an empty array. */
  constructor(init: () => S, step: (state: S, entry: SessionEntry, index: number) => void) {
    this.init = init;
    this.step = step;
  }

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
    let folded: Folded<S>;
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
