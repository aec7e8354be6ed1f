// The suite's fast-check configuration comes from one place (test/setup/fast-check.ts, via `fc.configureGlobal`) and
// reaches every property: the run count from FC_RUNS, the seed from FC_SEED or CI's pinned one. Run this file as
// `FC_SEED=1 npx vitest run test/setup/fast-check.property.test.ts` to see a chosen seed take effect.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CI_SEED, DEFAULT_RUNS, fastCheckSettings, propertyTimeout, runs } from "../support/fast-check.ts";

/** What this process's environment asks for, read here independently of the helper under test. */
const wantedRuns = process.env.FC_RUNS === undefined ? 200 : Number(process.env.FC_RUNS);
const ciSet = !!process.env.CI && !["0", "false"].includes(process.env.CI.toLowerCase());
const wantedSeed = process.env.FC_SEED !== undefined ? Number(process.env.FC_SEED) : ciSet ? 20261129 : undefined;

describe("fast-check's global configuration", () => {
  it("holds this environment's run count and seed before any test runs", () => {
    const global = fc.readConfigureGlobal();
    expect(global.numRuns).toBe(wantedRuns);
    expect(global.seed).toBe(wantedSeed);
  });

  it("reaches a property that states nothing: it runs the global count, on the pinned seed when there is one", () => {
    const details = fc.check(fc.property(fc.integer(), () => true));
    expect(details.failed).toBe(false);
    expect(details.numRuns).toBe(wantedRuns);
    if (wantedSeed !== undefined) expect(details.seed).toBe(wantedSeed);
  });

  it("prints the seed of a failure, so the failure can be replayed with FC_SEED", () => {
    // Fails on one integer in 13: where the first failure falls depends on the seed. At least 1,000 runs, so a
    // small FC_RUNS still meets one.
    const property = fc.property(fc.integer(), (n) => n % 13 !== 0);
    let report = "";
    try {
      fc.assert(property, { numRuns: runs(1, 1000) });
    } catch (error) {
      report = String(error);
    }
    const printed = /\{ seed: (-?\d+),/.exec(report);
    const after = /failed after (\d+) tests?/.exec(report);
    expect(printed, report).not.toBeNull();
    expect(after, report).not.toBeNull();
    const seed = Number(printed?.[1]);
    if (wantedSeed !== undefined) expect(seed).toBe(wantedSeed);
    // The printed seed replays the run: the same first failure, at the same run.
    const replay = fc.check(property, { numRuns: runs(1, 1000), seed });
    expect(replay.failed).toBe(true);
    expect(replay.numRuns).toBe(Number(after?.[1]));
  });
});

describe("the settings read from the environment", () => {
  it("defaults to 200 runs and no seed, so local runs explore", () => {
    expect(fastCheckSettings({})).toEqual({ numRuns: DEFAULT_RUNS });
    expect(DEFAULT_RUNS).toBe(200);
  });

  it("pins CI's seed when CI is set, and FC_SEED wins over it", () => {
    expect(fastCheckSettings({ CI: "true" })).toEqual({ numRuns: 200, seed: CI_SEED });
    expect(CI_SEED).toBe(20261129);
    expect(fastCheckSettings({ CI: "true", FC_SEED: "1" })).toEqual({ numRuns: 200, seed: 1 });
    expect(fastCheckSettings({ FC_SEED: "-1132866105" })).toEqual({ numRuns: 200, seed: -1132866105 });
    expect(fastCheckSettings({ CI: "false" })).toEqual({ numRuns: 200 });
    expect(fastCheckSettings({ CI: "" })).toEqual({ numRuns: 200 });
  });

  it("takes FC_RUNS as the run count", () => {
    expect(fastCheckSettings({ FC_RUNS: "2000" })).toEqual({ numRuns: 2000 });
    expect(fastCheckSettings({ FC_RUNS: "1", CI: "1" })).toEqual({ numRuns: 1, seed: CI_SEED });
  });

  it("refuses a malformed value with an error naming the variable, never a silent default", () => {
    for (const FC_RUNS of ["", "abc", "0", "-5", "1.5", "1e3", "9".repeat(400)]) {
      expect(() => fastCheckSettings({ FC_RUNS }), FC_RUNS).toThrow(/^FC_RUNS must be an integer/);
    }
    for (const FC_SEED of ["", "seed", "1.5", "4294967296", "0x10"]) {
      expect(() => fastCheckSettings({ FC_SEED }), FC_SEED).toThrow(/^FC_SEED must be an integer/);
    }
    // The message quotes at most 40 characters of what it was given.
    expect(() => fastCheckSettings({ FC_SEED: "x".repeat(10_000) })).toThrow(/got "x{40}"$/);
  });
});

describe("a share of the global run count", () => {
  it("scales with FC_RUNS, rounded, and never drops below its floor", () => {
    expect(runs()).toBe(wantedRuns);
    expect(runs(1 / 10)).toBe(Math.max(1, Math.round(wantedRuns / 10)));
    expect(runs(1 / 10, 10)).toBe(Math.max(10, Math.round(wantedRuns / 10)));
    expect(runs(1 / 1_000_000)).toBe(1);
    expect(runs(10)).toBe(wantedRuns * 10);
  });

  it("gives a property one minute per 200 runs, at least one", () => {
    expect(propertyTimeout()).toBe(Math.max(1, Math.ceil(wantedRuns / 200)) * 60_000);
  });
});
