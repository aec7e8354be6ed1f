// Text on its way to a person or a model as a tool result: raw control bytes become visible escapes, so session
// content (an ANSI-coloured build log, a NUL in a file) can never drive the terminal, and size stays bounded.
// Pure: no I/O.

/**
 * What a terminal acts on instead of printing, or a reader takes for structure: C0 controls except tab and newline,
 * DEL, the C1 range (NEL, CSI), the Unicode line and paragraph separators, and the bidi controls that reorder how
 * a line is displayed ("Trojan Source").
 */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The bidi controls alone (see {@link CONTROL}). */
export const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * Every character a model or a terminal may read as a line break: `\r\n`, `\n`, `\r`, vertical tab, form feed, NEL
 * (U+0085), and the Unicode line and paragraph separators (U+2028, U+2029). Text quoted line by line must split on
 * all of them, or the text after one can pose as a line of ours.
 */
export const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/;
/**
 * A line break inside a line already split at `\n` (see {@link LINE_BREAK}): anything but the `\r` that ends a
 * CRLF line, after which a reader sees nothing more.
 */
export const BREAK_IN_LINE = /[\u000b\u000c\u0085\u2028\u2029]|\r(?!$)/;

/** What `JSON.stringify` leaves raw that a reader may take for a line break or a control: DEL, C1 (NEL), U+2028/9. */
const RAW_IN_JSON = /[\u007f-\u009f\u2028\u2029]/g;

/**
 * JSON text with the characters `JSON.stringify` leaves raw (NEL, U+2028, U+2029, DEL, C1) written as `\uXXXX`, so
 * the encoded value stays on one line for every reader and still parses to the same value.
 */
export function lineSafeJson(json: string): string {
  return json.replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `text` split at every line break a reader may see (see {@link LINE_BREAK}). */
export function splitLines(text: string): string[] {
  return text.split(LINE_BREAK);
}

/** Replace each raw control character (see above) by a visible `\u001b`-style escape; tab and newline stay. */
export function printable(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** `text` cut to at most `max` characters (marker included), never splitting a surrogate pair. */
export function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = `… [cut: ${text.length} chars in all]`;
  let end = Math.max(0, max - marker.length);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${text.slice(0, end)}${marker}`;
}

/**
 * A value as a message may quote it: JSON (strings quoted), cut to `max` characters with a marker giving its full
 * length, every control character escaped. The one way this package echoes input or file content back.
 */
export function quoted(value: unknown, max = 80): string {
  // Cut a huge string before encoding it (cheap), then bound the escaped form, which control characters lengthen.
  const text =
    typeof value === "string" ? JSON.stringify(bounded(value, max)) : (JSON.stringify(value) ?? String(value));
  return bounded(printable(text), max + 2);
}

/** A plain name (a strategy, a label, an id) shows as it is; anything else as {@link quoted} JSON, on one line. */
const PLAIN_NAME = /^[\w.:#@/+-][\w .:#@/+-]{0,79}$/;

/**
 * A name from a session file (a label, a compaction's strategy, an id) as a message shows it: as it is when it is plain
 * (letters, digits, spaces, `.:#@/+-_`), else quoted, escaped and cut, so it cannot break its line or drive a terminal.
 */
export function shownName(value: unknown, max = 80): string {
  return typeof value === "string" && PLAIN_NAME.test(value) ? value : quoted(value, max);
}

/** The most one notice may show: a dashboard or a listing is far shorter. */
export const NOTICE_MAX_CHARS = 20_000;

/**
 * A message on its way to the user's terminal (`ctx.ui.notify`): every control, separator and bidi character from a
 * session file or a provider escaped, so nothing in it can drive the terminal (OSC 52 writes the clipboard), and its
 * length bounded. Our own newlines stay; a field that must stay on its line is {@link quoted} where it is interpolated.
 */
export function forTerminal(message: string): string {
  return bounded(printable(message), NOTICE_MAX_CHARS);
}
