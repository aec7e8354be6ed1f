// The item extractor as it was before its work was bounded: one unbounded scan of the whole text, quadratic
// on a long token. Kept only as the oracle the bounded extractor must agree with on ordinary text.
import type { Item } from "../../../src/lab/needed.ts";
import { relativeToCwd } from "../../../src/lab/probes.ts";

// File extensions that make a bare name (no slash) a path: common source, config and document files.
const EXTENSIONS =
  "ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|md|mdx|txt|py|rb|rs|go|java|kt|swift|c|cc|cpp|h|hpp|cs|php|sh|bash|zsh|yml|yaml|toml|ini|cfg|conf|xml|html|htm|css|scss|sql|lock|log|csv|env|vue|svelte|lua|zig|ex|exs|dart|scala|gradle|proto|graphql";

// One left-to-right scan; the first alternative that matches at a position wins, so an identifier inside a
// path or a number inside a version is not counted twice.
const ITEM = new RegExp(
  [
    // URLs, then paths: absolute, home, ./ or ../, or relative with at least one slash.
    String.raw`(?<url>https?://[^\s"'<>()\[\]{}\x60]+)`,
    String.raw`(?<path>(?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+-]+)*|[\w.@+-]+(?:/[\w.@+-]+)+|\b[\w-]+(?:\.[\w-]+)*\.(?:${EXTENSIONS})\b)`,
    // Error names and codes: TypeError, AbortException, ENOENT, ERR_MODULE_NOT_FOUND, TS2345.
    String.raw`(?<error>\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\bE[A-Z]{3,}\b|\bERR_[A-Z0-9_]+\b|\bTS\d{4,5}\b)`,
    // Identifiers with inner structure: camelCase, PascalCase with a second capital, snake_case, CONSTANT_CASE.
    String.raw`(?<identifier>\b[A-Za-z_$][\w$]*(?:[a-z0-9][A-Z]|[A-Za-z0-9]_[A-Za-z0-9])[\w$]*\b)`,
    // Hex ids (commit hashes and the like): 7 to 40 hex digits holding both a digit and a letter.
    String.raw`(?<hex>\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b)`,
    // Numbers: dotted (versions, decimals) or of three or more digits.
    String.raw`(?<number>\b\d+(?:\.\d+)+\b|\b\d{3,}\b)`,
  ].join("|"),
  "g",
);

/** Longest item kept: longer matches are data blobs, not things an agent carries in mind. */
const MAX_ITEM = 200;
/** Shortest path or identifier kept. */
const MIN_ITEM = 4;

/** Trailing punctuation a sentence adds to a path or URL. */
function trimTrailing(text: string): string {
  return text.replace(/[.,:;!?]+$/, "");
}

/** Items in a text, in order, duplicates included. */
export function referenceItems(text: string, cwd = ""): Item[] {
  const out: Item[] = [];
  for (const match of text.matchAll(ITEM)) {
    const g = match.groups!;
    let item: Item | undefined;
    if (g.url) item = { kind: "path", text: trimTrailing(g.url) };
    else if (g.path) {
      const path = trimTrailing(g.path);
      // A lone "/" or "./" and paths without a letter (dates like 12/05/2024, fractions) carry nothing.
      if (/[A-Za-z]/.test(path)) item = { kind: "path", text: relativeToCwd(path, cwd) ?? path };
    } else if (g.error) item = { kind: "error", text: g.error };
    else if (g.identifier || g.hex) item = { kind: "identifier", text: g.identifier ?? g.hex };
    else if (g.number) item = { kind: "number", text: g.number };
    if (
      item &&
      item.text.length <= MAX_ITEM &&
      (item.kind === "number" || item.kind === "error" || item.text.length >= MIN_ITEM)
    )
      out.push(item);
  }
  return out;
}
