// A folder of sessions on every core. This thread replays files itself and `jobs - 1` worker threads
// (session-worker.ts) replay the others: this thread has Pi's modules and ours loaded already, and loading them
// again costs a worker more than a second of CPU, so `--jobs 2` pays for one extra load, not two. Every replayer
// takes the next file from a counter they all share, largest file first: a worker needs no message from this
// thread (which is busy replaying) to go on, and the long sessions do not end up last. Results are put back in the
// files' order, so the JSON is the serial run's (timings aside). Workers are threads of this process: they end
// with it, however it ends.
import { stat } from "node:fs/promises";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import { LAB_OPTIONS } from "./lab-options.ts";
import type { WorkerData, WorkerReport, WorkerSetup } from "./session-worker.ts";
import type { SessionResult } from "./replay.ts";
import type { WorkerProgress } from "./progress.ts";

/** Old space per worker for a file of `bytes`: the same room the CLI gives a serial run (heap.ts). */
export type WorkerHeap = (bytes: number) => number;

/**
 * Replay file `index` of the run in this thread, reporting as a worker does ("start", "progress", then "done" with
 * the result, or "failed"); `post` may throw to cut the replay short.
 */
export type LocalReplay = (index: number, path: string, post: (report: WorkerReport) => void) => Promise<void>;

/** The worker module beside this one: TypeScript in a checkout, the compiled JavaScript in a package. */
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./session-worker.ts" : "./session-worker.js",
  import.meta.url,
);

/** A worker started ahead of its run, and whether it has already failed (it is then not used). */
interface Warm {
  worker: Worker;
  dead: boolean;
  died: () => void;
}

/** Workers started by warmUpWorkers and not yet taken by a run. */
const warm: Warm[] = [];

function startWorker(heapMb: number): Worker {
  return new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: heapMb } });
}

/**
 * Start `count` workers before the run is known in full, so that they load their modules while this thread
 * loads its own (about a second of CPU each, on the other cores). The next replayInWorkers takes them; they keep
 * nothing alive meanwhile, and releaseWorkers ends those no run took. Returns the workers started.
 */
export function warmUpWorkers(count: number, heapMb: number): Worker[] {
  const started: Worker[] = [];
  for (let i = 0; i < count; i++) {
    const entry: Warm = { worker: startWorker(heapMb), dead: false, died: () => (entry.dead = true) };
    entry.worker.unref();
    // A failure before a run takes the worker only means it is not used.
    entry.worker.on("error", entry.died);
    entry.worker.on("exit", entry.died);
    warm.push(entry);
    started.push(entry.worker);
  }
  return started;
}

/**
 * How many workers a `lab` command line will run on, found before the lab is loaded (the CLI's parent counts
 * the session files it names that `--last` and `--since` keep, heap.ts): one fewer than the sessions replayed at
 * once, none for a serial run. An option the lab will refuse counts as a serial run; workers a run leaves unused
 * (its own walk found fewer files) are ended before the replay.
 */
export function workersToWarm(args: readonly string[], files: number, cores: number): number {
  let values;
  try {
    values = parseArgs({ args: [...args], allowPositionals: true, options: LAB_OPTIONS }).values;
  } catch {
    return 0;
  }
  const count = (value: string | undefined, otherwise: number) =>
    value === undefined ? otherwise : /^\d+$/.test(value.trim()) ? Number(value) : 1;
  if (values.judge !== undefined || values.help) return 0;
  return Math.max(0, Math.min(count(values.jobs, cores), count(values.last, files), files) - 1);
}

/** End the warmed-up workers no run took (the run turned out serial, or failed before replaying). */
export async function releaseWorkers(): Promise<void> {
  await Promise.all(warm.splice(0).map((w) => w.worker.terminate()));
}

/** `count` workers for a run: warmed-up ones first, new ones for the rest. */
function takeWorkers(count: number, heapMb: number): Worker[] {
  const out: Worker[] = [];
  for (const entry of warm.splice(0)) {
    if (out.length < count && !entry.dead) {
      entry.worker.off("error", entry.died);
      entry.worker.off("exit", entry.died);
      entry.worker.ref();
      out.push(entry.worker);
    } else void entry.worker.terminate();
  }
  while (out.length < count) out.push(startWorker(heapMb));
  return out;
}

/**
 * The order files are taken in: largest first (ties in the run's order), so that the last file to start is a
 * short one and no replayer waits long for the others at the end.
 */
export function claimOrder(sizes: readonly number[]): number[] {
  return sizes.map((_, i) => i).sort((a, b) => sizes[b] - sizes[a] || a - b);
}

/** Thrown into this thread's replay to cut it short once a worker has failed. */
class Stopped extends Error {}

/**
 * Replay `files` in this thread (`local`) and on `jobs - 1` workers; resolves with the results in the files'
 * order. Progress slot 0 is this thread, slot `k` the k-th worker.
 */
export async function replayInWorkers(
  files: readonly string[],
  jobs: number,
  setup: WorkerSetup,
  progress: WorkerProgress,
  heapMb: WorkerHeap,
  local: LocalReplay,
): Promise<SessionResult[]> {
  const sizes = await Promise.all(files.map(async (f) => (await stat(f)).size));
  progress.begin(
    files.length,
    sizes.reduce((a, b) => a + b, 0),
  );
  const results: SessionResult[] = new Array(files.length);
  const largest = Math.max(0, ...sizes);
  const order = claimOrder(sizes);
  const claims = new Int32Array(new SharedArrayBuffer(4));
  const data: WorkerData = { ...setup, files, order, claims };
  /** The next file to replay, or undefined when none is left (or the run is stopping). */
  const claim = (): number | undefined => {
    const at = Atomics.add(claims, 0, 1);
    return at < order.length ? order[at] : undefined;
  };
  let failure: Error | undefined;
  let stopping: () => void = () => {};
  const stopped = new Promise<void>((ok) => {
    stopping = ok;
  });
  const fail = (error: Error) => {
    failure ??= error;
    // Nobody takes another file, and the run stops waiting for the ones under way.
    Atomics.store(claims, 0, order.length);
    stopping();
  };
  /** What a replayer (slot 0 is this thread, slot k the k-th worker) reports; true once it has nothing left to do. */
  const heard = (slot: number, report: WorkerReport): boolean => {
    if (report.type === "start") progress.start(slot, report.name, report.index, sizes[report.index]);
    else if (report.type === "progress") progress.update(slot, report.done, report.total);
    else if (report.type === "done") {
      results[report.index] = report.result;
      progress.finish(
        slot,
        `${report.result.requests} requests, ${report.result.probes.total} probes, ${report.seconds.toFixed(1)}s`,
      );
    } else if (report.type === "failed") fail(new Error(`${files[report.index]}: ${report.message}`));
    return report.type === "idle";
  };
  const count = Math.max(1, Math.min(jobs, files.length));
  const workers = takeWorkers(count - 1, heapMb(largest));
  for (const worker of workers) worker.postMessage(data);
  const working = workers.map(
    (worker, k) =>
      new Promise<void>((ok) => {
        let idle = false;
        worker.on("message", (report: WorkerReport) => {
          if (heard(k + 1, report)) {
            idle = true;
            ok();
          }
        });
        worker.once("error", (error) => fail(error));
        worker.once("exit", (code) => {
          if (!idle) fail(new Error(`a replay worker stopped (exit ${code})`));
          ok();
        });
      }),
  );
  const here = async () => {
    for (let index = claim(); index !== undefined; index = claim()) {
      await local(index, files[index], (report) => {
        if (failure) throw new Stopped();
        heard(0, report);
      });
      // Workers' reports, and signals, are handled between sessions too.
      await new Promise((ok) => setImmediate(ok));
    }
  };
  try {
    await here().catch((error: unknown) => {
      if (!(error instanceof Stopped)) fail(error instanceof Error ? error : new Error(String(error)));
    });
    await Promise.race([Promise.all(working), stopped]);
  } finally {
    progress.end();
    await Promise.all(workers.map((w) => w.terminate()));
  }
  if (failure) throw failure;
  return results;
}
