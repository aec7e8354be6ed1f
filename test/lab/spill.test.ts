// The lab's spill file: superseded text leaves the heap and comes back intact when read.
import { randomBytes } from "node:crypto";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { spill, spilledBytes } from "../../src/lab/spill.ts";

describe("spill", () => {
  it("reads back what it wrote, and the reader holds no copy of the deflated bytes", async () => {
    // A full collection on demand (vitest's workers do not start with --expose-gc).
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    // V8 frees the memory of dead buffers off the main thread after a collection: let the event loop turn a few
    // times so the figure counts what is still reachable, not what is waiting to be freed.
    const settled = async () => {
      for (let round = 0; round < 5; round++) {
        gc();
        await new Promise((next) => setImmediate(next));
      }
      return process.memoryUsage().arrayBuffers;
    };
    // Random text barely deflates: 200 texts of 32 KB are about 4.8 MB of deflated bytes.
    const texts = Array.from({ length: 200 }, () => randomBytes(24_000).toString("base64"));
    const before = await settled();
    const spilledBefore = spilledBytes();
    const readers = texts.map((text) => spill(text));
    const held = (await settled()) - before;
    const written = spilledBytes() - spilledBefore;
    expect(written).toBeGreaterThan(4_000_000);
    // Were the readers to keep their bytes, `held` would be about `written`.
    expect(held).toBeLessThan(written / 10);
    expect(readers[0]()).toBe(texts[0]);
    expect(readers[199]()).toBe(texts[199]);
  });
});
