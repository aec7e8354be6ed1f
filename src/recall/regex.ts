// Patterns for context_grep on a linear-time engine (re2js, a port of RE2): compilation with bounded cost and
// clear refusals, a literal prefilter that also works case-insensitively, and case folding for exact text.
// Pure: no I/O, no clocks.
import { RE2JS, RE2JSException } from "re2js";
import { bounded } from "../log/display.ts";

/** Longest regular expression source accepted. */
export const MAX_REGEX_LENGTH = 500;
/** Longest exact text (`literal: true`) accepted. */
export const MAX_LITERAL_LENGTH = 2_000;
/**
 * Counted repetitions (`{n}`, `{n,}`, `{n,m}`) may add up to this much. RE2 expands them into copies when it
 * compiles, so this bounds compile time and program size before compiling.
 */
export const MAX_COUNTED_REPEAT = 1_000;
/** Largest compiled program accepted. Engine work per character grows with the program size. */
export const MAX_PROGRAM_SIZE = 5_000;

/**
 * Work of one engine call, in characters times program size. A single call cannot be interrupted, so long
 * inputs are cut to about this much work per call; the scan checks its budgets between calls.
 */
export const STEP_WORK = 4_000_000;
/** Fewest characters one engine call is given, whatever the program size. */
export const MIN_STEP_CHARS = 1_024;
/** Overlap of consecutive windows over a line too long for one call: a match this long is never split. */
export const WINDOW_OVERLAP = 256;

/** Text every match must contain (all of `parts`, or any of them), as a cheap test before the engine runs. */
export type Requirement = { kind: "text"; text: string } | { kind: "all" | "any"; parts: Requirement[] };

/** A compiled search pattern, or the reason it was refused. */
export interface CompiledRegex {
  /** Matches inside text with `^`/`$` at line ends (RE2 multiline mode). */
  test(text: string): boolean;
  /** Offset of the leftmost match in `text`, or -1. Slower than `test` (it tracks positions). */
  locate(text: string): number;
  /** Instructions in the compiled program: the work one character of input costs, at most. */
  programSize: number;
  /** Characters one engine call is given before the scan checks its budgets. */
  stepChars: number;
  /**
   * Text that must occur (after {@link foldCase} when case-insensitive) in any text that matches; undefined
   * when the pattern needs none. Lets the scan skip an entry with one indexOf.
   */
  requirement?: Requirement;
  /**
   * False when the pattern can behave differently on several lines joined than on one line alone (`\A`, `\z`,
   * or multiline mode switched off): every line is then tested on its own.
   */
  joinable: boolean;
}

/**
 * Fold text for a case-insensitive comparison without changing its length, so offsets in the folded text are
 * offsets in the original: Unicode lowercase, with the few context- or length-dependent cases made uniform.
 */
export function foldCase(text: string): string {
  let folded = text.toLowerCase();
  if (folded.length !== text.length) {
    // A handful of characters lowercase to two (İ becomes i + combining dot): keep those as they are.
    let out = "";
    for (const ch of text) {
      const lower = ch.toLowerCase();
      out += lower.length === ch.length ? lower : ch;
    }
    folded = out;
  }
  // Final sigma depends on its neighbours, and long s has no lowercase of its own: both fold as RE2 folds them.
  if (folded.includes("ς")) folded = folded.replaceAll("ς", "σ");
  if (folded.includes("ſ")) folded = folded.replaceAll("ſ", "s");
  return folded;
}

/** True when `requirement` holds for `text` (already folded when the search is case-insensitive). */
export function meetsRequirement(requirement: Requirement, text: string): boolean {
  switch (requirement.kind) {
    case "text":
      return text.includes(requirement.text);
    case "all":
      return requirement.parts.every((p) => meetsRequirement(p, text));
    case "any":
      return requirement.parts.some((p) => meetsRequirement(p, text));
  }
}

/**
 * Sum of the counted repetitions in a pattern, read from its text: `{n}` counts n, `{n,m}` counts m, `{n,}`
 * counts n. Escapes and character classes are skipped. Only a cost estimate: RE2 still parses the pattern.
 */
export function countedRepeats(source: string): number {
  let total = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") {
      // A class ends at the first unescaped `]` after its first member, which may itself be `]`.
      let j = i + 1;
      if (source[j] === "^") j++;
      if (source[j] === "]") j++;
      while (j < source.length && source[j] !== "]") j += source[j] === "\\" ? 2 : 1;
      i = j;
    } else if (c === "{") {
      const m = /^\{(\d{1,9})(,(\d{0,9}))?\}/.exec(source.slice(i, i + 22));
      if (m) total += Number(m[3] ? m[3] : m[1]);
    }
  }
  return total;
}

/** Why RE2 refused a pattern, in terms of what the user can do about it. */
function explainSyntaxError(error: RE2JSException): string {
  const message = error.message.replace(/^error parsing regexp: /, "");
  if (/invalid escape sequence: `\\[1-9k]/.test(message)) {
    return "backreferences (\\1, \\k<name>) are not supported: the search engine runs in linear time and cannot match text against an earlier group. Search for the repeated text itself";
  }
  if (/`\(\?[=!]/.test(message))
    return "lookahead ((?=…), (?!…)) is not supported by the linear-time engine; match the following text instead";
  if (/`\(\?<[=!]/.test(message))
    return "lookbehind ((?<=…), (?<!…)) is not supported by the linear-time engine; match the preceding text instead";
  if (/invalid escape sequence: `\\u/.test(message))
    return "\\u escapes are not supported; write a code point as \\x{00e9}";
  if (message.startsWith("invalid repeat count"))
    return `${bounded(message, 120)}: a count may be at most 1000, and nested counts multiply`;
  return `invalid regular expression: ${bounded(message, 200)}`;
}

type Loose = Record<string, unknown>;

/**
 * Read re2js's own literal prefilter (the tree it builds from the parsed pattern) into a {@link Requirement}.
 * It is built for case-sensitive matching; `fold` maps its texts for a case-insensitive search, where only
 * ASCII texts are used because only their case variants are certain to fold alike in both engines. Anything
 * unexpected means no requirement: the scan is then slower, never wrong.
 */
function readPrefilter(node: unknown, fold: boolean, depth = 0): Requirement | undefined {
  if (!node || typeof node !== "object" || depth > 64) return undefined;
  const { type, str, subs } = node as Loose;
  // re2js Prefilter.Type: 0 none, 1 exact text, 2 all of, 3 any of.
  if (type === 1 && typeof str === "string" && str.length > 0) {
    if (!fold) return { kind: "text", text: str };
    const text = foldCase(str);
    return /^[\x00-\x7f]+$/.test(text) ? { kind: "text", text } : undefined;
  }
  if ((type === 2 || type === 3) && Array.isArray(subs)) {
    const parts = subs.map((s) => readPrefilter(s, fold, depth + 1));
    if (type === 2) {
      // Dropping a part of "all of" only weakens the test.
      const kept = parts.filter((p): p is Requirement => p !== undefined);
      return kept.length === 0 ? undefined : kept.length === 1 ? kept[0] : { kind: "all", parts: kept };
    }
    // One part without a requirement makes "any of" hold for every text.
    return parts.length > 0 && parts.every((p) => p !== undefined)
      ? { kind: "any", parts: parts as Requirement[] }
      : undefined;
  }
  return undefined;
}

/**
 * Compile a regular expression for grep, or say why not. RE2 syntax: what JavaScript accepts minus
 * backreferences and lookaround; `^`/`$` match at line ends; `caseSensitive: false` folds case.
 */
export function compileRegex(source: string, caseSensitive: boolean): CompiledRegex | string {
  if (source.length === 0) return "pattern must be a non-empty string";
  if (source.length > MAX_REGEX_LENGTH)
    return `the pattern is ${source.length} characters; the limit is ${MAX_REGEX_LENGTH} for a regular expression (${MAX_LITERAL_LENGTH} with literal: true)`;
  const repeats = countedRepeats(source);
  if (repeats > MAX_COUNTED_REPEAT)
    return `counted repetitions ({n,m}) add up to ${repeats}; the limit is ${MAX_COUNTED_REPEAT}. Use smaller counts, or + and *`;
  let re: RE2JS;
  let exact: RE2JS;
  try {
    exact = RE2JS.compile(source, RE2JS.MULTILINE);
    re = caseSensitive ? exact : RE2JS.compile(source, RE2JS.MULTILINE | RE2JS.CASE_INSENSITIVE);
  } catch (error) {
    if (error instanceof RE2JSException) return explainSyntaxError(error);
    throw error;
  }
  const programSize = re.programSize();
  if (programSize > MAX_PROGRAM_SIZE)
    return `the pattern compiles to ${programSize} instructions; the limit is ${MAX_PROGRAM_SIZE}. Use smaller counted repetitions`;
  const requirement = readPrefilter(exact.re2().prefilter as unknown, !caseSensitive);
  return {
    test: (text) => re.test(text),
    locate: (text) => {
      const m = re.matcher(text);
      return m.find() ? m.start() : -1;
    },
    programSize,
    stepChars: Math.max(MIN_STEP_CHARS, Math.floor(STEP_WORK / programSize)),
    ...(requirement ? { requirement } : {}),
    joinable: !/\\[Az]|\(\?[imsU]*-[isU]*m/.test(source),
  };
}
