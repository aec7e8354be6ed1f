// Loads a session file from disk for the lab and the `show` command: streams lines, reports malformed ones
// with their line numbers, gives legacy files stable ids, then runs Pi's own migrations.
import { constants } from "node:buffer";
import { createReadStream } from "node:fs";
import type { FileEntry, SessionEntry, SessionHeader } from "../log/entries.ts";
import { assignLegacyIds, parseLine, type LineDiagnostic } from "../log/jsonl.ts";

export interface LoadedSession {
  path: string;
  header: SessionHeader | undefined;
  entries: SessionEntry[];
  diagnostics: LineDiagnostic[];
  /** Entries whose `type` this version does not know, by type. */
  unknownTypes: Record<string, number>;
}

const KNOWN_TYPES = new Set([
  "message",
  "thinking_level_change",
  "model_change",
  "usage",
  "compaction",
  "branch_summary",
  "custom",
  "custom_message",
  "context_edit",
  "label",
  "session_info",
]);

/** One line of a file: its 1-based number and its text, or only its length when it was too long to hold. */
export type FileLine = { line: number; text: string } | { line: number; tooLong: number };

/** Longest line kept as text: a longer one cannot become a JavaScript string at all. */
export const MAX_LINE_BYTES = constants.MAX_STRING_LENGTH;

/**
 * The lines of a file, streamed as bytes. A line longer than `maxLineBytes` is skipped without ever being
 * held whole (readline would throw an uncaught RangeError past V8's string limit). `\r\n` counts as `\n`.
 */
export async function* fileLines(path: string, maxLineBytes = MAX_LINE_BYTES): AsyncGenerator<FileLine> {
  let pieces: Buffer[] = [];
  let length = 0;
  let line = 0;
  const finish = (): FileLine => {
    line++;
    if (length > maxLineBytes) return { line, tooLong: length };
    let text = (pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, length)).toString("utf8");
    if (text.endsWith("\r")) text = text.slice(0, -1);
    return { line, text };
  };
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      if (length + nl - start <= maxLineBytes) pieces.push(chunk.subarray(start, nl));
      length += nl - start;
      yield finish();
      pieces = [];
      length = 0;
      start = nl + 1;
    }
    const rest = chunk.length - start;
    // Past the limit only the length is counted; the bytes are dropped.
    if (rest > 0 && length + rest <= maxLineBytes) pieces.push(Buffer.from(chunk.subarray(start)));
    else if (rest > 0) pieces = [];
    length += rest;
  }
  if (length > 0) yield finish();
}

/** Why an over-long line was skipped (no transcript text, only the limit). */
export function tooLongReason(maxLineBytes = MAX_LINE_BYTES): string {
  return `line longer than ${maxLineBytes} bytes (the longest string JavaScript can hold)`;
}

/**
 * Why a message entry's message cannot be read, or undefined when it can: an object with a role, whose content
 * is text or a list of blocks that are objects with a type. Anything else (`"message": null`, a number or null
 * among the blocks) is skipped with its line number rather than handed to the projection.
 */
function malformedMessage(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message))
    return `message entry whose message is ${message === null ? "null" : Array.isArray(message) ? "a list" : typeof message}`;
  const { role, content } = message as { role?: unknown; content?: unknown };
  if (typeof role !== "string") return "message without a role";
  if (content === undefined || typeof content === "string") return undefined;
  if (!Array.isArray(content))
    return `message content that is ${content === null ? "null" : typeof content}, not text or blocks`;
  const block = content.findIndex(
    (b) =>
      typeof b !== "object" || b === null || Array.isArray(b) || typeof (b as { type?: unknown }).type !== "string",
  );
  return block === -1
    ? undefined
    : `content block ${block + 1} is ${content[block] === null ? "null" : typeof content[block] === "object" ? "an object without a type" : typeof content[block]}, not a block`;
}

/** Pi's migration of a file's entries to the current version, in place (its `migrateSessionEntries`). */
export type MigrateEntries = (entries: FileEntry[]) => void;

/**
 * Read a session file line by line (large files stream; a bad line never costs a good one). `migrate` is Pi's
 * migration, by default from Pi's package root.
 */
export async function loadSessionFile(
  path: string,
  maxLineBytes = MAX_LINE_BYTES,
  migrate?: MigrateEntries,
): Promise<LoadedSession> {
  const all: FileEntry[] = [];
  const diagnostics: LineDiagnostic[] = [];
  for await (const item of fileLines(path, maxLineBytes)) {
    if ("tooLong" in item) {
      diagnostics.push({ line: item.line, reason: tooLongReason(maxLineBytes) });
      continue;
    }
    const parsed = parseLine(item.text);
    if (!parsed) continue;
    if ("entry" in parsed) {
      const bad =
        parsed.entry.type === "message" ? malformedMessage((parsed.entry as { message?: unknown }).message) : undefined;
      if (bad) diagnostics.push({ line: item.line, reason: bad });
      else all.push(parsed.entry);
    } else diagnostics.push({ line: item.line, reason: parsed.reason });
  }
  assignLegacyIds(all);
  // Pi's package root is loaded only when no migration is given: the lab passes the same function from its own
  // module, so it never loads all of Pi (see src/lab/pi-internals.ts).
  (migrate ?? (await import("@earendil-works/pi-coding-agent")).migrateSessionEntries)(all);
  const header = all.find((e): e is SessionHeader => e.type === "session");
  const unknownTypes: Record<string, number> = Object.create(null) as Record<string, number>;
  const entries: SessionEntry[] = [];
  for (const entry of all) {
    if (entry.type === "session") continue;
    if (!KNOWN_TYPES.has(entry.type)) unknownTypes[entry.type] = (unknownTypes[entry.type] ?? 0) + 1;
    if (typeof (entry as { id?: unknown }).id !== "string") {
      diagnostics.push({ line: 0, reason: `entry of type ${entry.type} has no id` });
      continue;
    }
    entries.push(entry as SessionEntry);
  }
  return { path, header, entries, diagnostics, unknownTypes };
}
