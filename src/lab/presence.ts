// Which probes and needed items a row's view shows, kept current as the view changes. Every message that enters or
// leaves the view adds or takes away its patterns (found once per message object, see finder.ts), so asking about
// the view at a measured act reads one count per pattern instead of the hits of every message the view holds: a
// long session's views hold a thousand messages at each act, and the view changes by a few between acts.
// Deterministic; no I/O.
import { Finder, PatternCounts } from "./finder.ts";
import type { NeededItem } from "./needed.ts";
import type { Probe } from "./probes.ts";
import type { ViewObserver } from "./view.ts";

/**
 * The patterns of a session's probes and needed items, by substring, in any of their spellings, and one finder for
 * all of them that every row shares. Probes are named by their position in the list given, items by their `index`;
 * pattern ids are laid out in that order, so no table per probe or item is kept.
 */
export class Presence {
  private readonly finder: Finder;
  /** Pattern ids of probe k: probeStart[k] up to probeStart[k + 1]. */
  private readonly probeStart: Int32Array;
  /** Pattern id of item i: itemBase + i (one spelling each). */
  private readonly itemBase: number;

  constructor(probes: readonly Probe[], items: readonly NeededItem[]) {
    const patterns: string[] = [];
    this.probeStart = new Int32Array(probes.length + 1);
    probes.forEach((probe, k) => {
      this.probeStart[k] = patterns.length;
      patterns.push(probe.text, ...(probe.forms ?? []));
    });
    this.probeStart[probes.length] = patterns.length;
    this.itemBase = patterns.length;
    // A needed path is canonical relative to the cwd, so its absolute spelling contains it already.
    for (const item of items) patterns.push(item.text);
    this.finder = new Finder(patterns);
  }

  /** A view's counts, empty: observing a view fills them with what it holds and keeps them current. */
  tracker(): PresenceCounts {
    return new PresenceCounts(this.finder, this.probeStart, this.itemBase);
  }
}

/** Which probes and items one view shows: the counts of the presence's patterns (see {@link Presence.tracker}). */
export class PresenceCounts extends PatternCounts {
  private readonly probeStart: Int32Array;
  private readonly itemBase: number;

  constructor(finder: Finder, probeStart: Int32Array, itemBase: number) {
    super(finder);
    this.probeStart = probeStart;
    this.itemBase = itemBase;
  }

  /** Probe number `k` of the list the presence was built from, in any of its spellings. */
  hasProbe(k: number): boolean {
    for (let id = this.probeStart[k]; id < this.probeStart[k + 1]; id++) if (this.holdsPattern(id)) return true;
    return false;
  }

  hasItem(item: NeededItem): boolean {
    return this.holdsPattern(this.itemBase + item.index);
  }
}

/** Several observers of one view (a view takes one): each hears every change, in the order given. */
export function observers(...each: readonly ViewObserver[]): ViewObserver {
  if (each.length === 1) return each[0];
  return {
    added(message) {
      for (const observer of each) observer.added(message);
    },
    removed(message) {
      for (const observer of each) observer.removed(message);
    },
  };
}
