// Text arbitraries for generated sessions: mostly plausible coding-session prose and code, with a
// minority of hostile strings (any unicode, lone surrogates, U+2028, markup-like tags) to stress serialization.
import fc from "fast-check";

const WORDS = [
  "read",
  "the",
  "file",
  "fix",
  "test",
  "failing",
  "refactor",
  "module",
  "function",
  "return",
  "import",
  "export",
  "type",
  "error",
  "stack",
  "trace",
  "null",
  "undefined",
  "config",
  "build",
  "lint",
  "npm",
  "session",
  "context",
  "tokens",
  "compact",
  "branch",
  "summary",
  "please",
  "now",
  "then",
  "why",
  "because",
  "parser",
  "reducer",
  "state",
  "event",
  "handler",
  "cache",
  "retry",
  "timeout",
  "README",
  "docs",
  "done",
];

const FILE_STEMS = ["index", "main", "parser", "session", "utils", "reducer", "config", "cli", "types", "store"];
const DIRS = ["src", "test", "docs", "lib", "src/core", "packages/app/src"];
const EXTS = [".ts", ".md", ".json", ".js", ".txt"];

/** A few words joined by spaces. */
export function wordsArb(minLength: number, maxLength: number): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...WORDS), { minLength, maxLength }).map((words) => words.join(" "));
}

/** A relative file path inside a project. */
export const pathArb: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(...DIRS), fc.constantFrom(...FILE_STEMS), fc.constantFrom(...EXTS))
  .map(([dir, stem, ext]) => `${dir}/${stem}${ext}`);

/** A few lines of code-like text, as tool output carries. */
export const codeArb: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      wordsArb(1, 6).map((w) => `// ${w}`),
      fc
        .tuple(fc.constantFrom(...FILE_STEMS), fc.nat({ max: 999 }))
        .map(([name, n]) => `export const ${name}${n} = ${n};`),
      fc.constant("}"),
      fc.constant(""),
    ),
    { minLength: 1, maxLength: 12 },
  )
  .map((lines) => lines.join("\n"));

/** Strings that have broken naive JSONL handling or markup-aware code before. */
const hostileArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.constantFrom(
    "line\u2028separator",
    "para\u2029graph",
    "<keepContext>keep me</keepContext>",
    "\r\n",
    "",
    "\u0000nul",
    '{"type":"session"}',
  ),
);

/** Free text for messages: prose, code, or (rarely) something hostile. */
export const proseArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: wordsArb(1, 20) },
  { weight: 2, arbitrary: codeArb },
  { weight: 1, arbitrary: hostileArb },
);

/** Tiny base64 payload standing in for image bytes. */
export const imageDataArb: fc.Arbitrary<string> = fc.base64String({ minLength: 4, maxLength: 24 });
