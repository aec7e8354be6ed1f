// One word per concept in text a user reads: "fold" is the fold strategy and its act, the hiding rule a fold, a tool
// summary or a digest stores is a "range", "checkpoint" is the default strategy, `context_checkpoint` sets "labels",
// and preserve writes "tool summaries". Scans the string literals of src/** (cards, dashboard, notices, tool
// descriptions, prompts) and the prose docs for the retired phrases.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");

/** Retired phrases, matched as words, case ignored. `context_checkpoint name` is the tool's argument, not a match. */
const RETIRED: readonly RegExp[] = [
  /\bpreserve checkpoints?\b/i,
  /\btool context checkpoints?\b/i,
  /\btool checkpoints?\b/i,
  /\bcheckpoint names?\b/i,
  /\bcheckpoint markers?\b/i,
  /\bfold rules?\b/i,
];

// Another session owns these lab rows (they replay strategies for the lab); their notes are reworded there.
const NOT_OURS: string[] = [];

function files(dir: string, ext: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? files(join(dir, d.name), ext) : d.name.endsWith(ext) ? [join(dir, d.name)] : [],
  );
}

/**
 * Every piece of literal text in a TypeScript source: string contents and the fixed parts of template literals
 * (substitutions are scanned as code, so a string inside one is found too). Comments and regex literals are skipped.
 * A small scanner: the installed TypeScript is the native compiler, which has no JavaScript parser API to walk.
 */
function literals(source: string): string[] {
  const out: string[] = [];
  let i = 0;
  // Where a `/` starts a regex rather than a division: after an operator, an opening bracket or a keyword.
  const regexAllowed = (): boolean => {
    let j = i - 1;
    while (j >= 0 && /\s/.test(source[j])) j--;
    if (j < 0) return true;
    if ("(,=:[!&|?{};+-*%<>~^".includes(source[j])) return true;
    return /\b(return|typeof|case|in|of)$/.test(source.slice(Math.max(0, j - 6), j + 1));
  };
  const quoted = (quote: string): void => {
    let text = "";
    i++;
    while (i < source.length && source[i] !== quote && source[i] !== "\n") {
      if (source[i] === "\\") {
        text += source[i + 1] ?? "";
        i += 2;
      } else text += source[i++];
    }
    i++;
    out.push(text);
  };
  // Scan code until an unmatched `}` (the end of a template substitution) or the end of the source.
  const code = (nested: boolean): void => {
    let depth = 0;
    while (i < source.length) {
      const c = source[i];
      const two = source.slice(i, i + 2);
      if (two === "//") while (i < source.length && source[i] !== "\n") i++;
      else if (two === "/*") {
        const end = source.indexOf("*/", i + 2);
        i = end < 0 ? source.length : end + 2;
      } else if (c === '"' || c === "'") quoted(c);
      else if (c === "`") template();
      else if (c === "/" && regexAllowed()) {
        let inClass = false;
        i++;
        while (i < source.length && source[i] !== "\n" && (inClass || source[i] !== "/")) {
          if (source[i] === "\\") i++;
          else if (source[i] === "[") inClass = true;
          else if (source[i] === "]") inClass = false;
          i++;
        }
        i++;
      } else if (c === "{") {
        depth++;
        i++;
      } else if (c === "}") {
        i++;
        if (nested && depth-- === 0) return;
      } else i++;
    }
  };
  const template = (): void => {
    let text = "";
    i++;
    while (i < source.length && source[i] !== "`") {
      if (source[i] === "\\") {
        text += source[i + 1] ?? "";
        i += 2;
      } else if (source.startsWith("${", i)) {
        out.push(text);
        text = "";
        i += 2;
        code(true);
      } else text += source[i++];
    }
    i++;
    out.push(text);
  };
  code(false);
  return out;
}

function hits(where: string, texts: readonly string[]): string[] {
  const found: string[] = [];
  for (const text of texts)
    for (const phrase of RETIRED) {
      const m = phrase.exec(text);
      if (m)
        found.push(`${where}: "${m[0]}" in ${JSON.stringify(text.slice(Math.max(0, m.index - 40), m.index + 60))}`);
    }
  return found;
}

describe("one word per concept in user-facing text", () => {
  it("no string literal in src uses a retired phrase", () => {
    const found = files(join(ROOT, "src"), ".ts")
      .filter((f) => !NOT_OURS.some((p) => relative(ROOT, f).startsWith(p)))
      .flatMap((f) => hits(relative(ROOT, f), literals(readFileSync(f, "utf8"))));
    expect(found).toEqual([]);
  });

  it("README, docs (benchmark history aside) and the recall skill use no retired phrase", () => {
    const prose = [
      join(ROOT, "README.md"),
      ...files(join(ROOT, "docs"), ".md"),
      ...files(join(ROOT, "skills"), ".md"),
    ].filter((f) => !f.endsWith("docs/benchmarks.md"));
    const found = prose.flatMap((f) =>
      readFileSync(f, "utf8")
        .split("\n")
        .flatMap((line, n) => hits(`${relative(ROOT, f)}:${n + 1}`, [line])),
    );
    expect(found).toEqual([]);
  });

  it("the scan reads strings and template parts, not comments, and spares the tool's own names", () => {
    const src = [
      "// a fold rule, /* a preserve checkpoint */",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the scanned source text itself holds a template literal
      "const re = /[\"'`]/g; const a = `Tool Context checkpoint #${n ? `x${m}` : '-'} of ${m}`;",
      "const b = 'a preserve checkpoint'; const c = \"it's a fold rule\";",
    ].join("\n");
    expect(literals(src)).toEqual([
      "Tool Context checkpoint #",
      "x",
      "",
      "-",
      " of ",
      "",
      "a preserve checkpoint",
      "it's a fold rule",
    ]);
    expect(hits("x", literals(src))).toHaveLength(3);
    expect(hits("x", ["set a label with context_checkpoint name: x", "backupCheckpoint names the position"])).toEqual(
      [],
    );
    expect(hits("x", ["the Checkpoint name is taken"])).toHaveLength(1);
  });
});
