// The built-in planner of the `planned` strategy: a deterministic ranking of deletable line ranges, most
// deletable first, from what the transcript's headers say about each block. Pure: no I/O, no model.
import type { PlanRange } from "./apply.ts";
import { headerOf, isProtected, type Header, type TranscriptLine } from "./transcript.ts";

/** A header and the lines it owns (up to the next header; an image placeholder does not end a block). */
export interface TranscriptBlock {
  header: Header;
  /** 0-based index of the header line. */
  at: number;
  /** 0-based body lines [start, end). */
  start: number;
  end: number;
}

/** Split the transcript into blocks by its structure lines. Lines before the first header are skipped. */
export function blocksOf(lines: readonly TranscriptLine[]): TranscriptBlock[] {
  const blocks: TranscriptBlock[] = [];
  lines.forEach((line, i) => {
    if (line.kind !== "structure") return;
    const header = headerOf(line);
    if (!header) return;
    const last = blocks[blocks.length - 1];
    if (header.kind === "image" && last) return;
    if (last) last.end = i;
    blocks.push({ header, at: i, start: i + 1, end: lines.length });
  });
  // Each block's end is the next block's header; the last runs to the end.
  for (let i = 0; i < blocks.length - 1; i++) blocks[i].end = blocks[i + 1].at;
  return blocks;
}

const READ_TOOLS = new Set(["read", "read_file", "view", "cat", "open"]);
const LISTING_TOOLS = new Set(["ls", "list", "list_files", "find", "glob", "tree", "grep", "search"]);
const LISTING_COMMAND = /^\s*(?:cd\s+\S+\s*&&\s*)?(?:ls|find|tree|fd|rg\s+--files|git\s+(?:status|ls-files|log))\b/;

/** Tool outputs longer than this keep their head and tail only. */
const LONG_OUTPUT_LINES = 40;
const KEEP_HEAD = 12;
const KEEP_TAIL = 12;
/** Tool-call argument lines longer than this (file contents being written) are candidates. */
const LONG_ARGUMENT_CHARS = 600;

interface Candidate {
  /** Lower tiers are more deletable. */
  tier: number;
  /** Within a tier, larger weight goes first. */
  weight: number;
  start: number;
  end: number;
}

/**
 * A line as the near-duplicate key reads it: trimmed, each blank run one space, each digit run `#`. Most lines hold
 * no digit, no blank but single spaces and nothing to trim: one linear test finds them, and they are kept as they are.
 */
const NEEDS_NORMALIZING = /\d|\s\s|[^ \S]|^\s|\s$/;
export function normalized(text: string): string {
  return NEEDS_NORMALIZING.test(text) ? text.trim().replace(/\s+/g, " ").replace(/\d+/g, "#") : text;
}

/** Near-duplicate key: lines trimmed, blank lines dropped, digit runs masked (timings, counters, ids). */
function contentKey(lines: readonly TranscriptLine[], start: number, end: number): string {
  const parts: string[] = [];
  for (let i = start; i < end; i++) {
    if (lines[i].kind === "marker") continue;
    const line = normalized(lines[i].text);
    if (line) parts.push(line);
  }
  return parts.join("\n");
}

/** A block's key and the line objects it was computed from. */
interface BlockKey {
  lines: readonly TranscriptLine[];
  key: string;
}

/** Keys by header line: a summary carries most blocks unchanged into the next region, where the same lines recur. */
const BLOCK_KEYS = new WeakMap<TranscriptLine, BlockKey>();

/** `contentKey` of a block, computed again only when the block's lines are not the ones it was computed from. */
function blockKey(lines: readonly TranscriptLine[], block: TranscriptBlock): string {
  const header = lines[block.at];
  const known = BLOCK_KEYS.get(header);
  const n = block.end - block.start;
  if (known && known.lines.length === n) {
    let i = 0;
    while (i < n && known.lines[i] === lines[block.start + i]) i++;
    if (i === n) return known.key;
  }
  const key = contentKey(lines, block.start, block.end);
  BLOCK_KEYS.set(header, { lines: lines.slice(block.start, block.end), key });
  return key;
}

function charsOf(lines: readonly TranscriptLine[], start: number, end: number): number {
  let chars = 0;
  for (let i = start; i < end; i++) if (!isProtected(lines[i])) chars += lines[i].text.length + 1;
  return chars;
}

function isListing(header: Header): boolean {
  if (header.kind !== "toolResult") return false;
  if (LISTING_TOOLS.has(header.tool)) return true;
  return header.tool === "bash" && header.key !== undefined && LISTING_COMMAND.test(header.key);
}

/**
 * What the kept context after the region already shows (the messages Pi keeps verbatim, serialized the same way):
 * an output repeated there, a file read again there, or a newer listing there makes the region's copy deletable.
 */
export interface LaterContext {
  lines: readonly TranscriptLine[];
}

/**
 * Rank deletable ranges, most deletable first:
 * 0 thinking; 1 tool outputs repeated later (near-identical); 2 reads of a file read again later; 3 listings
 * older than the newest one; 4 the middle of long tool outputs (head and tail stay); 5 long tool-call
 * arguments; 6 remaining tool and `!` outputs, oldest first; 7 failed tool outputs, oldest first; 8 assistant
 * prose, oldest first, the newest kept. User text and earlier summaries are never proposed. Ranges never overlap.
 * `later` is what Pi keeps after the region: the newest copy of an output may be there.
 */
export function rankDeletions(lines: readonly TranscriptLine[], later?: LaterContext): PlanRange[] {
  const blocks = blocksOf(lines);
  const candidates: Candidate[] = [];
  const add = (tier: number, weight: number, start: number, end: number) => {
    if (end > start && charsOf(lines, start, end) > 0) candidates.push({ tier, weight, start, end });
  };

  const results = blocks.filter((b) => b.header.kind === "toolResult" || b.header.kind === "bashOutput");
  // Later outputs win: an output is a duplicate when a later one has the same key.
  const laterKeys = new Set<string>();
  const laterReads = new Set<string>();
  let newerListing = false;
  if (later) {
    for (const block of blocksOf(later.lines)) {
      const { header } = block;
      if (header.kind !== "toolResult" && header.kind !== "bashOutput") continue;
      const key = blockKey(later.lines, block);
      if (key) laterKeys.add(key);
      if (header.kind === "toolResult" && READ_TOOLS.has(header.tool) && header.key !== undefined && !header.error)
        laterReads.add(header.key);
      if (isListing(header)) newerListing = true;
    }
  }
  for (let i = results.length - 1; i >= 0; i--) {
    const block = results[i];
    const { header } = block;
    const size = charsOf(lines, block.start, block.end);
    const key = blockKey(lines, block);
    if (key && laterKeys.has(key)) add(1, size, block.start, block.end);
    if (key) laterKeys.add(key);
    if (header.kind === "toolResult" && READ_TOOLS.has(header.tool) && header.key !== undefined && !header.error) {
      if (laterReads.has(header.key)) add(2, size, block.start, block.end);
      laterReads.add(header.key);
    }
    if (isListing(header)) {
      if (newerListing) add(3, size, block.start, block.end);
      newerListing = true;
    }
    if (block.end - block.start > LONG_OUTPUT_LINES) add(4, size, block.start + KEEP_HEAD, block.end - KEEP_TAIL);
    const failed = header.kind === "toolResult" && header.error;
    // Oldest first inside the tier: a negative position sorts earlier lines first under "larger weight first".
    add(failed ? 7 : 6, -block.start, block.start, block.end);
  }

  const prose = blocks.filter((b) => b.header.kind === "assistant");
  prose.slice(0, -1).forEach((block) => add(8, -block.start, block.start, block.end));
  for (const block of blocks) {
    if (block.header.kind === "thinking") add(0, charsOf(lines, block.start, block.end), block.start, block.end);
    if (block.header.kind === "toolCall") {
      for (let i = block.start; i < block.end; i++)
        if (lines[i].kind === "text" && lines[i].text.length > LONG_ARGUMENT_CHARS)
          add(5, lines[i].text.length, i, i + 1);
    }
  }

  candidates.sort((a, b) => a.tier - b.tier || b.weight - a.weight || a.start - b.start);
  // Claim lines in rank order so later candidates only propose what is still free.
  const claimed = new Array<boolean>(lines.length).fill(false);
  const ranges: PlanRange[] = [];
  for (const c of candidates) {
    let from = -1;
    for (let i = c.start; i <= c.end; i++) {
      const free = i < c.end && !claimed[i];
      if (free && from < 0) from = i;
      if (!free && from >= 0) {
        ranges.push({ from: from + 1, to: i });
        from = -1;
      }
    }
    for (let i = c.start; i < c.end; i++) claimed[i] = true;
  }
  return ranges;
}
