// The lab on a folder: the same generated sessions replayed with `--jobs 1` and `--jobs 2`, by the real CLI, in
// one run. The speed-up is wall time over wall time; the memory figure is the parallel run's peak resident size
// above its fixed cost (the same CLI with two workers on tiny sessions), per worker, against the largest file.
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchOptions } from "../commands/bench.ts";
import { labRun, writeLargeSession } from "./memory.bench.ts";
import type { BenchRow } from "./types.ts";

/** Sessions in the folder, and the size each is generated at (MiB; the generator overshoots by up to a round): a few, so two workers stay busy to the end. */
const SESSIONS = 4;
const SESSION_MB = 1;
/** Two workers on two cores should take at most this share of one worker's wall time. */
export const SPEEDUP_TARGET = "≤ 0.65x";
/** The memory target of the serial run (memory.bench.ts), per worker. */
export const MEMORY_TARGET = "≤ 3x";

export async function benchLabParallel(_options: BenchOptions): Promise<BenchRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "lab-parallel-"));
  try {
    const folder = join(dir, "sessions");
    const tiny = join(dir, "tiny");
    mkdirSync(folder);
    mkdirSync(tiny);
    let largest = 0;
    let total = 0;
    for (let i = 0; i < SESSIONS; i++) {
      const file = join(folder, `s${i}.jsonl`);
      // Different tasks per file, so the sessions are not one replay four times over.
      await writeLargeSession(file, SESSION_MB, 12 + 4 * i);
      const size = statSync(file).size;
      largest = Math.max(largest, size);
      total += size;
    }
    for (let i = 0; i < 2; i++) await writeLargeSession(join(tiny, `t${i}.jsonl`), 0.001, 2);
    const serial = labRun(folder, join(dir, "serial.json"), ["--jobs", "1"]);
    const parallel = labRun(folder, join(dir, "parallel.json"), ["--jobs", "2"]);
    const fixed = labRun(tiny, join(dir, "tiny.json"), ["--jobs", "2"]).result.run?.maxRssBytes ?? 0;
    const rss = parallel.result.run?.maxRssBytes ?? 0;
    const what = `${SESSIONS} sessions (${(total / 1e6).toFixed(1)} MB)`;
    const cores = availableParallelism();
    // A serial lab is not one core's work: V8's collector and compiler threads run beside the replay. What it keeps
    // busy bounds what more replayers can gain on these cores: the same CPU seconds spread over every core still
    // take that share of the serial wall time, whatever the split (a parallel run does no less work).
    const busy = serial.seconds > 0 ? (serial.result.run?.cpuSeconds ?? 0) / serial.seconds : 0;
    return [
      {
        suite: "parallel",
        name: `lab on ${what}, --jobs 1: cores kept busy (CPU over wall time)`,
        value: busy,
        unit: "cores",
        reference: `the ${cores} cores: the same CPU time on all of them takes ${((busy / cores) * 100).toFixed(0)}% of the serial wall time`,
        ratio: busy / cores,
      },
      {
        suite: "parallel",
        name: `lab on ${what}, --jobs 2 wall time (${cores} cores; CPU ${(parallel.result.run?.cpuSeconds ?? 0).toFixed(1)} s)`,
        value: parallel.seconds,
        unit: "s",
        reference: `--jobs 1 on the same folder: ${serial.seconds.toFixed(1)} s wall, CPU ${(serial.result.run?.cpuSeconds ?? 0).toFixed(1)} s`,
        ratio: serial.seconds > 0 ? parallel.seconds / serial.seconds : undefined,
        target: SPEEDUP_TARGET,
      },
      {
        suite: "parallel",
        name: `lab on ${what}, --jobs 2: RSS above the fixed cost, per worker`,
        value: (rss - fixed) / 2 / 1e6,
        unit: "MB",
        reference: `largest session file (${(largest / 1e6).toFixed(1)} MB); fixed cost ${(fixed / 1e6).toFixed(0)} MB (two workers, tiny sessions)`,
        ratio: largest > 0 ? (rss - fixed) / 2 / largest : undefined,
        target: MEMORY_TARGET,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
