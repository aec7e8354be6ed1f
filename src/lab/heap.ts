// The lab sizes V8's heap to its input. A replay's live data grows with the sessions, but the planners also
// produce a lot of short-lived garbage, and by default V8 lets the heap grow far past the live data before it
// collects. The old-space limit is a ceiling sized to the input (room, not a target); what keeps the resident
// size close to the live data is the growing factor: after each full collection the next one is due once the
// heap has grown 15% (V8's own factor reaches about 1.5 at these sizes, and 4 on large machines), and the young
// generation is kept small. Costs more collections, a few percent of CPU.
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";

/** Old-space room beyond the input: Node, Pi's modules, the report, and some slack. */
const BASE_MB = 256;
/** Old space per megabyte of session files: the parsed session, the rows' views and facts, the recall index. */
const PER_INPUT_MB = 4;
/** Heap growth allowed between full collections, in percent of what the last one left. */
const GROWING_PERCENT = 15;
/** Young semi-space size in MB: the planners' short-lived garbage dies there. */
const SEMI_SPACE_MB = 2;

/** Node flags for a lab run over `bytes` of session files. */
export function heapFlags(bytes: number): string[] {
  // --expose-gc: the lab collects once per session, when the rows are dropped (see commands/lab.ts).
  return [`--max-old-space-size=${BASE_MB + PER_INPUT_MB * Math.ceil(bytes / 1e6)}`, `--max-semi-space-size=${SEMI_SPACE_MB}`, `--heap-growing-percent=${GROWING_PERCENT}`, "--expose-gc"];
}

/**
 * Environment for the lab's child process. glibc gives each thread that allocates its own malloc arena and
 * keeps what it frees there; V8's compiler and collector threads each hold one, which on a long replay is tens
 * of megabytes of resident memory that no JavaScript object accounts for. One arena keeps it to what is in use.
 * A value the user set is left alone; other C libraries ignore the variable.
 */
export function heapEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX ?? "1" };
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
