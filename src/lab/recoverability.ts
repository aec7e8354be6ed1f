// Recoverability: of the probes a row's view lost, how many the package's `context_grep` search finds in the
// ledger, attributed to the entry the probe came from. The ledger keeps every entry, so a loss in the view
// need not be a loss. Uses the recall module's own index and grep, exactly as the tool does.
import type { SessionEntry } from "../log/entries.ts";
import { grepTranscript } from "../recall/search.ts";
import { DEFAULT_RECALL_LIMITS } from "../recall/settings.ts";
import { buildTranscript, createTranscript, renderEntry, type TranscriptIndex } from "../recall/transcript.ts";
import type { Probe } from "./probes.ts";

/** True when a search for the probe's text finds it, attributed to the probe's own source entry. */
export type ProbeSearch = (probe: Probe) => boolean;

/** Pages of results a model would plausibly follow before giving up. */
const MAX_PAGES = 20;
/** Dropped probes checked per row; beyond this an even, deterministic sample is checked. */
export const MAX_CHECKED = 200;

/**
 * The recall index `buildTranscript(branch)` would build, rendered entry by entry. Every slot of `branch` is cleared
 * once its entry is rendered: when the caller holds the entries nowhere else, the session's parsed entries go as
 * their rendering arrives, instead of both being held at once.
 */
export function branchIndex(branch: (SessionEntry | undefined)[]): TranscriptIndex {
  const index = createTranscript();
  for (let pathPos = 0; pathPos < branch.length; pathPos++) {
    const entry = branch[pathPos] as SessionEntry;
    branch[pathPos] = undefined;
    if (index.pathPos.has(entry.id)) continue;
    index.pathPos.set(entry.id, pathPos);
    index.path.push(entry.id);
    const rendered = renderEntry(entry, pathPos);
    if (!rendered) continue;
    index.ordinalById.set(rendered.id, index.entries.length);
    index.entries.push(rendered);
    index.chars += rendered.text.length;
  }
  return index;
}

/** `context_grep` (literal) over the row's ledger, following cursors, looking for a hit in the source entry. */
export function contextGrepSearch(ledger: readonly SessionEntry[] | TranscriptIndex): ProbeSearch {
  const index = Array.isArray(ledger) ? buildTranscript(ledger) : (ledger as TranscriptIndex);
  return (probe) => {
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = grepTranscript(
        index,
        { pattern: probe.text, literal: true, ...(cursor ? { cursor } : {}) },
        DEFAULT_RECALL_LIMITS,
      );
      if (!result.ok) return false;
      if (result.details.matches.some((m) => m.entryId === probe.entryId)) return true;
      cursor = result.details.nextCursor;
      if (!cursor) return false;
    }
    return false;
  };
}

/** Evenly spread, deterministic sample. */
function sampleOf<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return items.slice();
  const step = items.length / count;
  return Array.from({ length: count }, (_, i) => items[Math.floor(i * step)]);
}

/** Share of `dropped` probes the search recovers with correct attribution (on a sample when there are many). */
export function recoverability(
  dropped: readonly Probe[],
  search: ProbeSearch,
): { found: number; dropped: number; checked: number; share: number } {
  const checked = sampleOf(dropped, MAX_CHECKED);
  let found = 0;
  for (const probe of checked) if (search(probe)) found++;
  return {
    found,
    dropped: dropped.length,
    checked: checked.length,
    share: checked.length ? found / checked.length : 1,
  };
}
