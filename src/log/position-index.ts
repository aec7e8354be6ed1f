// Entry id -> position in an array of entries, for the arrays that hold a whole branch (the active path, a lab
// ledger's branch). A Map from id to number costs some 45 bytes an entry, and the lab keeps one per row per entry of
// a long session. This table keeps only positions and hashes: the array already holds the ids, so a key is compared
// by reading the id at the position. Pure: no I/O.

/** FNV-1a over the code units of `id`. */
function fnv1a(id: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < id.length; k++) h = Math.imul(h ^ id.charCodeAt(k), 0x01000193);
  return h | 0;
}

/**
 * A map from id to position with the semantics of `Map<string, number>`, for positions whose entry has that id:
 * `set(id, p)` requires `idAt(p) === id` for as long as the pair is held. Open addressing with linear probing;
 * a deletion shifts the probe run back, so no tombstones accumulate.
 */
export class PositionIndex {
  /** Per slot, a position plus one (0: empty); a power of two, at least twice the pairs held. */
  private slots = new Int32Array(16);
  /** Per slot, the hash of the id at its position. */
  private hashes = new Int32Array(16);
  private count = 0;
  private readonly idAt: (position: number) => string;
  private readonly hashOf: (id: string) => number;

  /** `hash`: tests give a poor one, so that probe runs are long and wrap around the table. */
  constructor(idAt: (position: number) => string, hash: (id: string) => number = fnv1a) {
    this.idAt = idAt;
    this.hashOf = hash;
  }

  get size(): number {
    return this.count;
  }

  get(id: string): number | undefined {
    const slot = this.find(id, this.hashOf(id));
    return slot < 0 ? undefined : this.slots[slot] - 1;
  }

  has(id: string): boolean {
    return this.find(id, this.hashOf(id)) >= 0;
  }

  set(id: string, position: number): void {
    const hash = this.hashOf(id);
    const found = this.find(id, hash);
    if (found >= 0) {
      this.slots[found] = position + 1;
      return;
    }
    if (2 * (this.count + 1) > this.slots.length) this.grow();
    const mask = this.slots.length - 1;
    let slot = hash & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = position + 1;
    this.hashes[slot] = hash;
    this.count++;
  }

  delete(id: string): void {
    let hole = this.find(id, this.hashOf(id));
    if (hole < 0) return;
    const mask = this.slots.length - 1;
    // Move back each later pair of the run whose home is not between the hole and itself.
    for (let next = (hole + 1) & mask; this.slots[next] !== 0; next = (next + 1) & mask) {
      const home = this.hashes[next] & mask;
      const between = hole <= next ? hole < home && home <= next : hole < home || home <= next;
      if (between) continue;
      this.slots[hole] = this.slots[next];
      this.hashes[hole] = this.hashes[next];
      hole = next;
    }
    this.slots[hole] = 0;
    this.count--;
  }

  /** The slot holding `id`, or -1. */
  private find(id: string, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; this.slots[slot] !== 0; slot = (slot + 1) & mask)
      if (this.hashes[slot] === hash && this.idAt(this.slots[slot] - 1) === id) return slot;
    return -1;
  }

  private grow(): void {
    const slots = this.slots;
    const hashes = this.hashes;
    this.slots = new Int32Array(2 * slots.length);
    this.hashes = new Int32Array(2 * slots.length);
    const mask = this.slots.length - 1;
    for (let k = 0; k < slots.length; k++) {
      if (slots[k] === 0) continue;
      let slot = hashes[k] & mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
      this.slots[slot] = slots[k];
      this.hashes[slot] = hashes[k];
    }
  }
}
