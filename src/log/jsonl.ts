// Line-level parsing of session JSONL with diagnostics, and deterministic ids for legacy (v1) files.
// Pure: text in, entries and diagnostics out; no I/O.
import type { FileEntry } from "./entries.ts";

/** Why a line was skipped. Holds no transcript text, only the position and the reason. */
export interface LineDiagnostic {
  line: number;
  reason: string;
}

/**
 * Deepest nesting of arrays and objects a line may have. Pi's entries nest a handful of levels (a message, its
 * content, a tool call's arguments); code that walks a message (its tokens, its strings, its rendering) recurses
 * once per level, so a line nested tens of thousands deep would end any of them in a stack overflow.
 */
export const MAX_DEPTH = 512;

/**
 * True when the JSON text nests arrays and objects deeper than `limit`. Strings are skipped whole (a bracket in a
 * string is text): each is jumped over to its closing quote, so the scan is linear in the line.
 */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22) {
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return false;
        // A quote ends the string unless an odd run of backslashes escapes it.
        let slashes = 0;
        for (let k = end - 1; text.charCodeAt(k) === 0x5c; k--) slashes++;
        if (slashes % 2 === 0) break;
      }
      i = end;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) depth--;
  }
  return false;
}

/** Parse one JSONL line. Returns the entry, or a reason it was skipped. */
export function parseLine(text: string): { entry: FileEntry } | { reason: string } | null {
  if (!text.trim()) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8 quotes the start of the bad input ('Unexpected token …, "…" is not valid JSON'): transcript text,
    // which a diagnostic never carries.
    const message =
      error instanceof Error
        ? error.message
            .split("\n")[0]
            .replace(/^(Unexpected token) .*$/s, "$1")
            .slice(0, 80)
        : "parse error";
    return { reason: `invalid JSON (${message})` };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return { reason: "not a JSON object" };
  // Every level takes two characters: a shorter line cannot nest too deep.
  if (text.length > 2 * MAX_DEPTH && nestsDeeperThan(text, MAX_DEPTH))
    return { reason: `nested deeper than ${MAX_DEPTH} levels` };
  const type = (value as { type?: unknown }).type;
  if (typeof type !== "string") return { reason: "missing entry type" };
  return { entry: value as FileEntry };
}

/** Parse a whole file's text. A malformed line never hides a valid one. */
export function parseJsonl(text: string): { entries: FileEntry[]; diagnostics: LineDiagnostic[] } {
  const entries: FileEntry[] = [];
  const diagnostics: LineDiagnostic[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const parsed = parseLine(lines[i]);
    if (!parsed) continue;
    if ("entry" in parsed) entries.push(parsed.entry);
    else diagnostics.push({ line: i + 1, reason: parsed.reason });
  }
  return { entries, diagnostics };
}

/**
 * Give a v1 (id-less, linear) file stable ids and parent links before Pi's own migration runs.
 * Pi's migration would assign random ids; derived ids keep replays and reports reproducible.
 * Mutates in place, like Pi's migrations. Files that already have ids are left alone.
 */
export function assignLegacyIds(entries: FileEntry[]): void {
  const header = entries.find((e) => e.type === "session") as { version?: number } | undefined;
  if ((header?.version ?? 1) >= 2) return;
  if (entries.some((e) => e.type !== "session" && typeof (e as { id?: unknown }).id === "string")) return;
  let previous: string | null = null;
  let n = 0;
  for (const entry of entries) {
    if (entry.type === "session") continue;
    const record = entry as unknown as Record<string, unknown>;
    const id = `l${(n++).toString(16).padStart(7, "0")}`;
    record.id = id;
    record.parentId = previous;
    previous = id;
  }
  // Legacy compactions point at the kept entry by file index; Pi's v1->v2 step translates it only while it
  // still runs, so translate here too.
  for (const entry of entries) {
    const record = entry as unknown as Record<string, unknown>;
    if (entry.type === "compaction" && typeof record.firstKeptEntryIndex === "number") {
      const target = entries[record.firstKeptEntryIndex] as unknown as Record<string, unknown> | undefined;
      if (target && target.type !== "session") record.firstKeptEntryId = target.id;
      delete record.firstKeptEntryIndex;
    }
  }
  if (header) header.version = 2;
}
