// Which lines of a tool output a digest keeps (error lines, result lines, the last lines, a read's outline) and how
// a kept line is quoted so tool output stays data. Pure string work; no I/O.
import { printable } from "../../log/display.ts";
import { ownCopy } from "../../log/own-copy.ts";

/** Longest quoted line; a longer one keeps its verbatim start and says how much was cut. */
export const MAX_LINE = 200;
/** Prefix of every line quoted from a tool output or an intermediate assistant text: nothing quoted can start a structural line. */
export const QUOTE = "  | ";

/** Words and shapes that report a failure (case-insensitive words; codes below are case-sensitive). */
const ERROR_WORD =
  /\b(?:[a-z]*error|[a-z]*exception|errors|failed|failure|fatal|panic|panicked|traceback|cannot|can't|could not|couldn't|not found|no such|undefined|denied|refused|timed out|aborted|segmentation fault|assertion)\b|✗|✘/i;
/** Error codes and markers: `ENOENT`, `ERR_MODULE_NOT_FOUND`, `TS2345`, `FAIL`, `E0308`. */
const ERROR_CODE = /\bE[A-Z]{3,}\b|\bERR_[A-Z_]+|\bTS\d{4}\b|\bFAIL(?:ED)?\b|\bE\d{4}\b/;
/** Result lines that sum a whole run up: totals of tests, files or suites, pass/fail counts, exit statuses. */
const SUMMARY_LINE =
  /\b(?:Tests?|Test Files|Test Suites|Suites?|Totals?)\b\s*:?\s+\d+|\b\d+\s+(?:passed|failed|failing|passing)\b|\bexit(?:ed)?\s+(?:with\s+)?(?:code|status)\s+-?\d+|\b(?:test result|Ran \d+ tests?)\b/i;
/** Lines that carry a result: test or build tallies, exit statuses, counts of errors or warnings. */
const RESULT_LINE =
  /\b\d+\s+(?:passed|failed|failing|passing|skipped|ignored|pending|todo|errors?|warnings?|tests?|specs?|suites?|files? changed|insertions?|deletions?)\b|\b(?:Tests?|Test Files|Test Suites|Suites?)\b\s*:?\s+\d+|\bexit(?:ed)?\s+(?:with\s+)?(?:code|status)\s+-?\d+|\b(?:test result|Ran \d+ tests?)\b/i;
/** Headings of prose (Markdown): the outline of a document that was read. */
const HEADING_LINE = /^#{1,6}\s+\S/;
/**
 * A definition in code, with the defined name in group 1: functions, classes, interfaces, types, enums, structs,
 * traits, Python `def`, Rust `fn`, Go `func`, and arrow functions bound to a constant.
 */
const DEFINITION =
  /^\s*(?:(?:export|pub(?:\([\w:]+\))?|public|private|protected|internal|static|async|default|abstract|final|override|declare|inline|extern)\s+)*(?:(?:function\*?|class|interface|type|enum|struct|trait|impl|def|fn|func|module|namespace|record|object)\s+([A-Za-z_$][\w$]*)|const\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s*)?(?:\([^)]*\)|[\w$]+)\s*=>)/;
/** Characters of a line the line tests look at: a result or error shows early, and a megabyte line stays cheap. */
const SCAN = 1_000;
/** Pi's bash tool appends the exit status as the last line of a failed command. */
const EXIT_STATUS = /^Command exited with code (-?\d+)\s*$/;

/** Split an output into lines, without the trailing empty line of a final newline. */
export function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

/**
 * Exit status Pi's bash tool reported in an output, if any: on one of its last three lines (as {@link splitLines}
 * splits it). Only those lines are read, as every step's output is asked.
 */
export function exitStatus(text: string): number | undefined {
  let end = text.length;
  // A final newline ends the last line; it does not start an empty one.
  if (end > 0 && text.charCodeAt(end - 1) === 10) end--;
  for (let n = 0; n < 3; n++) {
    const start = end === 0 ? 0 : text.lastIndexOf("\n", end - 1) + 1;
    // `trim` takes the `\r` of a CRLF line too.
    const match = EXIT_STATUS.exec(text.slice(start, end).trim());
    if (match) return Number(match[1]);
    if (start === 0) return undefined;
    end = start - 1;
  }
  return undefined;
}

/** The kinds of selection a digest makes from one output. */
export type Selection = "failure" | "result" | "outline" | "listing";

/** A bare file name with a source, config or document extension. */
const FILE_NAME =
  /^[\w-]+(?:\.[\w-]+)*\.(?:ts|tsx|mts|cts|js|jsx|mjs|cjs|json|md|txt|py|rs|go|java|kt|rb|c|cc|cpp|h|hpp|cs|php|sh|yml|yaml|toml|css|scss|html|sql|lock)$/;
/** Shortest and longest mentioned name listed (longer tokens are data, not names). */
const NAME_LENGTH = { min: 4, max: 80 };

/**
 * Paths and names a text mentions, each once, in order of first mention: a token (a run of name characters, as
 * {@link namesIn} finds them, up to 320 long, trimmed of the punctuation around it) with a slash and a letter
 * (`./config.js`, `@scope/pkg`, `src/a.ts`) or a bare file name is a path; otherwise its structured names count.
 * A scan over the code units: only what may be listed becomes a string, as read outputs run to megabytes.
 */
export function mentionedNames(text: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    // Callers memoize the list per message for the whole session; a slice would pin the output it came from.
    out.push(ownCopy(name));
  };
  forEachRun(text, (from, to) => mentionsOfRun(text, from, to, add));
  return out;
}

/**
 * Each run of name characters in `text` up to 320 long (longer ones are data), as its range `[from, to)`, and
 * whether it is one word (only `[\w$]`): the one tokenizer of {@link mentionedNames} and {@link namesIn}.
 */
function forEachRun(text: string, visit: (from: number, to: number, word: boolean) => void): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    if (!nameChar(text.charCodeAt(i), false)) {
      i++;
      continue;
    }
    let end = i + 1;
    let word = NAME_CHAR[text.charCodeAt(i)] === 2;
    while (end < n && nameChar(text.charCodeAt(end), false)) {
      if (NAME_CHAR[text.charCodeAt(end)] !== 2) word = false;
      end++;
    }
    if (end - i <= 4 * NAME_LENGTH.max) visit(i, end, word);
    i = end;
  }
}

/** Where a run's token starts, trimmed as a sentence or a list leaves it: past leading `+` and `-`. */
function tokenStart(text: string, from: number, to: number): number {
  while (from < to && (text.charCodeAt(from) === 43 || text.charCodeAt(from) === 45)) from++;
  return from;
}

/** Where a run's token ends, trimmed of trailing `.`, `+` and `-` (a run holds no `,:;`). */
function tokenEnd(text: string, from: number, to: number): number {
  while (to > from && ".+-".includes(text[to - 1])) to--;
  return to;
}

/** The mentions of one run of name characters `text[from, to)` (see {@link mentionedNames}). */
function mentionsOfRun(text: string, from: number, to: number, add: (name: string) => void): void {
  from = tokenStart(text, from, to);
  to = tokenEnd(text, from, to);
  let slash = false;
  let letter = false;
  let dot = false;
  for (let k = from; k < to; k++) {
    const code = text.charCodeAt(k);
    if (code === 47) slash = true;
    else if (code === 46) dot = true;
    else if ((code | 32) >= 97 && (code | 32) <= 122) letter = true;
  }
  // A file name holds a dot; only then is the token worth a string before it is known to be listed.
  if (slash && letter) {
    addSized(text.slice(from, to), add);
    return;
  }
  if (dot) {
    const token = text.slice(from, to);
    if (FILE_NAME.test(token)) {
      addSized(token, add);
      return;
    }
  }
  // The word parts: maximal runs of `[\w$]` inside the token.
  let k = from;
  while (k < to) {
    if (NAME_CHAR[text.charCodeAt(k)] !== 2) {
      k++;
      continue;
    }
    let stop = k + 1;
    while (stop < to && NAME_CHAR[text.charCodeAt(stop)] === 2) stop++;
    const length = stop - k;
    if (length >= NAME_LENGTH.min && length <= NAME_LENGTH.max && structured(text, k, stop)) add(text.slice(k, stop));
    k = stop;
  }
}

/** `add` for a name within the listed lengths. */
function addSized(name: string, add: (name: string) => void): void {
  if (name.length >= NAME_LENGTH.min && name.length <= NAME_LENGTH.max) add(name);
}

/**
 * True when the word run `text[from, to)` is a name with inner structure (camelCase, PascalCase with a second capital,
 * snake_case, CONSTANT_CASE): the program's own identifiers, as opposed to English words and keywords. It does not
 * start with a digit, and after its first character a lower case letter or digit comes before a capital, or `_`
 * stands between two letters or digits. Read off the code units, without making the run a string.
 */
function structured(text: string, from: number, to: number): boolean {
  const first = text.charCodeAt(from);
  if (first >= 48 && first <= 57) return false;
  // After the first character: a lower case letter or digit before a capital, or `_` between two letters or digits.
  for (let k = from + 1; k + 1 < to; k++) {
    const a = text.charCodeAt(k);
    const b = text.charCodeAt(k + 1);
    if (isLowerOrDigit(a) && b >= 65 && b <= 90) return true;
    if (b === 95 && k + 2 < to && isAlnum(a) && isAlnum(text.charCodeAt(k + 2))) return true;
  }
  return false;
}

function isLowerOrDigit(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
}

function isAlnum(code: number): boolean {
  return isLowerOrDigit(code) || (code >= 65 && code <= 90);
}

/** Names that can be asked for and added to: what a digest needs of the names already in view. */
export interface NameSet {
  has(name: string): boolean;
  add(name: string): unknown;
}

/** Character classes of the name scan, by UTF-16 code unit below 128: 1 a name character (`[\w.@~+$/-]`),
 * 2 a word character as well (`[\w$]`). Everything from 128 on is neither. */
const NAME_CHAR = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[\w$]/.test(ch)) NAME_CHAR[c] = 2;
  else if (/[.@~+/-]/.test(ch)) NAME_CHAR[c] = 1;
}

/** True for a code unit that a name run holds; with `word`, only the word characters among them. */
function nameChar(code: number, word: boolean): boolean {
  return code < 128 && NAME_CHAR[code] >= (word ? 2 : 1);
}

/**
 * Every name and path a text shows (including the names inside paths), for checking what a view already holds: each
 * run of name characters (`[\w.@~+$/-]`) up to 320 long, trimmed of surrounding punctuation, and the word parts of a
 * run that is not one word. A scan over the code units, one pass, as the digest reads every text in view this way.
 */
export function namesIn(text: string): Set<string>;
export function namesIn<S extends Pick<NameSet, "add">>(text: string, into: S): S;
export function namesIn(text: string, into: Pick<NameSet, "add"> = new Set<string>()): Pick<NameSet, "add"> {
  forEachNameRange(text, (from, to) => into.add(text.slice(from, to)));
  return into;
}

/**
 * Each name {@link namesIn} finds in `text`, as its range `[from, to)`, in the order found and as often as found: for
 * a caller that looks names up without making each occurrence a string first.
 */
export function forEachNameRange(text: string, visit: (from: number, to: number) => void): void {
  forEachRun(text, (from, to, word) => visitRun(text, from, to, word, visit));
}

/** Visit one run's trimmed token, and its word parts when it is not one word (see {@link namesIn}). */
function visitRun(
  text: string,
  from: number,
  to: number,
  word: boolean,
  visit: (from: number, to: number) => void,
): void {
  if (word) {
    visit(from, to);
    return;
  }
  from = tokenStart(text, from, to);
  to = tokenEnd(text, from, to);
  visit(from, to);
  let start = -1;
  let words = true;
  for (let k = from; k < to; k++) {
    if (NAME_CHAR[text.charCodeAt(k)] === 2) {
      if (start < 0) start = k;
    } else {
      words = false;
      if (start >= 0) visit(start, k);
      start = -1;
    }
  }
  // A trimmed token of word characters only was visited whole above, and is its own only part.
  if (!words && start >= 0) visit(start, to);
}

/** Names a file that was read defines, in order of first definition (each once). */
export function definedNames(lines: readonly string[]): string[] {
  const names: string[] = [];
  const seen = new Set<string>();
  for (const line of lines) {
    // A definition starts its line; looking at the start keeps a huge line cheap.
    const match = DEFINITION.exec(line.slice(0, SCAN));
    const name = match?.[1] ?? match?.[2];
    if (name && !seen.has(name)) {
      seen.add(name);
      names.push(name);
    }
  }
  return names;
}

/** Per selection: how many error, result, outline, head and last lines, and the overall cap. */
const LIMITS: Record<
  Selection,
  { error: number; result: number; outline: number; head: number; last: number; total: number }
> = {
  // A failure: the error lines say what broke, the tallies how much, the last line where it stopped.
  failure: { error: 3, result: 3, outline: 0, head: 0, last: 1, total: 7 },
  // A successful command: its tallies (per file, per suite), else its last line (where most tools print a summary).
  result: { error: 1, result: 10, outline: 0, head: 0, last: 1, total: 10 },
  // A document that was read: its first headings (code is outlined by its defined names instead).
  outline: { error: 0, result: 0, outline: 4, head: 0, last: 0, total: 4 },
  // Search and listing tools: the first hits.
  listing: { error: 0, result: 0, outline: 0, head: 2, last: 0, total: 2 },
};

/**
 * Indexes of the lines worth keeping from an output, in output order. Pi's own exit-status line is left out (the
 * digest states the status on the call line). Blank lines never count.
 */
export function pickLines(lines: readonly string[], selection: Selection): number[] {
  const limit = LIMITS[selection];
  const picked = new Set<number>();
  let n = 0;
  const take = (test: (line: string) => boolean, count: number, fromEnd = false) => {
    for (let k = 0; k < lines.length && n < count && picked.size < limit.total; k++) {
      const i = fromEnd ? lines.length - 1 - k : k;
      const line = lines[i];
      // Pi's own exit-status line is only worth quoting as the last line of a failure.
      const head = line.length > SCAN ? line.slice(0, SCAN) : line;
      if (
        picked.has(i) ||
        !head.trim() ||
        (EXIT_STATUS.test(head.trim()) && !(fromEnd && selection === "failure")) ||
        !test(head)
      )
        continue;
      picked.add(i);
      n++;
    }
    n = 0;
  };
  take(isErrorLine, limit.error);
  // Run summaries before per-file tallies, so a capped selection keeps the totals.
  const before = picked.size;
  take((line) => SUMMARY_LINE.test(line), limit.result);
  const summaries = picked.size - before;
  take((line) => RESULT_LINE.test(line), limit.result - summaries);
  take((line) => HEADING_LINE.test(line), limit.outline);
  take(() => true, limit.head);
  // The last line only when nothing else said how it ended.
  if (picked.size === 0 || selection === "failure") take(() => true, limit.last, true);
  return [...picked].sort((a, b) => a - b);
}

/** True for a line that reports a failure (used to pick a failed output's headline). */
export function isErrorLine(line: string): boolean {
  return ERROR_WORD.test(line) || ERROR_CODE.test(line);
}

/**
 * A line as the digest quotes it: control characters escaped, and a line longer than `max` (default
 * {@link MAX_LINE}) cut to its verbatim start with the number of characters left out. The text after the prefix is always a verbatim prefix of the
 * source line when the line has no control characters.
 */
export function quote(line: string, prefix = QUOTE, max = MAX_LINE): string {
  const shown = printable(line);
  if (shown.length <= max) return `${prefix}${shown}`;
  let end = max;
  const code = shown.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${prefix}${shown.slice(0, end)} […${shown.length - end} chars]`;
}

/**
 * One value shown inline on a call line (a path, the first line of a command): control characters escaped, cut like
 * a quoted line, with a note when the value had more lines.
 */
export function inline(value: string): string {
  const lines = splitLines(value);
  const first = quote(lines[0] ?? "", "");
  return lines.length > 1 ? `${first} [+${lines.length - 1} lines]` : first;
}
