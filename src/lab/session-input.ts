// A session file as the replay's input: loaded line by line, handed over so the replay may empty it.
import { loadSessionFile } from "../host/session-file.ts";
import { sessionName } from "./inputs.ts";
import { piCore } from "./pi-internals.ts";
import type { SessionInput } from "./replay.ts";

/** Load one session file for the replay (the serial loop and every worker load files the same way). */
export async function fileInput(path: string): Promise<SessionInput> {
  const loaded = await loadSessionFile(path, undefined, (await piCore()).migrateSessionEntries);
  return {
    name: sessionName(path),
    path,
    cwd: loaded.header?.cwd ?? "",
    entries: loaded.entries,
    handOver: true,
    malformedLines: loaded.diagnostics,
    unknownTypes: loaded.unknownTypes,
  };
}
