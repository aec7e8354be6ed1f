// Nothing below the strategies names one: the host, the log, the projection and the lifecycle chart reach every
// strategy through the registry or through what a strategy declares. Code (not comments) in those folders is scanned
// for each registry name as a word; prose in string literals (a sentence the user or model reads) is not code, but a
// bare name in a string (`"preserve"`, an import path, a record name) is. And the registry is the only list.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { STRATEGY_VALUES } from "../../src/host/settings.ts";
import { CONFIGURABLE, STRATEGIES } from "../../src/strategies/registry.ts";

const ROOT = join(import.meta.dirname, "../..");
/** The floors that must not know any strategy by name. */
const SCANNED = ["src/host", "src/log", "src/projection", "machines"];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : [],
  );
}

/** The source with comments removed and prose strings (with a space) blanked; bare-word strings stay. */
function code(source: string): string {
  let out = "";
  let i = 0;
  while (i < source.length) {
    const two = source.slice(i, i + 2);
    if (two === "//") {
      while (i < source.length && source[i] !== "\n") i++;
    } else if (two === "/*") {
      const end = source.indexOf("*/", i + 2);
      i = end < 0 ? source.length : end + 2;
    } else if (source[i] === '"' || source[i] === "'" || source[i] === "`") {
      const quote = source[i];
      let j = i + 1;
      while (j < source.length && source[j] !== quote) j += source[j] === "\\" ? 2 : 1;
      const text = source.slice(i, j + 1);
      out += /\s/.test(text) ? `${quote}${quote}` : text;
      i = j + 1;
    } else {
      out += source[i++];
    }
  }
  return out;
}

/** `file:line name: code` for every registry name used as a word in the code of the files under `dir`. */
function namesIn(dir: string): string[] {
  const names = STRATEGIES.map((s) => s.name);
  const hits: string[] = [];
  for (const file of files(join(ROOT, dir))) {
    const lines = code(readFileSync(file, "utf8")).split("\n");
    lines.forEach((line, n) => {
      // An import path names a strategy only by reaching into its folder; other modules' file names are theirs.
      const words = /\bfrom\s*["']|^\s*import\s*["']|\bimport\(/.test(line)
        ? (line.match(/strategies\/\w+\//g) ?? []).join(" ")
        : line;
      for (const name of names)
        if (new RegExp(`\\b${name}\\b`).test(words))
          hits.push(`${file.slice(ROOT.length + 1)}:${n + 1} ${name}: ${line.trim()}`);
    });
  }
  return hits;
}

describe("nothing below the strategies names one", () => {
  it.each(SCANNED)("%s code contains no registry name as a word", (dir) => {
    expect(namesIn(dir)).toEqual([]);
  });

  it("the scan sees a name in code, in a bare string and in an import path, but not in comments or prose", () => {
    expect(code(`if (s === "preserve") x(); // preserve`)).toMatch(/\bpreserve\b/);
    expect(code(`import { a } from "../strategies/planned/report.ts";`)).toMatch(/\bplanned\b/);
    expect(code(`const t = "a fold, a checkpoint"; /* digest */`)).not.toMatch(/\b(fold|checkpoint|digest)\b/);
    expect(code(`tool("context_checkpoint")`)).not.toMatch(/\bcheckpoint\b/);
  });

  it("contextLedger.strategy accepts exactly the registry's selectable strategies", () => {
    expect(STRATEGY_VALUES).toEqual(CONFIGURABLE.map((s) => s.name));
    expect(STRATEGY_VALUES).toEqual(
      STRATEGIES.filter((s) => !("selectable" in s && s.selectable === false)).map((s) => s.name),
    );
  });
});
