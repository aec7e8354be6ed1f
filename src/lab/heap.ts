// The lab sizes V8's heap to its input. A replay's live data grows with the sessions, but the planners also
// produce a lot of short-lived garbage, and by default V8 lets the heap grow far past the live data before it
// collects. The old-space limit is a ceiling sized to the input (room, not a target); what keeps the resident
// size close to the live data is the growing factor: after each full collection the next one is due once the
// heap has grown 30% over what it left, at every input size (V8's own factor rises with the heap limit, so with
// the input: about 1.36 for a 13 MB session's limit, 1.8 for 100 MB, 4 on large machines). The young generation
// is kept small, but not too small: most of the planners' garbage dies there young.
//
// Measured on the 13 MB bench session (one run each, in-process, so peak RSS is the lab's alone; CPU times on
// a loaded machine, so the collectors' work is counted in bytes): the heap growing 15% marked 3.9 GB over 69
// full collections, 195 MB peak; 20%: 3.3 GB, 195 MB; 30%: 2.3 GB over 43, 200 MB; V8's own: 2.0 GB, 198 MB.
// Semi-spaces of 4 MB halve the scavenges but cost 13 MB, 8 MB cost 33 MB, for 10% less copying. A full
// collection marks the whole live heap, so the marking work goes as the allocation over the growth: 30% cuts the
// marking of 15% by 40% for 3% more peak memory (on the 42 MB session: 20.2 GB over 181 collections at 363 MB,
// against 11.1 GB over 101 at 370 MB), the best trade found.
//
// The semi-spaces are 4 MB. With 2 MB, a scavenge came every 2 MB of allocation and promoted whatever had lived
// through two of them: a plan's prompt, a rendered region, a projection's arrays, which live for one compaction and
// then die in old space. On the 13 MB session V8's `--trace-gc-nvp` counted 843 scavenges pausing the replay for
// 1.56 s and 299 MB promoted; with 4 MB, 406 scavenges, 0.97 s, 273 MB. On the 106 MB session: 8,349 scavenges,
// 20.9 s, against 4,083 and 14.5 s. Peak memory rose by 3 MB in single runs on both (3-9 MB across bench runs).
// Over six paired runs on the 13 MB session the total CPU fell in four (median 0.9 s, about 7%). 8 MB cut the
// pauses a little more (0.76 s) for 15 MB more peak.
//
// The lab also asks V8 to wait longer before it optimizes a function with Turbofan. A replay runs hundreds of
// different functions hot for a while each (fourteen rows, their planners, the measures), and Turbofan compiles
// them on background threads: on the 13 MB session `--trace-opt` counts 986 Turbofan compilations, 206 of them
// after a deoptimization, for about 6.5 s of compiler time, and V8's background threads used 5.6-7.8 CPU s of the
// run's 14-19 (per-thread CPU from /proc). A function now needs 10,000 calls instead of 3,000: those that stay hot
// still get there early, and the rest run on the baseline code. Measured on that session in 12 runs paired with
// the default, interleaved on the shared 2-core machine: the background threads' CPU fell by 1.5-2 s, the main
// thread's rose by up to 1 s in some runs, and the total fell in 11 of the 12 (median 1.0 s, about 7%), with
// 2-4 MB less peak memory. 30,000 calls saved no more; turning inlining off slowed the main thread by 2 s.
//
// A parallel run whose replayers take every core (`--jobs 2`, the default, on two) starts its child with
// `--single-threaded`: no collector or compiler threads beside the replay. A serial lab keeps them busy: on a
// 23 MB folder of eight sessions it used 17.0 CPU s in 12.1 s of wall time, 1.4 cores. With two replayers on two
// cores those threads only take turns with the replayers. Measured on that folder, two paired runs: 11.2 and 11.4 s
// of wall time with them, 9.95 and 10.3 s without, for 16 MB more peak RSS (the sweeping is no longer concurrent). The
// same work then takes 16.9 CPU s serially, so two cores cannot finish it in less than about 8.5-9.3 s.
import { lstat, readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { LAB_OPTIONS } from "./lab-options.ts";
import { pickRecent, recentOptions } from "./recent.ts";

/** Old-space room beyond the input: Node, Pi's modules, the report, and some slack. */
const BASE_MB = 256;
/** Old space per megabyte of session files: the parsed session, the rows' views and facts, the recall index. */
const PER_INPUT_MB = 4;
/**
 * Old space per megabyte of the largest file, on top: one message can be most of a file, and while it is parsed,
 * copied into every row's view and rendered for the recall index, several copies of it are alive at once.
 */
const PER_LARGEST_MB = 8;
/** Heap growth allowed between full collections, in percent of what the last one left. */
const GROWING_PERCENT = 30;
/** Young semi-space size in MB: the planners' short-lived garbage dies there (see the header). */
const SEMI_SPACE_MB = 4;
/** Calls before V8 optimizes a function with Turbofan (its default is 3,000): see the header. */
const TURBOFAN_INVOCATIONS = 10_000;

/** How many sessions the lab's child replays at once (itself and its workers), on how many cores. */
export interface Replayers {
  replayers: number;
  cores: number;
}

/**
 * Node flags for the lab's child, which replays `bytes` of session files, the largest of which has `largest`
 * bytes, with `parallel.replayers` replaying at once.
 */
export function childFlags(bytes: number, largest = 0, parallel: Replayers = { replayers: 1, cores: 1 }): string[] {
  // --expose-gc: the lab collects once per session, when the rows are dropped (see commands/lab.ts).
  const flags = [
    `--max-old-space-size=${BASE_MB + PER_INPUT_MB * Math.ceil(bytes / 1e6) + PER_LARGEST_MB * Math.ceil(largest / 1e6)}`,
    `--max-semi-space-size=${SEMI_SPACE_MB}`,
    `--heap-growing-percent=${GROWING_PERCENT}`,
    `--invocation-count-for-turbofan=${TURBOFAN_INVOCATIONS}`,
    "--expose-gc",
  ];
  // See the header: when the replayers already take every core, V8's background threads only take turns with them.
  if (parallel.replayers > 1 && parallel.replayers >= parallel.cores) flags.push("--single-threaded");
  return flags;
}

/** Old-space limit in MB of one parallel worker (parallel.ts), which replays one file of at most `largest` bytes at a time. */
export function workerHeapMb(largest: number): number {
  return BASE_MB + (PER_INPUT_MB + PER_LARGEST_MB) * Math.ceil(largest / 1e6);
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

/** What the inputs of a lab run weigh: all their session files, the largest one, and how many there are. */
export interface InputSize {
  bytes: number;
  largest: number;
  files: number;
}

/** A session file found under the inputs: its size, and when it last changed (for `--last` and `--since`). */
interface Found {
  bytes: number;
  mtime: number;
}

/**
 * The session files under a path, as the lab walks them (inputs.ts): a file named, or the *.jsonl files in a
 * directory tree. Only real directories are entered: a link is not followed, so a link to "." cannot loop.
 */
async function sizeOf(path: string, found: Found[], top: boolean): Promise<void> {
  // The path itself may be a link the user named; links met inside a directory are not followed.
  const info = await (top ? stat(path) : lstat(path)).catch(() => undefined);
  if (!info) return;
  if (info.isFile()) {
    found.push({ bytes: info.size, mtime: info.mtimeMs });
    return;
  }
  if (!info.isDirectory()) return;
  for (const item of await readdir(path, { withFileTypes: true }).catch(() => [])) {
    if (item.isDirectory()) await sizeOf(join(path, item.name), found, false);
    else if (item.isFile() && item.name.endsWith(".jsonl")) await sizeOf(join(path, item.name), found, false);
  }
}

/**
 * The session files a `lab` command line names, and of them the ones `--last` and `--since` pick: its inputs
 * only, not option values (`--dump /` is no input). Paths that do not exist count nothing; the lab reports them.
 */
export async function inputSize(args: readonly string[], sessionsDir: string): Promise<InputSize> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], allowPositionals: true, options: LAB_OPTIONS });
  } catch {
    // A bad command line: the lab will say so; it needs no room.
    return { bytes: 0, largest: 0, files: 0 };
  }
  let found: Found[] = [];
  for (const path of parsed.positionals) await sizeOf(resolve(path), found, true);
  if (parsed.values.sessions) await sizeOf(sessionsDir, found, true);
  let recent;
  try {
    recent = recentOptions(parsed.values.last, parsed.values.since);
  } catch {
    // The lab refuses the value before it replays anything; the files are counted as named.
  }
  if (recent) found = pickRecent(found, recent);
  return {
    bytes: found.reduce((sum, f) => sum + f.bytes, 0),
    largest: found.reduce((most, f) => Math.max(most, f.bytes), 0),
    files: found.length,
  };
}

/** Bytes of the session files a `lab` command line names. */
export async function inputBytes(args: readonly string[], sessionsDir: string): Promise<number> {
  return (await inputSize(args, sessionsDir)).bytes;
}
