// fast-check's run count and seed are set in one place: test/support/fast-check.ts reads FC_RUNS, FC_SEED and CI,
// and test/setup/fast-check.ts applies them globally. A property that runs fewer (or more) cases than the global count
// says so as a share of it, `numRuns: runs(fraction)`, so FC_RUNS still scales it. `fc.sample` counts are sizes of a
// sample, not runs of a property, and stay literal.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const TEST = join(ROOT, "test");
const HELPER = join(TEST, "support/fast-check.ts");
/** The setup's own test: it reads the environment and spells out settings objects, on purpose. */
const SETUP_TEST = join(TEST, "setup/fast-check.property.test.ts");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : [],
  );
}

/** The file's lines without `//` comments (a comment may name FC_RUNS to explain a count). */
function codeLines(file: string): { line: number; text: string }[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .map((text, i) => ({ line: i + 1, text: text.replace(/(^|\s)\/\/.*$/, "") }));
}

const sources = files(TEST).filter((f) => f !== join(TEST, "architecture/fast-check-config.test.ts"));

describe("fast-check configuration", () => {
  it("scans the test tree", () => {
    expect(sources.length).toBeGreaterThan(100);
  });

  it("only test/support/fast-check.ts reads FC_RUNS, FC_SEED or CI", () => {
    const readers = sources
      .filter((f) => f !== HELPER && f !== SETUP_TEST)
      .flatMap((f) =>
        codeLines(f)
          .filter(({ text }) =>
            /\bprocess\.env\.(?:FC_\w+|CI)\b|\benv\.(?:FC_\w+|CI)\b|["']FC_(?:RUNS|SEED)["']/.test(text),
          )
          .map(({ line, text }) => `${relative(ROOT, f)}:${line}: ${text.trim()}`),
      );
    expect(readers).toEqual([]);
  });

  it("a property's run count is the global one or a share of it", () => {
    const literal = sources
      .filter((f) => f !== HELPER && f !== SETUP_TEST)
      .flatMap((f) => {
        const lines = codeLines(f);
        // A count named once for several properties: `const RUNS = runs(1 / 5);`.
        const shares = new Set(lines.flatMap(({ text }) => /\bconst (\w+) = runs\(/.exec(text)?.[1] ?? []));
        return lines
          .filter(({ text }) => {
            if (!/(?<![.\w])numRuns\b/.test(text) || /\bfc\.sample\(/.test(text)) return false;
            const value = /\bnumRuns: (\w+)(\()?/.exec(text);
            return !(value && (value[1] === "runs" ? value[2] === "(" : shares.has(value[1])));
          })
          .map(({ line, text }) => `${relative(ROOT, f)}:${line}: ${text.trim()}`);
      });
    expect(literal).toEqual([]);
  });
});
