// Many-pattern substring search (Aho-Corasick) with a two-level memo: which of the lab's patterns (probe texts,
// needed items) a message holds is computed once per message object, and once per distinct text, so checking a
// view costs one pass over its messages instead of one text search per pattern, and a message a projection
// rebuilds with the same text (a summary, a digest, a folded stub, a masked output) is not searched again.
// Deterministic; no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { ownCopy } from "../log/own-copy.ts";
import { viewText } from "./probes.ts";
import type { ViewObserver } from "./view.ts";

/** Finds which of a fixed set of patterns occur in a text. */
export class Finder {
  /**
   * Transitions, once built: the children of node n are at [childStart[n], childStart[n + 1]) of `childCode` (UTF-16
   * code units, ascending) and `childNode`. Typed arrays take a few bytes per node where a map of the trie's edges
   * took tens, and a long session's probes and items make hundreds of thousands of nodes.
   */
  private childStart: Int32Array = new Int32Array(1);
  private childCode: Uint16Array = new Uint16Array(0);
  private childNode: Int32Array = new Int32Array(0);
  /** Root transitions by code unit, for speed on the most frequent lookups. */
  private readonly rootNext = new Int32Array(65536);
  private fail: Int32Array = new Int32Array(0);
  /** Pattern ending at each node (-1 for none), and the nearest node on the fail chain that ends one. */
  private ends: Int32Array = new Int32Array(0);
  /**
   * The anchor group ending at each node (-1 for none; absent when no pattern is long). A long pattern is in the trie
   * by its first characters only (see {@link planAnchors}); where they occur, the whole pattern is checked by hash.
   */
  private anchorAt: Int32Array | undefined;
  /** Per anchor group: its anchor's length and its patterns' ids. */
  private readonly groupLength: number[] = [];
  private readonly groupIds: number[][] = [];
  /** Per long pattern id: its text, its two hashes and the radix to its length modulo each prime (see {@link windowHash}). */
  private readonly longText = new Map<number, string>();
  private longHash1 = new Int32Array(0);
  private longHash2 = new Int32Array(0);
  private longPow1 = new Int32Array(0);
  private longPow2 = new Int32Array(0);
  /** Further ids of a long pattern's identical copies. */
  private readonly longDuplicates = new Map<number, number[]>();
  /** The text under search, and its prefix hashes once an anchor occurred in it ({@link hashText}). */
  private text = "";
  private hashed = false;
  private prefix1 = new Int32Array(1);
  private prefix2 = new Int32Array(1);
  /** Anchor checks made (one per long pattern at an anchor's occurrence), plus characters compared on a hash match. */
  checks = 0;
  /** Nodes of the trie (the root included). */
  get nodes(): number {
    return this.ends.length;
  }
  private outLink: Int32Array = new Int32Array(0);
  /** The first node of a node's output chain: itself when a pattern ends there, else its out link (-1 for none). */
  private firstOut: Int32Array = new Int32Array(0);
  private readonly seen: Uint32Array;
  private stamp = 0;
  /**
   * Per message object, the offset in `pool` of its ids: sorted, as LEB128 deltas after their count. One shared
   * byte pool rather than an array per message: a long session's messages hold millions of pattern hits, and an
   * item's hits cluster (it first appears next to its neighbours in id order), so most deltas take one byte.
   */
  private readonly memo = new WeakMap<object, number>();
  /**
   * Second level of the memo, by the message's key text: pool offsets of the texts searched lately. Objects rebuilt by
   * a projection miss the first level every time, but their texts repeat from one projection to the next. Bounded
   * (see {@link TextMemo}), so a long session's texts are not all kept.
   */
  private readonly byText: TextMemo[];
  /**
   * Between the two, per variant: the offsets by the object a message's text is made of alone (its content array),
   * which a rebuilt message often shares with the one it replaces. Its key is then neither built nor looked up, and
   * a long output moved out of memory is not read back to build it.
   */
  private readonly byHolder: WeakMap<object, number>[];
  /**
   * Third level, for long texts: pool offsets of the chunks of lines searched lately. A projection's new summary or
   * checkpoint is mostly lines an earlier one had (a long session's compactions rewrite the same history again and
   * again), and a pattern without a line break occurs in a text exactly when it occurs in one of its lines.
   */
  private readonly byChunk: TextMemo;
  private readonly chunkBits: number;
  private readonly maxChunkChars: number;
  /** Length from which a text is searched line by line (infinite for the spanning patterns' own finder). */
  private readonly lineWiseChars: number;
  /** The patterns with a line break, searched in a long text as a whole (often none), and their ids here. */
  private readonly spanning: Finder | undefined;
  private readonly spanningIds: Int32Array;
  /** Marks for the union of a long text's lines (apart from `seen`, which each line's search uses). */
  private readonly united: Uint32Array;
  private unionStamp = 0;
  /** The union's ids, as they are found. */
  private readonly unionIds: Uint32Array;
  /** Characters searched so far (the work the memo saves is what this does not count). */
  searched = 0;
  private pool = new Uint8Array(1 << 16);
  private used = 0;
  readonly size: number;
  /** What is searched in a message (by default all of its text, as a view shows it). */
  private readonly source: MessageText;

  /**
   * `patterns[i]` gets id i; an empty pattern never matches. Duplicates share the first id's node. `source` says what
   * is searched in a message (default: its whole text as a view shows it); `tuning` sizes the memo.
   */
  constructor(patterns: readonly string[], source: MessageText = VIEW_TEXT, tuning: Partial<FinderTuning> = {}) {
    const { memoChars, lineWiseChars, chunkBits, maxChunkChars, anchorChars, anchorGroup } = {
      ...DEFAULT_TUNING,
      ...tuning,
    };
    this.chunkBits = chunkBits;
    this.maxChunkChars = maxChunkChars;
    this.size = patterns.length;
    this.source = source;
    this.byText = Array.from({ length: source.variants ?? 1 }, () => new TextMemo(memoChars));
    this.byHolder = Array.from({ length: source.variants ?? 1 }, () => new WeakMap());
    this.byChunk = new TextMemo(memoChars);
    this.lineWiseChars = lineWiseChars;
    const spanning =
      lineWiseChars < Number.POSITIVE_INFINITY ? patterns.flatMap((p, id) => (p.includes("\n") ? [id] : [])) : [];
    this.spanningIds = Int32Array.from(spanning);
    this.spanning = spanning.length
      ? new Finder(
          spanning.map((id) => patterns[id]),
          source,
          { memoChars: 0, lineWiseChars: Number.POSITIVE_INFINITY, anchorChars, anchorGroup },
        )
      : undefined;
    this.united = new Uint32Array(patterns.length);
    this.unionIds = new Uint32Array(patterns.length);
    this.seen = new Uint32Array(patterns.length);
    this.scratch = new Uint32Array(patterns.length);
    this.decoded = new Uint32Array(patterns.length);
    this.duplicates = [];
    this.layOut(patterns, anchorChars, anchorGroup);
    this.build(this.ends.length);
  }

  /**
   * The trie of `patterns`, laid out as sorted runs per node (see `childStart`), with `ends` and `duplicates`. The
   * distinct patterns are sorted by code unit and inserted in that order, each sharing with the one before it the
   * longest common prefix: a node's children are then made in ascending order of their code unit, and one counting
   * pass by parent gives every node its sorted run. No map of edges is needed (on the shared sessions, building the
   * trie through one took a twelfth of the lab's CPU).
   */
  private layOut(patterns: readonly string[], anchorChars: number, anchorGroup: number): void {
    const firstId = new Map<string, number>();
    const repeated: number[] = [];
    patterns.forEach((pattern, id) => {
      if (!pattern) return;
      if (firstId.has(pattern)) repeated.push(id);
      else firstId.set(pattern, id);
    });
    const long: number[] = [];
    for (const id of firstId.values()) if (patterns[id].length > anchorChars) long.push(id);
    const { groups, whole } = planAnchors(patterns, long, anchorChars, anchorGroup);
    // The trie's keys: the patterns it holds whole, and the anchors. A key can be both.
    const keys = new Map<string, { id: number; group: number }>();
    const wholeIds = new Set(whole);
    for (const [pattern, id] of firstId)
      if (pattern.length <= anchorChars || wholeIds.has(id)) keys.set(pattern, { id, group: -1 });
    for (const [group, { length, ids }] of groups.entries()) {
      const anchor = patterns[ids[0]].slice(0, length);
      const key = keys.get(anchor);
      if (key) key.group = group;
      else keys.set(anchor, { id: -1, group });
      this.groupLength.push(length);
      this.groupIds.push(ids);
    }
    if (groups.length) this.prepareLong(patterns, groups);
    let chars = 0;
    for (const key of keys.keys()) chars += key.length;
    // Code-unit order, the default sort's for strings.
    const sorted = [...keys.keys()].sort();
    const parentOf = new Int32Array(chars + 1);
    const codeOf = new Uint16Array(chars + 1);
    const ends = new Int32Array(chars + 1).fill(-1);
    const anchorAt = groups.length ? new Int32Array(chars + 1).fill(-1) : undefined;
    const nodeOf = new Map<string, number>();
    // The path of the pattern inserted last: path[d] is its node at depth d (the root at 0).
    const path = new Int32Array(sorted.reduce((longest, p) => Math.max(longest, p.length), 0) + 1);
    let nodes = 1;
    let previous = "";
    for (const pattern of sorted) {
      let shared = 0;
      const limit = Math.min(previous.length, pattern.length);
      while (shared < limit && previous.charCodeAt(shared) === pattern.charCodeAt(shared)) shared++;
      for (let depth = shared; depth < pattern.length; depth++) {
        parentOf[nodes] = path[depth];
        codeOf[nodes] = pattern.charCodeAt(depth);
        path[depth + 1] = nodes++;
      }
      const node = path[pattern.length];
      const key = keys.get(pattern) as { id: number; group: number };
      ends[node] = key.id;
      if (anchorAt) anchorAt[node] = key.group;
      nodeOf.set(pattern, node);
      previous = pattern;
    }
    // Ids after the first of an identical pattern, in ascending order.
    for (const id of repeated) {
      const first = firstId.get(patterns[id]) as number;
      if (this.longText.has(first)) {
        let list = this.longDuplicates.get(first);
        if (!list) this.longDuplicates.set(first, (list = []));
        list.push(id);
      } else (this.duplicates[nodeOf.get(patterns[id]) as number] ??= []).push(id);
    }
    const start = new Int32Array(nodes + 1);
    for (let n = 1; n < nodes; n++) start[parentOf[n] + 1]++;
    for (let n = 0; n < nodes; n++) start[n + 1] += start[n];
    const fill = start.slice(0, nodes);
    const codes = new Uint16Array(nodes - 1);
    const children = new Int32Array(nodes - 1);
    for (let n = 1; n < nodes; n++) {
      const at = fill[parentOf[n]]++;
      codes[at] = codeOf[n];
      children[at] = n;
    }
    this.ends = ends.slice(0, nodes);
    this.anchorAt = anchorAt?.slice(0, nodes);
    this.childStart = start;
    this.childCode = codes;
    this.childNode = children;
    for (let i = start[0]; i < start[1]; i++) this.rootNext[codes[i]] = children[i];
  }

  /** The texts and hashes of the patterns checked by hash (those of the anchor groups). */
  private prepareLong(patterns: readonly string[], groups: readonly AnchorGroup[]): void {
    const size = patterns.length;
    this.longHash1 = new Int32Array(size);
    this.longHash2 = new Int32Array(size);
    this.longPow1 = new Int32Array(size);
    this.longPow2 = new Int32Array(size);
    for (const { ids } of groups) {
      for (const id of ids) {
        const pattern = patterns[id];
        this.longText.set(id, pattern);
        [this.longHash1[id], this.longHash2[id]] = rollingHashes(pattern);
        let p1 = 1;
        let p2 = 1;
        for (let i = 0; i < pattern.length; i++) {
          p1 = (p1 * RADIX1) % PRIME1;
          p2 = (p2 * RADIX2) % PRIME2;
        }
        this.longPow1[id] = p1;
        this.longPow2[id] = p2;
      }
    }
  }

  /** Prefix hashes of the text under search, made once an anchor occurs in it: any window's hash is then two lookups. */
  private hashText(): void {
    const { text } = this;
    if (this.prefix1.length < text.length + 1) {
      this.prefix1 = new Int32Array(text.length + 1);
      this.prefix2 = new Int32Array(text.length + 1);
    }
    rollingHashes(text, this.prefix1, this.prefix2);
    this.hashed = true;
  }

  /**
   * The anchor of group `group` ends just before `end` in the text under search: add each of its patterns that starts
   * there. A pattern is compared character by character only when both hashes of the window match, so a text where
   * an anchor occurs everywhere and its patterns nowhere costs a few lookups per occurrence, not a comparison each.
   */
  private verify(group: number, end: number): void {
    const { text, seen, stamp } = this;
    const start = end - this.groupLength[group];
    for (const id of this.groupIds[group]) {
      if (seen[id] === stamp) continue;
      const pattern = this.longText.get(id) as string;
      const stop = start + pattern.length;
      if (stop > text.length) continue;
      this.checks++;
      if (!this.hashed) this.hashText();
      if (windowHash(this.prefix1, start, stop, this.longPow1[id], PRIME1) !== this.longHash1[id]) continue;
      if (windowHash(this.prefix2, start, stop, this.longPow2[id], PRIME2) !== this.longHash2[id]) continue;
      this.checks += pattern.length;
      if (!text.startsWith(pattern, start)) continue;
      seen[id] = stamp;
      this.scratch[this.collected++] = id;
      const dups = this.longDuplicates.get(id);
      if (dups) for (const dup of dups) this.scratch[this.collected++] = dup;
    }
  }

  /** Further pattern ids that end at a node (identical patterns). */
  private readonly duplicates: number[][];

  private build(nodes: number): void {
    this.fail = new Int32Array(nodes);
    this.outLink = new Int32Array(nodes).fill(-1);
    // Breadth-first: a node's fail link is the longest proper suffix that is also a trie path.
    const queue = new Int32Array(nodes);
    let tail = 0;
    for (let i = this.childStart[0]; i < this.childStart[1]; i++) queue[tail++] = this.childNode[i];
    for (let head = 0; head < tail; head++) {
      const node = queue[head];
      for (let i = this.childStart[node]; i < this.childStart[node + 1]; i++) {
        const code = this.childCode[i];
        const child = this.childNode[i];
        let f = this.fail[node];
        let target = this.step(f, code);
        while (target === -1 && f !== 0) {
          f = this.fail[f];
          target = this.step(f, code);
        }
        this.fail[child] = target === -1 || target === child ? 0 : target;
        const failNode = this.fail[child];
        this.outLink[child] = this.outputs(failNode) ? failNode : this.outLink[failNode];
        queue[tail++] = child;
      }
    }
    this.firstOut = new Int32Array(nodes);
    for (let n = 0; n < nodes; n++) this.firstOut[n] = this.outputs(n) ? n : this.outLink[n];
  }

  /** True when a pattern or an anchor ends at `node`. */
  private outputs(node: number): boolean {
    return this.ends[node] !== -1 || (this.anchorAt !== undefined && this.anchorAt[node] !== -1);
  }

  /** Transition from `node` on `code`, or -1 (the root never fails: it stays at 0). */
  private step(node: number, code: number): number {
    if (node === 0) return this.rootNext[code];
    let low = this.childStart[node];
    let high = this.childStart[node + 1];
    while (low < high) {
      const mid = (low + high) >>> 1;
      const at = this.childCode[mid];
      if (at === code) return this.childNode[mid];
      if (at < code) low = mid + 1;
      else high = mid;
    }
    return -1;
  }

  /** Ids of the patterns occurring in `text`, each once. */
  find(text: string): Uint32Array {
    return this.scratch.slice(0, this.collect(text));
  }

  /**
   * The ids {@link find} gives, written to `scratch` (each pattern once, so they fit); returns how many. One buffer and
   * one output function for every search: a long session searches tens of thousands of texts.
   */
  private collect(text: string): number {
    if (++this.stamp === 0xffffffff) {
      this.seen.fill(0);
      this.stamp = 1;
    }
    this.collected = 0;
    this.text = text;
    this.hashed = false;
    this.walk(text, this.note);
    this.text = "";
    // A very long text's prefix hashes are not kept for the next search.
    if (this.prefix1.length > MAX_KEPT_PREFIX) {
      this.prefix1 = new Int32Array(1);
      this.prefix2 = new Int32Array(1);
    }
    return this.collected;
  }

  /** Ids written to `scratch` by the search under way, and the search's output (see {@link collect}). */
  private collected = 0;
  private readonly scratch: Uint32Array;
  private readonly note = (node: number, end: number): void => {
    const { ends, outLink, seen, firstOut, stamp, scratch, anchorAt } = this;
    for (let n = firstOut[node]; n !== -1; n = outLink[n]) {
      const id = ends[n];
      if (id !== -1 && seen[id] !== stamp) {
        seen[id] = stamp;
        scratch[this.collected++] = id;
        const dups = this.duplicates[n];
        if (dups) for (const dup of dups) scratch[this.collected++] = dup;
      }
      if (anchorAt !== undefined && anchorAt[n] !== -1) this.verify(anchorAt[n], end);
    }
  };

  /**
   * Every occurrence in `text` of every pattern, in order of where it ends: `each(id, end)` with `end` the index just
   * past it. Identical patterns are reported under the first one's id.
   */
  scan(text: string, each: (id: number, end: number) => void): void {
    // Every occurrence of a long pattern would be a comparison each: a finder that scans holds its patterns whole.
    if (this.anchorAt)
      throw new Error("a finder with anchored patterns cannot scan: make it with anchorChars Infinity");
    const { ends, outLink, firstOut } = this;
    this.walk(text, (node, end) => {
      for (let n = firstOut[node]; n !== -1; n = outLink[n]) each(ends[n], end);
    });
  }

  /**
   * The automaton over `text`: `output(node, end)` at every position just past which some pattern ends, with the node
   * reached there. Transitions are looked up inline, and a position where no pattern ends costs no call: most of a
   * long text is such positions.
   */
  private walk(text: string, output: (node: number, end: number) => void): void {
    this.searched += text.length;
    const { rootNext, childStart, childCode, childNode, fail, firstOut } = this;
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      for (;;) {
        if (node === 0) {
          node = rootNext[code];
          break;
        }
        let low = childStart[node];
        let high = childStart[node + 1];
        let target = -1;
        while (low < high) {
          const mid = (low + high) >>> 1;
          const at = childCode[mid];
          if (at === code) {
            target = childNode[mid];
            break;
          }
          if (at < code) low = mid + 1;
          else high = mid;
        }
        if (target !== -1) {
          node = target;
          break;
        }
        node = fail[node];
      }
      if (firstOut[node] !== -1) output(node, i + 1);
    }
  }

  private write(value: number): void {
    let v = value;
    while (v >= 0x80) {
      this.pool[this.used++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.pool[this.used++] = v;
  }

  /** Offset in `pool` of the ids of the patterns a message holds: the object's, else its text's, else searched now. */
  private offsetOf(message: AgentMessage): number {
    let offset = this.memo.get(message);
    if (offset === undefined) {
      const variant = this.source.variant?.(message) ?? 0;
      const holder = this.source.holder?.(message);
      offset = holder === undefined ? undefined : this.byHolder[variant].get(holder);
      if (offset === undefined) {
        const key = this.source.key(message);
        const byText = this.byText[variant];
        offset = byText.get(key);
        if (offset === undefined) {
          offset = this.storeFound(this.source.text(key, variant), LINE_WISE_ROLES.has(message.role));
          byText.set(key, offset);
        }
        if (holder !== undefined) this.byHolder[variant].set(holder, offset);
      }
      this.memo.set(message, offset);
    }
    return offset;
  }

  /**
   * The ids of the patterns in a text, sorted, stored in the pool: searched whole, or line by line with the line memo
   * when the text is long and `lineWise` (a summary's). Returns their offset.
   */
  private storeFound(text: string, lineWise: boolean): number {
    if (!lineWise || text.length < this.lineWiseChars) return this.store(this.scratch, this.collect(text));
    if (++this.unionStamp === 0xffffffff) {
      this.united.fill(0);
      this.unionStamp = 1;
    }
    const stamp = this.unionStamp;
    const { united, unionIds } = this;
    let found = 0;
    // Lines are grouped into chunks whose ends depend on the lengths of the lines there, not on where the text
    // starts: two texts that share a run of lines cut it into the same chunks, apart from the run's edges.
    let chunkStart = 0;
    let previous = 0;
    for (let start = 0; start <= text.length; ) {
      let end = text.indexOf("\n", start);
      if (end < 0) end = text.length;
      const length = end - start;
      const mixed = Math.imul(length + 1, 0x9e3779b1) ^ Math.imul(previous + 1, 0x85ebca6b);
      previous = length;
      start = end + 1;
      if (start <= text.length && mixed >>> this.chunkBits !== 0 && end - chunkStart < this.maxChunkChars) continue;
      const chunk = text.slice(chunkStart, end);
      chunkStart = start;
      let offset = this.byChunk.get(chunk);
      if (offset === undefined) {
        offset = this.store(this.scratch, this.collect(chunk));
        // An own copy: the slice would keep the whole text alive for as long as the memo holds the chunk.
        this.byChunk.set(ownCopy(chunk), offset);
      }
      // The chunk's ids, each added to the union once.
      const { decoded } = this;
      for (let k = 0, count = this.decode(offset); k < count; k++) {
        const id = decoded[k];
        if (united[id] !== stamp) {
          united[id] = stamp;
          unionIds[found++] = id;
        }
      }
    }
    if (this.spanning) {
      const spanning = this.spanning.find(text);
      for (const id of spanning) {
        const own = this.spanningIds[id];
        if (united[own] !== stamp) {
          united[own] = stamp;
          unionIds[found++] = own;
        }
      }
    }
    return this.store(unionIds, found);
  }

  /** Sort the first `count` ids of `ids` (in place) and write them to the pool; returns their offset. */
  private store(ids: Uint32Array, count: number): number {
    const sorted = ids.subarray(0, count).sort();
    // At most 5 bytes per number: the count and each delta.
    const room = 5 * (count + 1);
    if (this.used + room > this.pool.length) {
      const grown = new Uint8Array(Math.max(Math.ceil(this.pool.length * 1.5), this.used + room));
      grown.set(this.pool.subarray(0, this.used));
      this.pool = grown;
    }
    const offset = this.used;
    this.write(count);
    let previous = 0;
    for (let i = 0; i < count; i++) {
      this.write(sorted[i] - previous);
      previous = sorted[i];
    }
    return offset;
  }

  /**
   * The ids stored at `offset`, ascending, written to `decoded`; returns how many. The one reading of the pool's
   * format (a count, then the gaps between ids, each as 7-bit groups, low first). Each call overwrites `decoded`.
   */
  private decode(offset: number): number {
    const { pool, decoded } = this;
    let at = offset;
    let count = 0;
    for (let shift = 0, byte = 0x80; byte & 0x80; shift += 7) {
      byte = pool[at++];
      count += (byte & 0x7f) * 2 ** shift;
    }
    let id = 0;
    for (let k = 0; k < count; k++) {
      let step = 0;
      for (let shift = 0, byte = 0x80; byte & 0x80; shift += 7) {
        byte = pool[at++];
        step += (byte & 0x7f) * 2 ** shift;
      }
      id += step;
      decoded[k] = id;
    }
    return count;
  }

  /** Ids a {@link decode} wrote (each pattern once, so they fit). */
  private readonly decoded: Uint32Array;

  /** Ids of the patterns a message holds (ascending), memoized per message object. */
  inMessage(message: AgentMessage): Uint32Array {
    const count = this.decode(this.offsetOf(message));
    return this.decoded.slice(0, count);
  }

  /** Call `each` with the id of every pattern a message holds (ascending), memoized per message object. */
  forEachIn(message: AgentMessage, each: (id: number) => void): void {
    // `each` reads the shared buffer's ids: it must not search with this finder meanwhile.
    const { decoded } = this;
    for (let k = 0, count = this.decode(this.offsetOf(message)); k < count; k++) each(decoded[k]);
  }

  /**
   * Add `delta` to `counts[id]` for every pattern a message holds, memoized per message object: a view's counts kept
   * current as messages enter (+1) and leave (-1) it.
   */
  tally(message: AgentMessage, counts: Int32Array, delta: number): void {
    const { decoded } = this;
    for (let k = 0, count = this.decode(this.offsetOf(message)); k < count; k++) counts[decoded[k]] += delta;
  }
}

/**
 * What a finder searches in a message: a key text, cheap to build, and the searched text made from it (often the key
 * itself). Where one key can give different texts (a strategy's own message is read unlike the session's), a variant
 * number tells them apart: a key and its variant decide the text.
 */
export interface MessageText {
  key(message: AgentMessage): string;
  text(key: string, variant: number): string;
  /** Number of variants (default 1), and a message's (default 0). */
  variants?: number;
  variant?(message: AgentMessage): number;
  /**
   * An object the message's key is made of alone (with its variant), when there is one: its content array, or the
   * array's one block (see {@link contentHolder}).
   */
  holder?(message: AgentMessage): object | undefined;
}

/** All of a message's text, as a view shows it (see viewText). */
export const VIEW_TEXT: MessageText = {
  key: (message) => viewText([message]),
  text: (key) => key,
  // viewText reads a shell run's command and output and a summary's text besides the content.
  holder(message) {
    const content = (message as { content?: unknown }).content;
    return Array.isArray(content) && !OWN_TEXT_ROLES.has(message.role) ? contentHolder(content) : undefined;
  },
};

/**
 * The object a message's content text is made of alone: its one block when it has one (a rebuilt message often
 * copies the array around the same block, as with a long tool output), else the array.
 */
export function contentHolder(content: readonly unknown[]): object {
  const only = content.length === 1 ? content[0] : undefined;
  return only && typeof only === "object" ? only : content;
}

/**
 * Roles whose long texts are searched by chunks of lines: a summary or checkpoint a projection writes again and again
 * repeats most lines of the one before. The session's own messages (and custom ones) hardly share a chunk with any
 * other text: on the 13 MB bench session their chunks gave back 5% of the characters stored for them, and each
 * stored chunk is a copy.
 */
const LINE_WISE_ROLES = new Set<string>(["compactionSummary", "branchSummary"]);

/** Roles whose view text is more than their content. */
const OWN_TEXT_ROLES = new Set(["bashExecution", "compactionSummary", "branchSummary"]);

/** How a finder's memo is sized and a long text cut; tests make them small to reach every path. */
export interface FinderTuning {
  /** Characters of key text each memo holds per generation (two generations at most are held). */
  memoChars: number;
  /** Texts this long or longer are searched by chunks of lines (infinity: always whole). */
  lineWiseChars: number;
  /** A chunk ends after a line with odds 1 in 2^(32 - chunkBits) (28: about one line in 16), or at `maxChunkChars`. */
  chunkBits: number;
  maxChunkChars: number;
  /** Patterns longer than this are in the trie by an anchor of their first characters only (see planAnchors). */
  anchorChars: number;
  /** Most patterns checked at one anchor: more that share an anchor get a longer one. */
  anchorGroup: number;
}

/** Shorter texts are rarely rebuilt with most of their lines shared, and search faster whole. */
export const DEFAULT_TUNING: FinderTuning = {
  // A quarter of a million characters per generation: on the 13 MB bench session a million kept 8 MB more resident
  // for no measurable time saved.
  memoChars: 1 << 18,
  lineWiseChars: 2048,
  chunkBits: 28,
  maxChunkChars: 4096,
  anchorChars: 64,
  anchorGroup: 4,
};

/** Patterns checked at one anchor's occurrences, and how many characters of theirs the anchor is. */
interface AnchorGroup {
  length: number;
  ids: number[];
}

/**
 * Anchors for the long patterns `long` (ids into `patterns`, distinct, each longer than `anchorChars`): each pattern's
 * first `anchorChars` characters, and where more than `anchorGroup` patterns share those, twice as many for them,
 * and so on. A pattern no longer than its anchor would be goes into the trie whole (`whole`). An anchor's occurrence
 * then costs at most `anchorGroup` checks, and anchors ending at one position have lengths `anchorChars` times a power
 * of two, so a position's checks are bounded too; the trie holds about `anchorChars` characters per long pattern
 * beyond the prefixes they share.
 */
export function planAnchors(
  patterns: readonly string[],
  long: readonly number[],
  anchorChars: number,
  anchorGroup: number,
): { groups: AnchorGroup[]; whole: number[] } {
  const groups: AnchorGroup[] = [];
  const whole: number[] = [];
  const pending: AnchorGroup[] = long.length ? [{ length: anchorChars, ids: [...long] }] : [];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const byAnchor = new Map<string, number[]>();
    for (const id of next.ids) {
      const pattern = patterns[id];
      if (pattern.length <= next.length) {
        whole.push(id);
        continue;
      }
      const anchor = pattern.slice(0, next.length);
      let ids = byAnchor.get(anchor);
      if (!ids) byAnchor.set(anchor, (ids = []));
      ids.push(id);
    }
    for (const ids of byAnchor.values()) {
      if (ids.length <= anchorGroup) groups.push({ length: next.length, ids });
      else pending.push({ length: next.length * 2, ids });
    }
  }
  return { groups, whole };
}

/**
 * Two polynomial hashes of a window, modulo primes below 2^26 so that every product stays exact in a double. A match
 * of both is confirmed by comparing the characters, so a collision costs one comparison, never a wrong answer.
 */
const PRIME1 = 67_108_859;
const PRIME2 = 67_108_837;
const RADIX1 = 40_503;
const RADIX2 = 28_411;

/** Prefix hashes are kept between searches up to this many characters; a longer text's are made for it alone. */
const MAX_KEPT_PREFIX = 1 << 20;

/** The two hashes of `text`; given prefix arrays, each prefix's too (that of text[0, i) at index i). */
function rollingHashes(text: string, prefix1?: Int32Array, prefix2?: Int32Array): [number, number] {
  let h1 = 0;
  let h2 = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i) + 1;
    h1 = (h1 * RADIX1 + code) % PRIME1;
    h2 = (h2 * RADIX2 + code) % PRIME2;
    if (prefix1 && prefix2) {
      prefix1[i + 1] = h1;
      prefix2[i + 1] = h2;
    }
  }
  return [h1, h2];
}

/** The hash of the window [start, stop) from prefix hashes, given the radix to the window's length. */
function windowHash(prefix: Int32Array, start: number, stop: number, power: number, prime: number): number {
  const value = (prefix[stop] - ((prefix[start] * power) % prime)) % prime;
  return value < 0 ? value + prime : value;
}

/**
 * A map from text to pool offset that holds about `limit` characters of keys: when the newest generation is full it
 * becomes the old one and the oldest is dropped; a text found in the old generation moves to the new one. Texts
 * that keep coming back (the messages each projection rebuilds) stay; a long session's one-off texts pass through.
 * Only the time a lookup saves depends on what is held, never its answer.
 */
class TextMemo {
  private current = new Map<string, number>();
  private previous = new Map<string, number>();
  private chars = 0;
  private readonly limit: number;

  constructor(limit: number) {
    this.limit = limit;
  }

  get(text: string): number | undefined {
    const known = this.current.get(text);
    if (known !== undefined) return known;
    const old = this.previous.get(text);
    if (old !== undefined) this.set(text, old);
    return old;
  }

  set(text: string, offset: number): void {
    // A text longer than a generation would only push everything else out.
    if (text.length > this.limit) return;
    if (this.chars + text.length > this.limit) {
      this.previous = this.current;
      this.current = new Map();
      this.chars = 0;
    }
    this.current.set(text, offset);
    this.chars += text.length;
  }
}

/**
 * Per pattern of a finder, how many messages of one view hold it, kept current as messages enter and leave the view
 * (a view observer). Without a finder (nothing to look for) it counts nothing.
 */
export class PatternCounts implements ViewObserver {
  private readonly finder: Finder | undefined;
  private readonly counts: Int32Array;

  constructor(finder: Finder | undefined) {
    this.finder = finder;
    this.counts = new Int32Array(finder?.size ?? 0);
  }

  added(message: AgentMessage): void {
    this.finder?.tally(message, this.counts, 1);
  }

  removed(message: AgentMessage): void {
    this.finder?.tally(message, this.counts, -1);
  }

  /** True when some message of the view holds pattern `id`. */
  protected holdsPattern(id: number): boolean {
    return this.counts[id] > 0;
  }
}
