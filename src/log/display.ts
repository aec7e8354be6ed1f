// Text on its way to a person or a model as a tool result: raw control bytes become visible escapes, so session
// content (an ANSI-coloured build log, a NUL in a file) can never drive the terminal, and size stays bounded.
// Pure: no I/O.

/** C0 controls except tab and newline, DEL, and the C1 range: what a terminal acts on instead of printing. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Replace each raw control character by a visible `\u001b`-style escape; tab and newline stay. */
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
  const text = typeof value === "string" ? JSON.stringify(bounded(value, max)) : (JSON.stringify(value) ?? String(value));
  return bounded(printable(text), max + 2);
}
