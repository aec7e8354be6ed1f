// The active branch of a loaded session, with what is wrong with its tree: a parent cycle, duplicate ids
// (the last entry with an id wins, as in Pi's index) and a parent id that names no entry. Pure; no I/O.
import { branchTo, indexById } from "../log/branch.ts";
import { quoted } from "../log/display.ts";
import type { SessionEntry } from "../log/entries.ts";

/** Longest id shown in a diagnostic; ids come from the file and may be huge. */
const MAX_ID = 40;
const quotedId = (value: string | null) => quoted(value, MAX_ID);
/** Duplicate ids listed by name before the rest are only counted. */
const MAX_LISTED = 5;

/** The active branch (a parent cycle is cut where it would repeat an entry), and one line per tree problem. */
export function checkedBranch(entries: readonly SessionEntry[]): { branch: SessionEntry[]; problems: string[] } {
  const problems: string[] = [];
  const byId = indexById(entries);
  if (byId.size < entries.length) {
    const counts = new Map<string, number>();
    for (const entry of entries) counts.set(entry.id, (counts.get(entry.id) ?? 0) + 1);
    const duplicated = [...counts].filter(([, n]) => n > 1);
    for (const [id, n] of duplicated.slice(0, MAX_LISTED))
      problems.push(`duplicate id ${quotedId(id)} (${n} entries; the last one wins)`);
    if (duplicated.length > MAX_LISTED) problems.push(`${duplicated.length - MAX_LISTED} more duplicate ids`);
  }
  const branch = branchTo(entries, undefined, byId);
  const first = branch[0];
  const parent = first?.parentId;
  // The walk from the leaf ends at a link that is not an id, at an id with no entry, or at an entry it met before.
  // When the root-most entry's parent is in the file, only the last can have stopped it: a parent cycle.
  if (first && typeof parent === "string" && byId.has(parent)) {
    // Parent ids followed from the leaf, up to the entry they lead back to.
    const walk = branch
      .slice()
      .reverse()
      .map((e) => quotedId(e.id));
    const shown = walk.length > 6 ? [...walk.slice(0, 5), "…"] : walk;
    problems.push(
      `parent cycle: ${[...shown, quotedId(parent)].join(" → ")} (parent ids followed from the leaf); the active branch starts at ${quotedId(first.id)}`,
    );
  } else if (first && parent && !byId.has(parent)) {
    problems.push(
      `dangling parent: entry ${quotedId(first.id)} names parent ${quotedId(parent)}, which is not in the file; the active branch starts at ${quotedId(first.id)}`,
    );
  }
  return { branch, problems };
}
