// One worker of a parallel lab run (parallel.ts): it replays the session files the main thread hands it, one at a
// time, exactly as the serial loop does (the same loading, rows, settings and prices), and posts back each
// session's result, which the main thread puts in its place; the JSON is the serial run's, timings aside.
import { parentPort, workerData } from "node:worker_threads";
import { createDump } from "./dump.ts";
import type { LabSettings } from "./row.ts";
import type { Prices } from "./metrics.ts";
import { replaySession, type ReplayOptions } from "./replay.ts";
import { selectRows } from "./rows/registry.ts";
import { fileInput } from "./session-input.ts";

/** What every worker of a run shares. */
export interface WorkerSetup {
  settings: LabSettings;
  strategies: string | undefined;
  prices: Prices;
  dumpDir?: string;
}

/** Main thread to worker: replay this file, which is session `index` of the run. */
export interface WorkerJob {
  index: number;
  path: string;
}

/** Worker to main thread: progress within the current session, or its result. */
export type WorkerReport =
  | { type: "start"; index: number; name: string }
  | { type: "progress"; index: number; done: number; total: number }
  | { type: "done"; index: number; result: Awaited<ReturnType<typeof replaySession>>; seconds: number }
  | { type: "failed"; index: number; message: string };

const port = parentPort;
if (port) {
  const setup = workerData as WorkerSetup;
  const { factories } = selectRows(setup.strategies);
  const collect = (globalThis as { gc?: () => void }).gc;
  const dump = setup.dumpDir ? createDump(setup.dumpDir) : undefined;
  const post = (report: WorkerReport) => port.postMessage(report);
  port.on("message", async (job: WorkerJob) => {
    try {
      const input = await fileInput(job.path);
      post({ type: "start", index: job.index, name: input.name });
      await dump?.session(job.index, input.name);
      const options: ReplayOptions = {
        settings: setup.settings,
        rows: factories,
        prices: setup.prices,
        onProgress: (done, total) => post({ type: "progress", index: job.index, done, total }),
        ...(dump ? { onAct: dump.act } : {}),
        ...(collect ? { onRowsReleased: () => collect() } : {}),
      };
      const t0 = performance.now();
      const result = await replaySession(input, options);
      await dump?.close();
      post({ type: "done", index: job.index, result, seconds: (performance.now() - t0) / 1000 });
      collect?.();
    } catch (error) {
      post({ type: "failed", index: job.index, message: error instanceof Error ? error.message : String(error) });
    }
  });
}
