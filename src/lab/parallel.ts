// A folder of sessions on every core: worker threads (session-worker.ts) each replay one session file at a time,
// taking the next file as they finish, so a long session does not hold the others up. Results are put back in
// the files' order, so the JSON is the serial run's (timings aside). Workers are threads of this process: they
// end with it, however it ends.
import { stat } from "node:fs/promises";
import { Worker } from "node:worker_threads";
import type { WorkerJob, WorkerReport, WorkerSetup } from "./session-worker.ts";
import type { SessionResult } from "./replay.ts";
import type { WorkerProgress } from "./progress.ts";

/** Old space per worker for a file of `bytes`: the same room the CLI gives a serial run (heap.ts). */
export type WorkerHeap = (bytes: number) => number;

/** The worker module beside this one: TypeScript in a checkout, the compiled JavaScript in a package. */
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./session-worker.ts" : "./session-worker.js",
  import.meta.url,
);

/** Replay `files` on `jobs` workers; resolves with the results in the files' order. */
export async function replayInWorkers(
  files: readonly string[],
  jobs: number,
  setup: WorkerSetup,
  progress: WorkerProgress,
  heapMb: WorkerHeap,
): Promise<SessionResult[]> {
  const sizes = await Promise.all(files.map(async (f) => (await stat(f)).size));
  progress.begin(
    files.length,
    sizes.reduce((a, b) => a + b, 0),
  );
  const results: SessionResult[] = new Array(files.length);
  const largest = Math.max(0, ...sizes);
  const count = Math.max(1, Math.min(jobs, files.length));
  let next = 0;
  const workers: Worker[] = [];
  try {
    await Promise.all(
      Array.from({ length: count }, (_, slot) => {
        const worker = new Worker(WORKER_URL, {
          workerData: setup,
          resourceLimits: { maxOldGenerationSizeMb: heapMb(largest) },
        });
        workers.push(worker);
        return new Promise<void>((ok, fail) => {
          const give = () => {
            if (next >= files.length) {
              ok();
              return;
            }
            const index = next++;
            worker.postMessage({ index, path: files[index] } satisfies WorkerJob);
          };
          worker.on("message", (report: WorkerReport) => {
            if (report.type === "start") progress.start(slot, report.name, report.index, sizes[report.index]);
            else if (report.type === "progress") progress.update(slot, report.done, report.total);
            else if (report.type === "done") {
              results[report.index] = report.result;
              progress.finish(
                slot,
                `${report.result.requests} requests, ${report.result.probes.total} probes, ${report.seconds.toFixed(1)}s`,
              );
              give();
            } else fail(new Error(`${files[report.index]}: ${report.message}`));
          });
          worker.once("error", fail);
          worker.once("exit", (code) =>
            next < files.length || code !== 0 ? fail(new Error(`a replay worker stopped (exit ${code})`)) : ok(),
          );
          give();
        });
      }),
    );
  } finally {
    progress.end();
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return results;
}
