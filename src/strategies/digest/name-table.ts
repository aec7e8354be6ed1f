// One copy of each name the digest has seen in view, numbered, and the names per memo key as lists of those numbers.
// A view's texts are read for names once per process; each occurrence is looked up by its characters, so only a name
// met for the first time becomes a string. Pure: no I/O.
import { ownCopy } from "../../log/own-copy.ts";
import { forEachNameRange } from "./lines.ts";

/** FNV-1a over the code units of `text[from, to)`. */
function hashRange(text: string, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let k = from; k < to; k++) h = Math.imul(h ^ text.charCodeAt(k), 0x01000193);
  return h | 0;
}

/** True when `name` is exactly `text[from, to)`. */
function sameRange(name: string, text: string, from: number, to: number): boolean {
  if (name.length !== to - from) return false;
  for (let k = 0; k < name.length; k++) if (name.charCodeAt(k) !== text.charCodeAt(from + k)) return false;
  return true;
}

/** The names of a text that has none: one list for all of them (no caller writes to a list). */
const NO_IDS = new Int32Array(0);

function grown(array: Int32Array, length: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(Math.max(length, 2 * array.length));
  next.set(array);
  return next;
}

/**
 * Names by number. An open-addressing table over the names' hashes finds a name from its characters in the text
 * where it occurs, so looking up a name already numbered makes no string.
 */
export class NameTable {
  /** The names, by number: each its own string, not a slice pinning the text it came from. */
  readonly list: string[] = [];
  /** Name numbers per memo key (message, content block or custom entry): see the digest planner. */
  readonly memo = new WeakMap<object, Int32Array>();
  /** Per slot, a name's number plus one (0: empty); the slot count is a power of two, at least twice the names. */
  private slots: Int32Array;
  private hashes = new Int32Array(1024);
  /** Per name, the number of the last scan that listed it: a scan lists each name once without a set of its own. */
  private seenIn = new Int32Array(1024);
  private scans = 0;

  /** `slotBits`: log2 of the first slot count (tests start small to make the table grow and collide). */
  constructor(slotBits = 12) {
    this.slots = new Int32Array(1 << slotBits);
  }

  /** The number of `name`, if the table holds it. */
  idOf(name: string): number | undefined {
    const id = this.find(name, 0, name.length, hashRange(name, 0, name.length));
    return id < 0 ? undefined : id;
  }

  /**
   * Numbers of the names {@link forEachNameRange} finds in `text`, each once, in order of first appearance: exactly as
   * many as there are, four bytes each, as the lists are kept for every text in view.
   */
  idsIn(text: string): Int32Array {
    const found: number[] = [];
    const scan = ++this.scans;
    forEachNameRange(text, (from, to) => {
      const id = this.intern(text, from, to);
      if (this.seenIn[id] === scan) return;
      this.seenIn[id] = scan;
      found.push(id);
    });
    return found.length ? Int32Array.from(found) : NO_IDS;
  }

  /** The number of `text[from, to)`, numbered now when it is new. */
  private intern(text: string, from: number, to: number): number {
    const hash = hashRange(text, from, to);
    const known = this.find(text, from, to, hash);
    if (known >= 0) return known;
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    const name = ownCopy(text.slice(from, to));
    const id = this.list.push(name) - 1;
    if (id >= this.hashes.length) {
      this.hashes = grown(this.hashes, id + 1);
      this.seenIn = grown(this.seenIn, id + 1);
    }
    this.hashes[id] = hash;
    this.slots[slot] = id + 1;
    if (2 * this.list.length > this.slots.length) this.rehash();
    return id;
  }

  /** The number of the name `text[from, to)` (whose hash is `hash`), or -1 when the table has none. */
  private find(text: string, from: number, to: number, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; this.slots[slot] !== 0; slot = (slot + 1) & mask) {
      const id = this.slots[slot] - 1;
      if (this.hashes[id] === hash && sameRange(this.list[id], text, from, to)) return id;
    }
    return -1;
  }

  /** Twice the slots, every name placed again by its hash. */
  private rehash(): void {
    const slots = new Int32Array(2 * this.slots.length);
    const mask = slots.length - 1;
    for (let id = 0; id < this.list.length; id++) {
      let slot = this.hashes[id] & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = id + 1;
    }
    this.slots = slots;
  }
}
