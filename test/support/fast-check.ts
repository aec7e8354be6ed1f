// fast-check's run count and seed, read from the environment in one place. test/setup/fast-check.ts applies them
// with `fc.configureGlobal` before every test file, so a property file states no count of its own unless it needs a
// share of the global one (a slow property: see `runs`).
import fc from "fast-check";

/** Runs per property when `FC_RUNS` is unset: fast-check's own default is 100. */
export const DEFAULT_RUNS = 200;

/** The seed CI pins, so a landing run can be replayed exactly. */
export const CI_SEED = 20261129;

/** What the environment asks of fast-check. */
export interface FastCheckSettings {
  /** Runs per property. */
  numRuns: number;
  /** A fixed seed; absent, every property draws a new one (and prints it when it fails). */
  seed?: number;
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * The settings for an environment: `FC_RUNS` (a positive integer, default 200), `FC_SEED` (an integer, as fast-check
 * prints it in a failure report), else CI's pinned seed when `CI` is set, else none. A malformed value is an error
 * naming the variable, not a silent default: a replay with a mistyped seed must not pass on some other seed.
 */
export function fastCheckSettings(env: Readonly<Record<string, string | undefined>>): FastCheckSettings {
  const numRuns = env.FC_RUNS === undefined ? DEFAULT_RUNS : integer("FC_RUNS", env.FC_RUNS, 1, 10_000_000);
  if (env.FC_SEED !== undefined) return { numRuns, seed: integer("FC_SEED", env.FC_SEED, INT32_MIN, INT32_MAX) };
  const ci = env.CI !== undefined && env.CI !== "" && env.CI !== "0" && env.CI.toLowerCase() !== "false";
  return ci ? { numRuns, seed: CI_SEED } : { numRuns };
}

function integer(name: string, text: string, min: number, max: number): number {
  const value = /^\s*[-+]?\d{1,12}\s*$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}; got ${JSON.stringify(text.slice(0, 40))}`);
  }
  return value;
}

/**
 * A share of the global run count, for a property too slow to run the full count (say why where it is used), or a
 * multiple of it for a cheap one that needs many cases to reach its rare inputs. Never below `atLeast`, so a quick
 * local run with a small `FC_RUNS` still exercises the property.
 */
export function runs(fraction = 1, atLeast = 1): number {
  // Unset only outside the suite's setup; fast-check then runs its own default of 100.
  const global = fc.readConfigureGlobal().numRuns ?? 100;
  return Math.max(atLeast, Math.round(global * fraction));
}

/**
 * Vitest timeout for one property test: one minute per 200 runs of the global count (at least one minute), so a long
 * local run with a large `FC_RUNS` is not cut off.
 */
export function propertyTimeout(): number {
  return Math.max(1, Math.ceil(runs() / DEFAULT_RUNS)) * 60_000;
}
