// A replay holds the session it replays for the whole pass: every row's view points into the same messages. Most
// of their bytes are a few long texts (tool outputs, file contents) that are read when a message is first measured
// and then mostly by planners looking at the recent part of the session. Those texts move to the spill file
// (spill.ts) and are read back on access, through a small cache of the most recently read ones, so a long
// session's heap holds its structure and its short texts, not its long ones.
import type { SessionEntry } from "../log/entries.ts";
import { foldAtEachRead } from "../recall/search.ts";
import type { TranscriptEntry } from "../recall/transcript.ts";
import { spill, spillProperty } from "./spill.ts";

/** Texts shorter than this stay in memory: the getter and the read cost more than they save. */
export const SOURCE_SPILL_MIN_CHARS = 1024;

/** The string fields of a content block that can be long. */
const LONG_FIELDS = ["text", "thinking", "data"] as const;

/** Characters the cache of recently read texts may hold (a fixed cost, whatever the session's size). */
const RECENT_MAX_CHARS = 4_000_000;

/** Recently read texts by reader, least recent first. */
const recent = new Map<() => string, string>();
let recentChars = 0;

function recently(read: () => string): () => string {
  return () => {
    let text = recent.get(read);
    if (text !== undefined) {
      recent.delete(read);
      recent.set(read, text);
      return text;
    }
    text = read();
    recent.set(read, text);
    recentChars += text.length;
    for (const [oldest, kept] of recent) {
      if (recentChars <= RECENT_MAX_CHARS) break;
      recent.delete(oldest);
      recentChars -= kept.length;
    }
    return text;
  };
}

/**
 * Move `record[key]` to the spill file when it is a long string; reading it gives back the same string. True when
 * it moved.
 */
function spillLongText(record: Record<string, unknown>, key: string): boolean {
  const value = record[key];
  if (typeof value !== "string" || value.length < SOURCE_SPILL_MIN_CHARS) return false;
  spillProperty(record, key, recently(spill(value)));
  return true;
}

/** Move the long texts of a branch's messages out of memory; reading them gives back the same strings. */
export function spillSourceTexts(branch: readonly SessionEntry[]): void {
  for (const entry of branch) {
    const holder = (entry.type === "message" ? entry.message : entry.type === "custom_message" ? entry : undefined) as
      | Record<string, unknown>
      | undefined;
    if (!holder) continue;
    // A bash execution's output is a field of the message; everything else keeps its text in `content`.
    spillLongText(holder, "output");
    if (typeof holder.content === "string") spillLongText(holder, "content");
    else if (Array.isArray(holder.content)) {
      for (const block of holder.content as unknown[]) {
        if (block && typeof block === "object")
          for (const key of LONG_FIELDS) spillLongText(block as Record<string, unknown>, key);
      }
    }
  }
}

/**
 * Move a rendered entry of the recall index out of memory once the lab's batched search has read it: a long text goes
 * to the spill file, and with it the entry's sections, while its line offsets become 32-bit, and the grep keeps no
 * folded copy of it (true when it moved). What is read later (a probe paged through, a probe not asked) reads them back; the short entries
 * stay as rendered.
 */
export function spillRenderedEntry(entry: TranscriptEntry): boolean {
  if (!spillLongText(entry as unknown as Record<string, unknown>, "text")) return false;
  foldAtEachRead(entry);
  entry.lineStarts = Int32Array.from(entry.lineStarts);
  const sections = spill(JSON.stringify(entry.sections));
  spillProperty(entry, "sections", () => JSON.parse(sections()));
  return true;
}
