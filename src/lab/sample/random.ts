// Seeded pseudo-random numbers for the sample generator: the same seed always yields the same sessions.
// Pure: no clocks, no Math.random, no I/O.

/** A small deterministic PRNG (sfc32 seeded through splitmix32) with the helpers the generator needs. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.float();
  }

  /** Uniform in [0, 1). */
  float(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }

  /** Integer in [min, max] (inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.float() * items.length)];
  }

  /** `count` distinct items (fewer when the list is shorter), in list order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const chosen = new Set<number>();
    const n = Math.min(count, items.length);
    while (chosen.size < n) chosen.add(Math.floor(this.float() * items.length));
    return [...chosen].sort((x, y) => x - y).map((i) => items[i]);
  }

  /** Lowercase hex string of `length` digits. */
  hex(length: number): string {
    let out = "";
    while (out.length < length)
      out += Math.floor(this.float() * 4294967296)
        .toString(16)
        .padStart(8, "0");
    return out.slice(0, length);
  }

  /** A child generator whose stream does not depend on how much the parent is used afterwards. */
  fork(salt: number): Rng {
    return new Rng((Math.floor(this.float() * 4294967296) ^ Math.imul(salt + 1, 0x27d4eb2d)) >>> 0);
  }
}

/** Stable 32-bit hash of a string (FNV-1a), for content derived from names. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
