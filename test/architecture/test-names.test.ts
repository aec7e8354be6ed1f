// A test file's name says what kind of test it is, so a run can be picked by name (`npx vitest run .e2e.`,
// `npx vitest run property.test`) and a reader knows what a file costs before opening it:
// - it runs a fast-check property (`fc.assert`, `fc.check`, or `assertBounded`, which wraps `fc.assert`): the name
//   ends `.property.test.ts`;
// - it drives the real Pi session (imports the e2e harness or the RPC child, directly or through a helper in test/, or
//   calls `createAgentSession` itself): the name ends `.e2e.test.ts`, or `.e2e.property.test.ts` when it does both.
// Both rules hold in both directions. test/certification is left out: its folder is its own vitest project (which
// packs and installs the package first), and a `.e2e.` in its names would pull that setup into `vitest run .e2e.`.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const TEST = join(ROOT, "test");
const CERTIFICATION = join(TEST, "certification");

/** The modules that start a real Pi session: the in-process harness and the `pi --mode rpc` child. */
const PI_DRIVERS = new Set([join(TEST, "e2e/harness.ts"), join(TEST, "e2e/fixtures/rpc-child.ts")]);

const PROPERTY_RUNNER = /\b(?:fc\.assert|fc\.check|assertBounded)\(/;
const OWN_SESSION = /\bcreateAgentSession\(/;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : [],
  );
}

const sources = new Map(
  files(TEST)
    .filter((f) => !f.startsWith(`${CERTIFICATION}/`))
    .map((f) => [f, readFileSync(f, "utf8")]),
);

/** The test-tree modules a file imports (static or dynamic), as absolute paths. Packages are not followed. */
function localImports(file: string): string[] {
  const out: string[] = [];
  for (const m of (sources.get(file) ?? "").matchAll(/\b(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    out.push(resolve(dirname(file), m[1]));
  }
  return out;
}

/** Whether a file reaches a Pi driver through its imports inside test/ (the drivers themselves excluded). */
function drivesPi(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  if (OWN_SESSION.test(sources.get(file) ?? "")) return true;
  return localImports(file).some((dep) => PI_DRIVERS.has(dep) || drivesPi(dep, seen));
}

const tests = [...sources.keys()].filter((f) => f.endsWith(".test.ts")).sort();
const rel = (f: string) => relative(ROOT, f);

describe("test file names", () => {
  it("finds the test files it judges", () => {
    expect(tests.length).toBeGreaterThan(100);
  });

  it("a file that runs a fast-check property ends .property.test.ts, and every such file runs one", () => {
    const runs = tests.filter((f) => PROPERTY_RUNNER.test(sources.get(f) ?? ""));
    expect(runs.filter((f) => !f.endsWith(".property.test.ts")).map(rel)).toEqual([]);
    expect(tests.filter((f) => f.endsWith(".property.test.ts") && !runs.includes(f)).map(rel)).toEqual([]);
  });

  it("a file that drives the real Pi session is named .e2e., and every such file drives one", () => {
    const e2e = /\.e2e\.(?:property\.)?test\.ts$/;
    const driving = tests.filter((f) => drivesPi(f));
    expect(driving.length).toBeGreaterThan(20);
    expect(driving.filter((f) => !e2e.test(f)).map(rel)).toEqual([]);
    expect(tests.filter((f) => e2e.test(f) && !driving.includes(f)).map(rel)).toEqual([]);
    // `.e2e.` appears only in that one place in a name.
    expect(tests.filter((f) => f.includes(".e2e.") && !e2e.test(f)).map(rel)).toEqual([]);
  });
});
