// Loads the real Pi sessions shared next to the repo (legacy v1 files) the way Pi does: its own parser,
// then its own migration to v3. They are read in place at test time and never copied into the repo.
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { migrateSessionEntries, parseSessionEntries, type SessionEntry } from "@earendil-works/pi-coding-agent";

export const REAL_SESSIONS_DIR = fileURLToPath(new URL("../../../shared/sessions/", import.meta.url));

export interface RealSession {
  name: string;
  entries: SessionEntry[];
}

/** Every `*.jsonl` in the shared sessions folder, migrated to v3 (Pi's migration gives fresh random ids). */
export function loadRealSessions(): RealSession[] {
  return readdirSync(REAL_SESSIONS_DIR)
    .filter((name) => name.endsWith(".jsonl"))
    .sort()
    .map((name) => {
      const fileEntries = parseSessionEntries(readFileSync(REAL_SESSIONS_DIR + name, "utf8"));
      migrateSessionEntries(fileEntries);
      return { name, entries: fileEntries.filter((e): e is SessionEntry => e.type !== "session") };
    });
}
