// The dependency rules of src/ and machines/, read from the imports themselves (type imports included): no import
// cycles, no strategy folder reaching into another, and the pure modules never loading the host or the lab at run
// time.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { cycles, type Edge, importsOf } from "./imports.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const SCANNED = ["src", "machines"];
/** Modules that do no I/O and so must not load the host (Pi at run time) or the lab (the CLI's I/O). */
const PURE = ["src/log/", "src/projection/", "src/strategies/", "src/recall/", "machines/"];
const IMPURE = ["src/host/", "src/lab/"];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : [],
  );
}

/** The import graph of src/ and machines/, limited to edges between scanned files. */
function graph(): Edge[] {
  const all = SCANNED.flatMap((d) => files(join(ROOT, d))).map((f) => relative(ROOT, f));
  const known = new Set(all);
  return all.flatMap((f) => importsOf(ROOT, f, readFileSync(join(ROOT, f), "utf8")).filter((e) => known.has(e.to)));
}

/** The strategy folder a file belongs to (`src/strategies/<name>/…`), or undefined for a top-level file. */
function strategyFolder(path: string): string | undefined {
  return /^src\/strategies\/([^/]+)\//.exec(path)?.[1];
}

describe("dependency rules", () => {
  const edges = graph();

  it("no import cycles in src/ and machines/, type imports included", () => {
    expect(cycles(edges)).toEqual([]);
  });

  it("no strategy folder imports another; only the registry reaches into strategy folders from outside", () => {
    const hits = edges
      .filter((e) => {
        const target = strategyFolder(e.to);
        if (target === undefined || target === "shared") return false;
        const source = strategyFolder(e.from);
        if (source === target) return false;
        // The registry lists every strategy; the fact catalog reads each strategy's records.ts leaf, and nothing else
        // of a strategy.
        if (e.from === "src/strategies/registry.ts") return false;
        if (e.from === "src/strategies/catalog.ts" && e.to.endsWith("/records.ts")) return false;
        // Outside src/strategies (host, lab) a strategy's module may be reached; inside it, only through shared/.
        return e.from.startsWith("src/strategies/");
      })
      .map((e) => `${e.from} -> ${e.to}`);
    expect(hits).toEqual([]);
  });

  it("pure modules never import src/host or src/lab at run time", () => {
    const hits = edges
      .filter((e) => !e.typeOnly && PURE.some((p) => e.from.startsWith(p)) && IMPURE.some((p) => e.to.startsWith(p)))
      .map((e) => `${e.from} -> ${e.to}`);
    expect(hits).toEqual([]);
  });
});

describe("the import scan", () => {
  it("sees value, type, re-export and import() imports, and which of them are erased", () => {
    const src = [
      `import { a } from "./a.ts";`,
      `import type { B } from "./b.ts";`,
      `import { type C, type D } from "./c.ts";`,
      `import { type E, f } from "./e.ts";`,
      `export { g } from "./g.ts";`,
      `export type { H } from "./h.ts";`,
      `type I = import("./i.ts").I;`,
      `const j = () => import("./j.ts");`,
      `import "./k.ts";`,
      `// import { z } from "./z.ts";`,
      `const s = "from './y.ts'";`,
      `const t = \`import { y } from "./y.ts" \${"\`"} \${{ a: 1 }.a}\`;`,
      `const r = /["'\`]/g.test(s) ? 1 : 2 / 3;`,
      `import { pi } from "@earendil-works/pi-coding-agent";`,
    ].join("\n");
    const found = importsOf("/repo", "src/x/m.ts", src).map((e) => `${e.to}${e.typeOnly ? " (type)" : ""}`);
    expect(found).toEqual([
      "src/x/a.ts",
      "src/x/b.ts (type)",
      // Under verbatimModuleSyntax an import whose names are all `type` still loads the module (`import {} from`).
      "src/x/c.ts",
      "src/x/e.ts",
      "src/x/g.ts",
      "src/x/h.ts (type)",
      "src/x/i.ts (type)",
      "src/x/j.ts",
      "src/x/k.ts",
    ]);
  });

  it("finds a cycle of two, of three and a self-import, and none in a chain", () => {
    const e = (from: string, to: string): Edge => ({ from, to, typeOnly: true });
    expect(cycles([e("a", "b"), e("b", "c")])).toEqual([]);
    expect(cycles([e("a", "b"), e("b", "a"), e("c", "a")])).toEqual([["a", "b"]]);
    expect(cycles([e("a", "b"), e("b", "c"), e("c", "a")])).toEqual([["a", "b", "c"]]);
    expect(cycles([e("a", "a")])).toEqual([["a"]]);
  });
});
