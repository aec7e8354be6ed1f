// Many-pattern substring search (Aho-Corasick) with a per-message memo: which of the lab's patterns (probe
// texts, needed items) a message holds is computed once per message object, so checking a view costs one
// pass over its messages instead of one text search per pattern. Deterministic; no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { viewText } from "./probes.ts";

/** Finds which of a fixed set of patterns occur in a text. */
export class Finder {
  /** Transitions: key node * 65536 + UTF-16 code unit. One map keeps the trie compact. */
  private readonly next = new Map<number, number>();
  /** Root transitions by code unit, for speed on the most frequent lookups. */
  private readonly rootNext = new Int32Array(65536);
  private fail: Int32Array = new Int32Array(0);
  /** Pattern ending at each node (-1 for none), and the nearest node on the fail chain that ends one. */
  private ends: number[] = [-1];
  private outLink: Int32Array = new Int32Array(0);
  private readonly seen: Uint32Array;
  private stamp = 0;
  /**
   * Per message object, the offset in `pool` of its ids (a count, then the ids). One shared pool rather than an
   * array per message: a typed array's own header costs more than the few ids most messages hold.
   */
  private readonly memo = new WeakMap<object, number>();
  private pool = new Uint32Array(1 << 16);
  private used = 0;
  readonly size: number;

  /** `patterns[i]` gets id i; an empty pattern never matches. Duplicates share the first id's node. */
  constructor(patterns: readonly string[]) {
    this.size = patterns.length;
    this.seen = new Uint32Array(patterns.length);
    let nodes = 1;
    const extra: number[][] = [];
    patterns.forEach((pattern, id) => {
      if (!pattern) return;
      let node = 0;
      for (let i = 0; i < pattern.length; i++) {
        const k = node * 65536 + pattern.charCodeAt(i);
        let child = this.next.get(k);
        if (child === undefined) {
          child = nodes++;
          this.next.set(k, child);
          this.ends.push(-1);
        }
        node = child;
      }
      if (this.ends[node] === -1) this.ends[node] = id;
      else (extra[node] ??= []).push(id);
    });
    this.duplicates = extra;
    this.build(nodes);
  }

  /** Further pattern ids that end at a node (identical patterns). */
  private readonly duplicates: number[][];

  private build(nodes: number): void {
    this.fail = new Int32Array(nodes);
    this.outLink = new Int32Array(nodes).fill(-1);
    const children: number[][] = Array.from({ length: nodes }, () => []);
    for (const [k, child] of this.next) children[Math.floor(k / 65536)].push(k % 65536, child);
    for (let i = 0; i < children[0].length; i += 2) this.rootNext[children[0][i]] = children[0][i + 1];
    // Breadth-first: a node's fail link is the longest proper suffix that is also a trie path.
    const queue: number[] = [];
    for (let i = 1; i < children[0].length; i += 2) queue.push(children[0][i]);
    for (let head = 0; head < queue.length; head++) {
      const node = queue[head];
      const list = children[node];
      for (let i = 0; i < list.length; i += 2) {
        const code = list[i];
        const child = list[i + 1];
        let f = this.fail[node];
        let target = this.step(f, code);
        while (target === -1 && f !== 0) {
          f = this.fail[f];
          target = this.step(f, code);
        }
        this.fail[child] = target === -1 || target === child ? 0 : target;
        const failNode = this.fail[child];
        this.outLink[child] = this.ends[failNode] !== -1 ? failNode : this.outLink[failNode];
        queue.push(child);
      }
    }
  }

  /** Transition from `node` on `code`, or -1 (the root never fails: it stays at 0). */
  private step(node: number, code: number): number {
    if (node === 0) return this.rootNext[code];
    return this.next.get(node * 65536 + code) ?? -1;
  }

  /** Ids of the patterns occurring in `text`, each once. */
  find(text: string): Uint32Array {
    const found: number[] = [];
    if (++this.stamp === 0xffffffff) {
      this.seen.fill(0);
      this.stamp = 1;
    }
    const stamp = this.stamp;
    const emit = (node: number) => {
      for (let n = this.ends[node] !== -1 ? node : this.outLink[node]; n !== -1; n = this.outLink[n]) {
        const id = this.ends[n];
        if (this.seen[id] !== stamp) {
          this.seen[id] = stamp;
          found.push(id);
          for (const dup of this.duplicates[n] ?? []) found.push(dup);
        }
      }
    };
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      let target = this.step(node, code);
      while (target === -1) {
        node = this.fail[node];
        target = this.step(node, code);
      }
      node = target;
      if (node !== 0) emit(node);
    }
    return Uint32Array.from(found);
  }

  /** Offset in `pool` of the ids of the patterns a message holds (its whole text as a view shows it). */
  private offsetOf(message: AgentMessage): number {
    let offset = this.memo.get(message);
    if (offset === undefined) {
      const ids = this.find(viewText([message]));
      if (this.used + ids.length + 1 > this.pool.length) {
        const grown = new Uint32Array(Math.max(Math.ceil(this.pool.length * 1.5), this.used + ids.length + 1));
        grown.set(this.pool.subarray(0, this.used));
        this.pool = grown;
      }
      offset = this.used;
      this.pool[offset] = ids.length;
      this.pool.set(ids, offset + 1);
      this.used += ids.length + 1;
      this.memo.set(message, offset);
    }
    return offset;
  }

  /** Ids of the patterns a message holds, memoized per message object. */
  inMessage(message: AgentMessage): Uint32Array {
    const offset = this.offsetOf(message);
    return this.pool.slice(offset + 1, offset + 1 + this.pool[offset]);
  }

  /** Which patterns occur anywhere in a list of messages: `marks[id] === result` means present. */
  present(messages: readonly AgentMessage[], marks: Uint32Array, stamp: number): void {
    for (const message of messages) {
      const offset = this.offsetOf(message);
      const end = offset + 1 + this.pool[offset];
      for (let i = offset + 1; i < end; i++) marks[this.pool[i]] = stamp;
    }
  }
}
