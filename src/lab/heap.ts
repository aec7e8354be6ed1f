// The lab sizes V8's heap to its input. A replay's live data grows with the sessions, but the planners also
// produce a lot of short-lived garbage, and by default V8 lets the heap grow far past the live data before it
// collects. With an old-space limit sized to the input and small young semi-spaces, the collector works
// earlier and the process's peak memory stays close to what the replay really holds.
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";

/** Old-space room beyond the input: Node, Pi's modules, the report, and some slack. */
const BASE_MB = 256;
/** Old space per megabyte of session files: the parsed session, the rows' views and facts, the recall index. */
const PER_INPUT_MB = 4;

/** Node flags for a lab run over `bytes` of session files. */
export function heapFlags(bytes: number): string[] {
  return [`--max-old-space-size=${BASE_MB + PER_INPUT_MB * Math.ceil(bytes / 1e6)}`, "--max-semi-space-size=4"];
}

async function sizeOf(path: string): Promise<number> {
  const info = await stat(path).catch(() => undefined);
  if (!info) return 0;
  if (info.isFile()) return info.size;
  if (!info.isDirectory()) return 0;
  let total = 0;
  for (const item of await readdir(path, { withFileTypes: true }).catch(() => [])) {
    if (item.isDirectory() || item.name.endsWith(".jsonl")) total += await sizeOf(join(path, item.name));
  }
  return total;
}

/** Bytes of the session files a `lab` command line names (paths that exist; bad ones are the lab's to report). */
export async function inputBytes(args: readonly string[], sessionsDir: string): Promise<number> {
  let total = 0;
  for (const arg of args) if (!arg.startsWith("-")) total += await sizeOf(resolve(arg));
  if (args.includes("--sessions")) total += await sizeOf(sessionsDir);
  return total;
}
