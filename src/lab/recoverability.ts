// Recoverability: of the probes a row's view lost, how many the package's `context_grep` search finds in the
// ledger, attributed to the entry the probe came from. The ledger keeps every entry, so a loss in the view
// need not be a loss. Uses the recall module's own index and grep, exactly as the tool does.
import type { SessionEntry } from "../log/entries.ts";
import { foldCase, MAX_LITERAL_LENGTH } from "../recall/regex.ts";
import { foldedText, grepTranscript } from "../recall/search.ts";
import { DEFAULT_RECALL_LIMITS } from "../recall/settings.ts";
import {
  buildTranscript,
  createTranscript,
  isRecallTraffic,
  lineAt,
  lineCount,
  renderEntry,
  type TranscriptEntry,
  type TranscriptIndex,
} from "../recall/transcript.ts";
import { Finder, VIEW_TEXT } from "./finder.ts";
import { spillRenderedEntry } from "./source-texts.ts";
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
export function branchIndex(
  branch: (SessionEntry | undefined)[],
  onRendered?: (index: TranscriptIndex) => void,
): TranscriptIndex {
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
    onRendered?.(index);
  }
  return index;
}

/**
 * Matching lines the grep reports in `entry` for folded exact text `needle`, counted up to `most`: one per line an
 * occurrence starts on, recall traffic skipped, as the literal scan of `scanIndex` finds them.
 */
function reportedLines(entry: TranscriptEntry, needle: string, most: number): number {
  const text = foldedText(entry);
  const lines = lineCount(entry);
  let count = 0;
  for (let from = 0; count < most; ) {
    const at = text.indexOf(needle, from);
    if (at < 0) break;
    const line = lineAt(entry, at);
    if (!isRecallTraffic(entry, line)) count++;
    if (line + 1 >= lines) break;
    from = entry.lineStarts[line + 1];
  }
  return count;
}

/**
 * `context_grep` (literal) over the row's ledger, following cursors, looking for a hit in the source entry.
 *
 * The answer is settled without paging where the pages' rules decide it: every page holds at least one matching
 * line and pages follow each other without skipping one, so the probe's entry is found when its first match is among
 * the first MAX_PAGES matching lines of the branch, and never when it has no match of its own. Only a probe with
 * that many matches before its entry is searched page by page. A literal scan is one unit of work per character, so
 * an index below the scan limit never ends a page early.
 */
export function contextGrepSearch(ledger: readonly SessionEntry[] | TranscriptIndex): ProbeSearch {
  const index = Array.isArray(ledger) ? buildTranscript(ledger) : (ledger as TranscriptIndex);
  const settles = index.chars < DEFAULT_RECALL_LIMITS.maxScanWork;
  return (probe) => {
    const ordinal = index.ordinalById.get(probe.entryId);
    if (ordinal === undefined || !probe.text || probe.text.length > MAX_LITERAL_LENGTH) return false;
    if (settles) {
      const needle = foldCase(probe.text);
      if (reportedLines(index.entries[ordinal], needle, 1) === 0) return false;
      let before = 0;
      for (let k = 0; k < ordinal && before < MAX_PAGES; k++)
        before += reportedLines(index.entries[k], needle, MAX_PAGES - before);
      if (before < MAX_PAGES) return true;
    }
    return pagedSearch(index, probe);
  };
}

/** A search that answers for a known list of probes from one pass over the index (see {@link batchedSearch}). */
export interface BatchedSearch extends ProbeSearch {
  /** Characters of the index the pass read. */
  readonly scanned: number;
}

/**
 * {@link contextGrepSearch} for the probes of `asked`, settled together: one many-pattern pass over the index, in
 * entry order, counts for every probe text the lines it is reported on, so each probe's answer (its entry matches,
 * and fewer than MAX_PAGES matching lines come before it) is read off as the pass reaches its entry. Searching the
 * probes one by one read the index up to each probe's entry again for every probe text that was rare. A probe not
 * asked, or one the pages' rules do not settle, is searched as contextGrepSearch does.
 */
export function batchedSearch(index: TranscriptIndex, asked: readonly Probe[]): BatchedSearch {
  const pass = new BatchedPass(asked);
  for (let k = 0; k < index.entries.length && pass.open; k++) pass.visit(index, k);
  return pass.finish(index);
}

/**
 * {@link batchedSearch} over `branchIndex(branch)`, run while the index is built: each entry is searched as it is
 * rendered, then its text moves to the spill file, so the rendered session is never in memory whole. Reading a
 * spilled text (the rare probe paged through, a probe not asked) reads it back.
 */
export function indexedSearch(branch: (SessionEntry | undefined)[], asked: readonly Probe[]): BatchedSearch {
  const pass = new BatchedPass(asked);
  const index = branchIndex(branch, (partial) => {
    const k = partial.entries.length - 1;
    if (pass.open) pass.visit(partial, k);
    spillRenderedEntry(partial.entries[k]);
  });
  return pass.finish(index);
}

/** One probe asked of a {@link BatchedPass}, and its needle (its folded text's number). */
interface Query {
  probe: Probe;
  key: string;
  needle: number;
  /** Reported lines of the needle before the probe's entry, up to MAX_PAGES (set when the pass reaches it). */
  before: number;
}

const keyOf = (probe: Probe) => `${probe.entryId}\u0000${probe.text}`;

/** The one pass of {@link batchedSearch}: entries are visited in index order, each once. */
class BatchedPass {
  private readonly answers = new Map<string, boolean>();
  /** Queries per entry id, in the order asked. */
  private readonly byEntry = new Map<string, Query[]>();
  /** Queries the pages' rules leave open at their entry: paged through once the index is whole. */
  private readonly paged: Query[] = [];
  private readonly needles: string[];
  private readonly finder: Finder;
  /** Reported lines of each needle in the entries passed so far, up to MAX_PAGES. */
  private readonly before: Int32Array;
  /** Reported lines in the current entry, and the line last seen (valid when `entryOf` is the current entry). */
  private readonly own: Int32Array;
  private readonly lastLine: Int32Array;
  private readonly entryOf: Int32Array;
  /** Queries whose entry the pass has not reached yet. */
  private remaining = 0;

  constructor(asked: readonly Probe[]) {
    const needleIds = new Map<string, number>();
    for (const probe of asked) {
      const key = keyOf(probe);
      if (this.answers.has(key)) continue;
      // Settled when the pass reaches the probe's entry; false if it never does (no entry renders that id).
      this.answers.set(key, false);
      if (!probe.text || probe.text.length > MAX_LITERAL_LENGTH) continue;
      const folded = foldCase(probe.text);
      let needle = needleIds.get(folded);
      if (needle === undefined) needleIds.set(folded, (needle = needleIds.size));
      const query: Query = { probe, key, needle, before: 0 };
      const list = this.byEntry.get(probe.entryId);
      if (list) list.push(query);
      else this.byEntry.set(probe.entryId, [query]);
      this.remaining++;
    }
    this.needles = [...needleIds.keys()];
    // Every occurrence counts here, so the needles are held whole (a scan reports each one); they are at most
    // MAX_LITERAL_LENGTH characters, as context_grep's literals are.
    this.finder = new Finder(this.needles, VIEW_TEXT, { anchorChars: Number.POSITIVE_INFINITY });
    this.before = new Int32Array(this.needles.length);
    this.own = new Int32Array(this.needles.length);
    this.lastLine = new Int32Array(this.needles.length);
    this.entryOf = new Int32Array(this.needles.length).fill(-1);
  }

  /** False once every query's entry has been passed: later entries change no answer. */
  get open(): boolean {
    return this.remaining > 0;
  }

  /** Search entry `k` of `index` (the entries before it were visited). */
  visit(index: TranscriptIndex, k: number): void {
    const entry = index.entries[k];
    const queries = this.byEntry.get(entry.id);
    if (queries) for (const query of queries) query.before = this.before[query.needle];
    const { needles, before, own, lastLine, entryOf } = this;
    // Folded here, not through the recall module's memo: the pass reads each entry once, and a memo would hold a
    // folded copy of the whole session next to the index.
    this.finder.scan(foldCase(entry.text), (needle, end) => {
      // A line is reported once however many occurrences start on it, and recall traffic not at all.
      const line = lineAt(entry, end - needles[needle].length);
      if (entryOf[needle] === k && lastLine[needle] === line) return;
      if (entryOf[needle] !== k) {
        entryOf[needle] = k;
        own[needle] = 0;
      }
      lastLine[needle] = line;
      if (isRecallTraffic(entry, line)) return;
      own[needle]++;
      if (before[needle] < MAX_PAGES) before[needle]++;
    });
    if (!queries) return;
    this.byEntry.delete(entry.id);
    this.remaining -= queries.length;
    for (const query of queries) {
      const matches = entryOf[query.needle] === k && own[query.needle] > 0;
      if (!matches) continue;
      if (query.before < MAX_PAGES) this.answers.set(query.key, true);
      else this.paged.push(query);
    }
  }

  /** The search, once `index` is whole: the queries left open are paged through; a probe not asked is searched alone. */
  finish(index: TranscriptIndex): BatchedSearch {
    const single = contextGrepSearch(index);
    // A scan limit the index reaches can end a page early: then only paging answers.
    const settled = index.chars < DEFAULT_RECALL_LIMITS.maxScanWork;
    if (!settled) this.answers.clear();
    else for (const { probe, key } of this.paged) this.answers.set(key, pagedSearch(index, probe));
    const answers = this.answers;
    const search = (probe: Probe): boolean => {
      const key = keyOf(probe);
      let found = answers.get(key);
      if (found === undefined) answers.set(key, (found = single(probe)));
      return found;
    };
    return Object.assign(search, {
      scanned: settled ? this.finder.searched : 0,
    });
  }
}

/** The search as a model makes it: page after page of `context_grep`, up to MAX_PAGES, for a hit in the entry. */
export function pagedSearch(index: TranscriptIndex, probe: Probe): boolean {
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
}

/** Evenly spread, deterministic sample. */
function sampleOf<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return items.slice();
  const step = items.length / count;
  return Array.from({ length: count }, (_, i) => items[Math.floor(i * step)]);
}

/** The dropped probes {@link recoverability} searches for: all of them, or an even sample of MAX_CHECKED. */
export function checkedProbes(dropped: readonly Probe[]): Probe[] {
  return sampleOf(dropped, MAX_CHECKED);
}

/** Share of `dropped` probes the search recovers with correct attribution (on a sample when there are many). */
export function recoverability(
  dropped: readonly Probe[],
  search: ProbeSearch,
): { found: number; dropped: number; checked: number; share: number } {
  const checked = checkedProbes(dropped);
  let found = 0;
  for (const probe of checked) if (search(probe)) found++;
  return {
    found,
    dropped: dropped.length,
    checked: checked.length,
    share: checked.length ? found / checked.length : 1,
  };
}
