// The bench runner: each figure with a target is marked met or missed, misses are counted, and --strict
// turns a miss into exit code 1. Driven with stand-in bench modules, so no real suite runs here.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderBench, runBench, targetMet } from "../../src/lab/commands/bench.ts";

function modules(rows: object[]): string {
  const dir = mkdtempSync(join(tmpdir(), "lab-bench-"));
  writeFileSync(
    join(dir, "fake.bench.ts"),
    `export async function benchFake(options) { return ${JSON.stringify(rows)}.map((r) => ({ ...r, name: r.name + " @" + options.memoryMb })); }\n`,
  );
  return dir;
}

const met = { suite: "fake", name: "fast", value: 1, unit: "ms", ratio: 0.5, target: "≤ 1.5x" };
const missed = { suite: "fake", name: "slow", value: 9, unit: "ms", ratio: 6.1, target: "≤ 3x" };
const plain = { suite: "fake", name: "info", value: 200, unit: "MB" };

describe("bench targets", () => {
  afterEach(() => vi.restoreAllMocks());

  it("marks each target met or missed and counts them", () => {
    expect([met, missed, plain].map(targetMet)).toEqual([true, false, undefined]);
    const text = renderBench([met, missed, plain]);
    expect(text).toMatch(/fast .*≤ 1\.5x ✓/);
    expect(text).toMatch(/slow .*6\.100x {2}≤ 3x ✗ missed/);
    expect(text).toContain("2 target(s): 1 met, 1 missed");
  });

  it("a target may be a floor: on the ratio (≥ Nx) or on the value in its unit (≥ N unit)", () => {
    const floor = (value: number, ratio: number | undefined, target: string) => ({
      suite: "fake",
      name: "throughput",
      value,
      unit: "MB/CPU s",
      ...(ratio === undefined ? {} : { ratio }),
      target,
    });
    expect(targetMet(floor(1.2, undefined, "≥ 1 MB/CPU s"))).toBe(true);
    expect(targetMet(floor(0.4, undefined, "≥ 1 MB/CPU s"))).toBe(false);
    expect(targetMet(floor(3, 1.6, "≥ 1.5x"))).toBe(true);
    expect(targetMet(floor(3, 1.2, "≥ 1.5x"))).toBe(false);
    // A value's floor names the value's own unit; another unit is no target the runner can judge.
    expect(targetMet(floor(3, undefined, "≥ 1 s"))).toBeUndefined();
    const text = renderBench([floor(0.4, undefined, "≥ 1 MB/CPU s")]);
    expect(text).toMatch(/≥ 1 MB\/CPU s ✗ missed/);
    expect(text).toContain("1 target(s): 0 met, 1 missed");
  });

  it("--strict exits 1 on a miss, 0 otherwise; the memory size follows --large", async () => {
    const out = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    expect(await runBench([], modules([met, missed]))).toBe(0);
    expect(await runBench(["--strict"], modules([met, missed]))).toBe(1);
    expect(await runBench(["--strict"], modules([met, plain]))).toBe(0);
    await runBench(["--large"], modules([plain]));
    expect(out.mock.calls.map((c) => String(c[0])).join("")).toContain("info @100");
    out.mockClear();
    await runBench([], modules([plain]));
    expect(out.mock.calls.map((c) => String(c[0])).join("")).toContain("info @10");
  });

  it("an unknown suite is an input error", async () => {
    await expect(runBench(["--only", "nope"], modules([plain]))).rejects.toThrow(
      /unknown suite "nope" \(known: fake\)/,
    );
  });
});
