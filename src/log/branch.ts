// The active branch of a session tree: the root-to-leaf path and an id index over it.
// Pure: no I/O; callers hand in entries or an entry lookup.
import type { SessionEntry } from "./entries.ts";
import { PositionIndex } from "./position-index.ts";

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
  if (!leaf) return path;
  // A corrupt file could contain a parent cycle or an id-less line: the walk ends on both.
  path.push(leaf);
  walkParents(
    leaf.parentId,
    (id) => byId.get(id),
    (entry) => {
      if (entry === leaf) return false;
      path.push(entry);
    },
  );
  return path.reverse();
}

/**
 * Walk parent links from `leafId` towards the root, visiting each entry leaf-side first; `visit` returns false to stop.
 * The walk ends at a root (`parentId: null`), at a link that is not an entry id (`undefined` or another type, as a
 * damaged line gives), at an id with no entry, and at an entry met before (a parent cycle). So it visits each entry at
 * most once, and never more entries than the branch holds, whatever the file says.
 */
export function walkParents(
  leafId: unknown,
  getEntry: (id: string) => SessionEntry | undefined,
  visit: (entry: SessionEntry) => boolean | void,
): void {
  const seen = new Set<string>();
  for (let id = leafId; typeof id === "string" && !seen.has(id); ) {
    seen.add(id);
    const entry = getEntry(id);
    if (!entry || visit(entry) === false) return;
    id = (entry as { parentId?: unknown }).parentId;
  }
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
  private readonly position = new PositionIndex((at) => this.entries[at].id);

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
    let kept = 0;
    walkParents(leafId, getEntry, (current) => {
      const at = this.position.get(current.id);
      if (at !== undefined && this.entries[at] === current) {
        kept = at + 1;
        return false;
      }
      fresh.push(current);
    });
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
