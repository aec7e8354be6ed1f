// Loads a session file from disk for the lab and the `show` command: streams lines, reports malformed ones
// with their line numbers, gives legacy files stable ids, then runs Pi's own migrations.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { migrateSessionEntries } from "@earendil-works/pi-coding-agent";
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
  "message", "thinking_level_change", "model_change", "usage", "compaction", "branch_summary",
  "custom", "custom_message", "context_edit", "label", "session_info",
]);

/** Read a session file line by line (large files stream; a bad line never costs a good one). */
export async function loadSessionFile(path: string): Promise<LoadedSession> {
  const all: FileEntry[] = [];
  const diagnostics: LineDiagnostic[] = [];
  const lines = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
  let n = 0;
  for await (const line of lines) {
    n++;
    const parsed = parseLine(line);
    if (!parsed) continue;
    if ("entry" in parsed) all.push(parsed.entry);
    else diagnostics.push({ line: n, reason: parsed.reason });
  }
  assignLegacyIds(all);
  migrateSessionEntries(all);
  const header = all.find((e): e is SessionHeader => e.type === "session");
  const unknownTypes: Record<string, number> = {};
  const entries: SessionEntry[] = [];
  for (const entry of all) {
    if (entry.type === "session") continue;
    if (!KNOWN_TYPES.has(entry.type)) unknownTypes[entry.type] = (unknownTypes[entry.type] ?? 0) + 1;
    if (typeof (entry as { id?: unknown }).id !== "string") {
      diagnostics.push({ line: 0, reason: `entry of type ${entry.type} has no id; skipped` });
      continue;
    }
    entries.push(entry as SessionEntry);
  }
  return { path, header, entries, diagnostics, unknownTypes };
}
