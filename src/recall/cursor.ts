// Opaque page cursors shared by the recall tools and the fold timeline:
// `<kind>:<fingerprint>:<ordinal>:<position>:<anchor id>`. The fingerprint ties a cursor to the arguments that
// produced it, the anchor id detects a branch that changed under it. Pure: no I/O.
import { quoted } from "./input.ts";

/** Longest cursor accepted; a real one is a few dozen characters. */
export const MAX_CURSOR_LENGTH = 512;

/** A decoded cursor. `ordinal` and `position` are safe non-negative integers; bounds are the caller's check. */
export interface Cursor {
  ordinal: number;
  position: number;
  anchor: string;
}

function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** Encode a cursor of kind `code` (one letter) for the query `key`. */
export function encodeCursor(code: string, key: string, cursor: Cursor): string {
  return `${code}:${fnv1a(key)}:${cursor.ordinal}:${cursor.position}:${cursor.anchor}`;
}

/** Decode a cursor of kind `code` issued for the query `key`, or explain why it cannot be used. */
export function decodeCursor(code: string, key: string, raw: string, what: string): Cursor | string {
  if (raw.length > MAX_CURSOR_LENGTH)
    return `the cursor is ${raw.length} characters; cursors are at most ${MAX_CURSOR_LENGTH}. Pass a cursor exactly as an earlier ${what} page returned it, or omit it`;
  const m = /^([a-z]):([0-9a-f]{8}):(\d+):(\d+):(.+)$/s.exec(raw);
  if (!m || m[1] !== code)
    return `invalid cursor ${quoted(raw)}: pass a cursor exactly as an earlier ${what} page returned it, or omit it`;
  if (m[2] !== fnv1a(key))
    return "this cursor belongs to a different query: repeat the original arguments with it, or omit the cursor to start over";
  const ordinal = Number(m[3]);
  const position = Number(m[4]);
  // Digits alone can spell numbers past 2^53, where arithmetic on them stops being exact.
  if (!Number.isSafeInteger(ordinal) || !Number.isSafeInteger(position)) {
    return `invalid cursor: its position is out of range. Pass a cursor exactly as an earlier ${what} page returned it, or omit it`;
  }
  return { ordinal, position, anchor: m[5] };
}
