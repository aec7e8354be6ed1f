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

/**
 * Near-duplicate key: lines trimmed, blank lines dropped, digit runs masked (timings, counters, ids). The ranking never
 * builds it: it compares blocks by {@link keyHash} and, on equal hashes, by {@link KeyCursor}, which read the same
 * characters. This is the definition they follow.
 */
export function contentKey(lines: readonly TranscriptLine[], start: number, end: number): string {
  const parts: string[] = [];
  for (let i = start; i < end; i++) {
    if (lines[i].kind === "marker") continue;
    const line = normalized(lines[i].text);
    if (line) parts.push(line);
  }
  return parts.join("\n");
}

/** `\s` of a regular expression (what `trim` removes too), by character code. */
function isBlank(c: number): boolean {
  if (c <= 32) return c === 32 || (c >= 9 && c <= 13);
  if (c < 160) return false;
  return (
    c === 160 ||
    c === 5760 ||
    (c >= 8192 && c <= 8202) ||
    c === 8232 ||
    c === 8233 ||
    c === 8239 ||
    c === 8287 ||
    c === 12288 ||
    c === 65279
  );
}

/**
 * The characters of `contentKey(lines, start, end)`, one at a time, without building it: each line read as
 * `normalized` reads it (leading and trailing blanks dropped, a blank run one space, a digit run `#`), lines with
 * nothing left skipped, the others separated by a newline.
 */
export class KeyCursor {
  private line: number;
  private text = "";
  private at = 0;
  /** A character held back while the separator before it is given. */
  private held = -1;
  /** Something of the current line was given / a blank run is pending / the last character was a digit. */
  private started = false;
  private blank = false;
  private digits = false;
  /** Something of an earlier line was given: the next line's first character comes after a newline. */
  private any = false;

  private readonly lines: readonly TranscriptLine[];
  private readonly end: number;

  constructor(lines: readonly TranscriptLine[], start: number, end: number) {
    this.lines = lines;
    this.line = start - 1;
    this.end = end;
  }

  /** The next character code of the key, or -1 at its end. */
  next(): number {
    if (this.held >= 0) {
      const c = this.held;
      this.held = -1;
      return c;
    }
    for (;;) {
      if (this.at >= this.text.length) {
        do this.line++;
        while (this.line < this.end && this.lines[this.line].kind === "marker");
        if (this.line >= this.end) return -1;
        this.text = this.lines[this.line].text;
        this.at = 0;
        this.started = this.blank = this.digits = false;
        continue;
      }
      const c = this.text.charCodeAt(this.at++);
      if (isBlank(c)) {
        if (this.started) this.blank = true;
        this.digits = false;
        continue;
      }
      let out = c;
      if (c >= 48 && c <= 57) {
        if (this.digits) continue;
        out = 35;
        this.digits = true;
      } else this.digits = false;
      if (!this.started) {
        this.started = true;
        if (this.any) {
          this.held = out;
          return 10;
        }
        this.any = true;
        return out;
      }
      if (this.blank) {
        this.blank = false;
        this.held = out;
        return 32;
      }
      return out;
    }
  }
}

/** A 53-bit hash of a block's key (read through {@link KeyCursor}), or -1 when the key is empty. */
export function keyHash(lines: readonly TranscriptLine[], start: number, end: number): number {
  const cursor = new KeyCursor(lines, start, end);
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  let c = cursor.next();
  if (c < 0) return -1;
  for (; c >= 0; c = cursor.next()) {
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** True when two blocks have the same key, read character by character. */
function sameKey(a: KeyedBlock, b: KeyedBlock): boolean {
  const x = new KeyCursor(a.lines, a.start, a.end);
  const y = new KeyCursor(b.lines, b.start, b.end);
  for (;;) {
    const c = x.next();
    if (c !== y.next()) return false;
    if (c < 0) return true;
  }
}

/** A block of some transcript and the hash of its key. */
export interface KeyedBlock {
  lines: readonly TranscriptLine[];
  start: number;
  end: number;
  hash: number;
}

/** A set of block keys by hash: blocks whose hashes agree are told apart by their text (a hash is not a proof). */
export class KeySet {
  private readonly byHash = new Map<number, KeyedBlock[]>();

  /** Add a block's key; true when the set already held it. */
  add(block: KeyedBlock): boolean {
    const bucket = this.byHash.get(block.hash);
    if (!bucket) {
      this.byHash.set(block.hash, [block]);
      return false;
    }
    if (bucket.some((known) => sameKey(known, block))) return true;
    bucket.push(block);
    return false;
  }
}

/** A block's key hash and the line objects it was computed from. */
interface BlockKey {
  lines: readonly TranscriptLine[];
  hash: number;
}

/** Hashes by header line: a summary carries most blocks unchanged into the next region, where the same lines recur. */
const BLOCK_KEYS = new WeakMap<TranscriptLine, BlockKey>();

/** The block with its `keyHash`, hashed again only when the block's lines are not the ones it was hashed from. */
function keyed(lines: readonly TranscriptLine[], block: TranscriptBlock): KeyedBlock {
  const header = lines[block.at];
  const known = BLOCK_KEYS.get(header);
  const n = block.end - block.start;
  const { start, end } = block;
  if (known && known.lines.length === n) {
    let i = 0;
    while (i < n && known.lines[i] === lines[start + i]) i++;
    if (i === n) return { lines, start, end, hash: known.hash };
  }
  const hash = keyHash(lines, start, end);
  BLOCK_KEYS.set(header, { lines: lines.slice(start, end), hash });
  return { lines, start, end, hash };
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
  const laterKeys = new KeySet();
  const laterReads = new Set<string>();
  let newerListing = false;
  if (later) {
    for (const block of blocksOf(later.lines)) {
      const { header } = block;
      if (header.kind !== "toolResult" && header.kind !== "bashOutput") continue;
      const key = keyed(later.lines, block);
      if (key.hash >= 0) laterKeys.add(key);
      if (header.kind === "toolResult" && READ_TOOLS.has(header.tool) && header.key !== undefined && !header.error)
        laterReads.add(header.key);
      if (isListing(header)) newerListing = true;
    }
  }
  for (let i = results.length - 1; i >= 0; i--) {
    const block = results[i];
    const { header } = block;
    const size = charsOf(lines, block.start, block.end);
    const key = keyed(lines, block);
    if (key.hash >= 0 && laterKeys.add(key)) add(1, size, block.start, block.end);
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
  const claimed = new Uint8Array(lines.length);
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
    for (let i = c.start; i < c.end; i++) claimed[i] = 1;
  }
  return ranges;
}
