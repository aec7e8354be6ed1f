// The chart depends on no strategy: everything `machines/` imports, type imports and re-exports included, followed
// file by file, stays out of src/strategies, src/host and src/lab. That is what keeps the strategy contract, the
// registry and the chart out of one import cycle.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MACHINES = join(ROOT, "machines");

/** Relative specifiers of every `import … from`, `import("…")` and `export … from` in a module. */
function relativeImports(file: string): string[] {
  const source = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of source.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)["'](\.{1,2}\/[^"']+)["']/g))
    found.push(match[1]);
  return found;
}

/** Every repository file reached from `entries` through relative imports, as paths from the repository root. */
function reachedFrom(entries: readonly string[]): Set<string> {
  const reached = new Set<string>();
  const queue = [...entries];
  while (queue.length) {
    const file = queue.pop() as string;
    const path = relative(ROOT, file);
    if (reached.has(path)) continue;
    reached.add(path);
    for (const specifier of relativeImports(file)) {
      const target = resolve(dirname(file), specifier);
      if (existsSync(target)) queue.push(target);
    }
  }
  return reached;
}

describe("the lifecycle modules", () => {
  const entries = readdirSync(MACHINES)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(MACHINES, f));

  it("reach nothing in src/strategies, src/host or src/lab, type imports included", () => {
    expect(entries.length).toBeGreaterThan(1);
    const outside = [...reachedFrom(entries)].filter((p) => /^src\/(strategies|host|lab)\//.test(p));
    expect(outside).toEqual([]);
  });

  it("the leaf with the lifecycle's types imports only Pi's types and the log's entry shapes", () => {
    expect(relativeImports(join(MACHINES, "lifecycle.ts"))).toEqual(["../src/log/entries.ts"]);
  });
});
