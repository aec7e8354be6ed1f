// One worker of a parallel lab run (parallel.ts): it takes the run's session files one at a time from a counter
// shared with the other replayers and replays each exactly as the serial loop does (the same loading, rows,
// settings and prices), posting back each session's result, which the main thread puts in its place; the JSON
// is the serial run's, timings aside. The main thread replays files with the same function, `replayFile`.
import { parentPort } from "node:worker_threads";
import { createDump } from "./dump.ts";
import type { LabSettings, RowFactory } from "./row.ts";
import type { Prices } from "./metrics.ts";
import { replaySession, type ReplayOptions, type SessionResult } from "./replay.ts";
import { selectRows } from "./rows/registry.ts";
import { fileInput } from "./session-input.ts";

/** What every worker of a run shares. */
export interface WorkerSetup {
  settings: LabSettings;
  strategies: string | undefined;
  prices: Prices;
  dumpDir?: string;
}

/** A replayer to the main thread: progress within the current session, its result, or that it has no file left. */
/** What every worker shares with the others, on top of the run's settings. */
export type WorkerData = WorkerSetup & {
  /** The run's files, in the run's order (a result's index is its file's index here). */
  files: readonly string[];
  /** Indices of `files` in the order they are taken. */
  order: readonly number[];
  /** One shared counter: the next position in `order` to take. */
  claims: Int32Array;
};

export type WorkerReport =
  | { type: "start"; index: number; name: string }
  | { type: "progress"; index: number; done: number; total: number }
  | { type: "done"; index: number; result: SessionResult; seconds: number }
  | { type: "failed"; index: number; message: string }
  | { type: "idle" };

/** How one replayer replays a file: the run's settings and rows, its own dump writer and collector. */
export interface FileReplayer {
  settings: LabSettings;
  rows: readonly RowFactory[];
  prices: Prices;
  dump?: ReturnType<typeof createDump>;
  /** A full collection (gc exposed), run once a session's rows are dropped and once it is done. */
  collect?: () => void;
}

/** Replay session file `index` of the run, posting "start", "progress" and "done"; a failure is thrown. */
export async function replayFile(
  index: number,
  path: string,
  replayer: FileReplayer,
  post: (report: WorkerReport) => void,
): Promise<void> {
  const { dump, collect } = replayer;
  const input = await fileInput(path);
  post({ type: "start", index, name: input.name });
  await dump?.session(index, input.name);
  const options: ReplayOptions = {
    settings: replayer.settings,
    rows: replayer.rows,
    prices: replayer.prices,
    onProgress: (done, total) => post({ type: "progress", index, done, total }),
    ...(dump ? { onAct: dump.act } : {}),
    ...(collect ? { onRowsReleased: () => collect() } : {}),
  };
  const t0 = performance.now();
  const result = await replaySession(input, options);
  await dump?.close();
  post({ type: "done", index, result, seconds: (performance.now() - t0) / 1000 });
  // The session's recall index and the rest of its replay are garbage now.
  collect?.();
}

const port = parentPort;
if (port) {
  // The run's files and counter come in the first message: a worker may be started before they are known, so that
  // it loads its modules while the main thread loads its own (parallel.ts, warmUpWorkers).
  port.once("message", (data: WorkerData) => void work(port, data));
}

/** A worker's whole life: take files until none is left, then say so. */
async function work(port: NonNullable<typeof parentPort>, data: WorkerData): Promise<void> {
  const collect = (globalThis as { gc?: () => void }).gc;
  const replayer: FileReplayer = {
    settings: data.settings,
    rows: selectRows(data.strategies).factories,
    prices: data.prices,
    ...(data.dumpDir ? { dump: createDump(data.dumpDir) } : {}),
    ...(collect ? { collect } : {}),
  };
  const post = (report: WorkerReport) => port.postMessage(report);
  for (;;) {
    const at = Atomics.add(data.claims, 0, 1);
    if (at >= data.order.length) break;
    const index = data.order[at];
    try {
      await replayFile(index, data.files[index], replayer, post);
    } catch (error) {
      post({ type: "failed", index, message: error instanceof Error ? error.message : String(error) });
      return;
    }
  }
  post({ type: "idle" });
}
