// The lab's spill file: superseded text leaves the heap and comes back intact when read.
import { randomBytes } from "node:crypto";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { spill, spilledBytes } from "../../src/lab/spill.ts";

describe("spill", () => {
  it("reads back what it wrote, and the reader holds no copy of the deflated bytes", () => {
    // A full collection on demand (vitest's workers do not start with --expose-gc).
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    // Random text barely deflates: 200 texts of 32 KB are about 4.8 MB of deflated bytes.
    const texts = Array.from({ length: 200 }, () => randomBytes(24_000).toString("base64"));
    gc();
    const before = process.memoryUsage().arrayBuffers;
    const spilledBefore = spilledBytes();
    const readers = texts.map((text) => spill(text));
    gc();
    const held = process.memoryUsage().arrayBuffers - before;
    const written = spilledBytes() - spilledBefore;
    expect(written).toBeGreaterThan(4_000_000);
    // Were the readers to keep their bytes, `held` would be about `written`.
    expect(held).toBeLessThan(written / 10);
    expect(readers[0]()).toBe(texts[0]);
    expect(readers[199]()).toBe(texts[199]);
  });
});
