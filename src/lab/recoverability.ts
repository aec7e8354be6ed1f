// Recoverability: of the probes a row's view lost, how many the package's `context_grep` search finds in the
// ledger, attributed to the entry the probe came from. The ledger keeps every entry, so a loss in the view
// need not be a loss. Uses the recall module's own index and grep, exactly as the tool does.
import type { SessionEntry } from "../log/entries.ts";
import { grepTranscript } from "../recall/search.ts";
import { DEFAULT_RECALL_LIMITS } from "../recall/settings.ts";
import { buildTranscript, createTranscript, renderEntry, type TranscriptEntry, type TranscriptIndex } from "../recall/transcript.ts";
import type { Probe } from "./probes.ts";

/** True when a search for the probe's text finds it, attributed to the probe's own source entry. */
export type ProbeSearch = (probe: Probe) => boolean;

/** Pages of results a model would plausibly follow before giving up. */
const MAX_PAGES = 20;
/** Dropped probes checked per row; beyond this an even, deterministic sample is checked. */
export const MAX_CHECKED = 200;

/** The recall index of the replayed branch, rendered once per session and shared by every row's ledger index. */
export interface SourceIndex {
  branch: readonly SessionEntry[];
  /** Rendering of `branch[i]` (undefined for entries that render nothing). */
  rendered: (TranscriptEntry | undefined)[];
}

/** Render the replayed branch once. */
export function sourceIndex(branch: readonly SessionEntry[]): SourceIndex {
  return { branch, rendered: branch.map((entry, i) => renderEntry(entry, i)) };
}

/** True when `stored` is `source` as a row keeps it: the same object, or a copy re-parented after a fact. */
function isSourceCopy(stored: SessionEntry, source: SessionEntry | undefined): boolean {
  if (!source || stored.id !== source.id) return false;
  if (stored === source) return true;
  const a = stored as unknown as Record<string, unknown>;
  const b = source as unknown as Record<string, unknown>;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => key === "parentId" || a[key] === b[key]);
}

/**
 * The index `buildTranscript(ledger)` would build, reusing the source renderings: a row's ledger is the
 * replayed branch (rendering ignores parent ids) with the row's facts in between, so only facts are rendered.
 * Slots of `ledger` are cleared as they are read, so each fact's own text can go once it is rendered.
 */
export function ledgerIndex(source: SourceIndex, ledger: (SessionEntry | undefined)[]): TranscriptIndex {
  const index = createTranscript();
  let next = 0;
  for (let pathPos = 0; pathPos < ledger.length; pathPos++) {
    const entry = ledger[pathPos] as SessionEntry;
    ledger[pathPos] = undefined;
    if (index.pathPos.has(entry.id)) continue;
    index.pathPos.set(entry.id, pathPos);
    index.path.push(entry.id);
    let rendered: TranscriptEntry | undefined;
    if (isSourceCopy(entry, source.branch[next])) {
      const shared = source.rendered[next++];
      rendered = shared && shared.pathPos !== pathPos ? { ...shared, pathPos } : shared;
    } else rendered = renderEntry(entry, pathPos);
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
      const result = grepTranscript(index, { pattern: probe.text, literal: true, ...(cursor ? { cursor } : {}) }, DEFAULT_RECALL_LIMITS);
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
export function recoverability(dropped: readonly Probe[], search: ProbeSearch): { found: number; dropped: number; checked: number; share: number } {
  const checked = sampleOf(dropped, MAX_CHECKED);
  let found = 0;
  for (const probe of checked) if (search(probe)) found++;
  return { found, dropped: dropped.length, checked: checked.length, share: checked.length ? found / checked.length : 1 };
}
