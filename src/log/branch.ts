// The active branch of a session tree: the root-to-leaf path and an id index over it.
// Pure: no I/O; callers hand in entries or an entry lookup.
import type { SessionEntry } from "./entries.ts";

/** Index entries by id. */
export function indexById(entries: readonly SessionEntry[]): Map<string, SessionEntry> {
  const byId = new Map<string, SessionEntry>();
  for (const entry of entries) byId.set(entry.id, entry);
  return byId;
}

/**
 * Root-to-leaf path ending at `leafId`. Mirrors Pi: `undefined` means the last entry, `null` means an empty path.
 * A dangling parent id ends the walk (Pi treats it as a root).
 */
export function branchTo(
  entries: readonly SessionEntry[],
  leafId?: string | null,
  byId: ReadonlyMap<string, SessionEntry> = indexById(entries),
): SessionEntry[] {
  if (leafId === null) return [];
  const leaf = (leafId ? byId.get(leafId) : undefined) ?? entries[entries.length - 1];
  const path: SessionEntry[] = [];
  // A corrupt file could contain a parent cycle; a path can never be longer than the entry count.
  for (let current: SessionEntry | undefined = leaf; current && path.length <= byId.size; ) {
    path.push(current);
    current = current.parentId ? byId.get(current.parentId) : undefined;
  }
  return path.reverse();
}

/** Result of moving an {@link ActivePath} to a new leaf. */
export interface PathChange {
  /** Number of entries kept from the previous path (the common prefix). */
  kept: number;
  /** Entries appended after the common prefix, root-side first. */
  appended: SessionEntry[];
  /** Entries that left the path (a `/tree` jump), root-side first. */
  removed: SessionEntry[];
}

/**
 * The active path, maintained incrementally. Moving to a new leaf walks parents only until an entry already
 * on the path, so appending costs O(new entries) and a `/tree` jump costs O(entries after the fork point).
 */
export class ActivePath {
  readonly entries: SessionEntry[] = [];
  private readonly position = new Map<string, number>();

  /** Index of `id` on the path, or -1. */
  indexOf(id: string): number {
    return this.position.get(id) ?? -1;
  }

  get(id: string): SessionEntry | undefined {
    const i = this.position.get(id);
    return i === undefined ? undefined : this.entries[i];
  }

  get leafId(): string | null {
    return this.entries.length ? this.entries[this.entries.length - 1].id : null;
  }

  /** Move the path to end at `leafId`. */
  moveTo(leafId: string | null, getEntry: (id: string) => SessionEntry | undefined): PathChange {
    const fresh: SessionEntry[] = [];
    const seen = new Set<string>();
    let kept = 0;
    let current = leafId ? getEntry(leafId) : undefined;
    while (current && !seen.has(current.id)) {
      const at = this.position.get(current.id);
      if (at !== undefined && this.entries[at] === current) {
        kept = at + 1;
        break;
      }
      seen.add(current.id);
      fresh.push(current);
      current = current.parentId ? getEntry(current.parentId) : undefined;
    }
    const removed = this.truncate(kept);
    fresh.reverse();
    for (const entry of fresh) this.push(entry);
    return { kept, appended: fresh, removed };
  }

  private truncate(length: number): SessionEntry[] {
    const removed = this.entries.slice(length);
    for (const entry of removed) this.position.delete(entry.id);
    this.entries.length = length;
    return removed;
  }

  private push(entry: SessionEntry): void {
    this.position.set(entry.id, this.entries.length);
    this.entries.push(entry);
  }
}
