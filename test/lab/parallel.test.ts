// A folder replayed on worker threads gives the serial run's JSON byte for byte, timings aside; progress shows a
// line per worker and the time left for the whole run.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { jobCount } from "../../src/lab/commands/lab.ts";
import { workerHeapMb } from "../../src/lab/heap.ts";
import { claimOrder, releaseWorkers, replayInWorkers, warmUpWorkers, workersToWarm } from "../../src/lab/parallel.ts";
import { createWorkerProgress, type WorkerProgress } from "../../src/lab/progress.ts";
import type { SessionResult } from "../../src/lab/replay.ts";
import { defaultSettings } from "../../src/lab/row.ts";
import { selectRows } from "../../src/lab/rows/registry.ts";
import { DEFAULT_PRICES } from "../../src/lab/metrics.ts";
import { type FileReplayer, replayFile, type WorkerReport } from "../../src/lab/session-worker.ts";
import { readingSession, sessionJsonl } from "./fixtures.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));

/** The JSON without what depends on the clock: run figures and measured latencies. */
function timeless(text: string): string {
  return JSON.stringify(
    JSON.parse(text, (key, value: unknown) => (key === "run" || key === "latencyMs" ? undefined : value)),
  );
}

describe("parallel replay", () => {
  it("--jobs 3 writes the same JSON as --jobs 1, timings aside", () => {
    const dir = mkdtempSync(join(tmpdir(), "lab-parallel-"));
    for (const [name, tasks] of [
      ["a", 12],
      ["b", 3],
      ["c", 20],
      ["d", 6],
    ] as const)
      writeFileSync(
        join(dir, `${name}.jsonl`),
        sessionJsonl(readingSession(`/p/${name}`, tasks).entries, `/p/${name}`),
      );
    const run = (jobs: string) => {
      const json = join(dir, `out-${jobs}.json`);
      const r = spawnSync(
        process.execPath,
        [join(repo, "src/lab/bin.ts"), "lab", dir, "--window", "20k", "--jobs", jobs, "--json", json, "--no-report"],
        { cwd: dir, encoding: "utf8", timeout: 240_000 },
      );
      expect(r.status, r.stderr).toBe(0);
      return { json: readFileSync(json, "utf8"), stderr: r.stderr };
    };
    const serial = run("1");
    const parallel = run("3");
    expect(timeless(parallel.json)).toBe(timeless(serial.json));
    expect(JSON.parse(parallel.json).sessions.length).toBe(4);
    // Plain progress (no terminal): which worker replays what, and the whole run's share.
    expect(parallel.stderr).toMatch(/\[\d\/4\] worker [123] replaying [abcd]\.jsonl/);
  }, 300_000);

  it("--jobs 2 replays in this thread and on one worker: every file once, results in the files' order", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lab-parallel-"));
    const files = [5, 2, 9].map((tasks, i) => {
      const file = join(dir, `${"xyz"[i]}.jsonl`);
      writeFileSync(file, sessionJsonl(readingSession(`/p/${i}`, tasks).entries, `/p/${i}`));
      return file;
    });
    const settings = defaultSettings(20_000);
    const here: FileReplayer = { settings, rows: selectRows(undefined).factories, prices: DEFAULT_PRICES };
    // Serially, in this thread, for comparison.
    const serial: SessionResult[] = [];
    for (const [i, f] of files.entries())
      await replayFile(i, f, here, (r: WorkerReport) => (r.type === "done" ? serial.push(r.result) : undefined));
    const slots = new Set<number>();
    const started: number[] = [];
    // This thread waits, in its first file, until the worker has taken one: small sessions would otherwise all be
    // replayed here before the worker has loaded its modules (which is right, but not what this test is about).
    let workerStarted = () => {};
    const workerTook = new Promise<void>((ok) => (workerStarted = ok));
    const progress: WorkerProgress = {
      begin() {},
      start: (slot, _label, index) => {
        slots.add(slot);
        started.push(index);
        if (slot === 1) workerStarted();
      },
      update() {},
      finish() {},
      end() {},
    };
    const local: number[] = [];
    const results = await replayInWorkers(
      files,
      2,
      { settings, strategies: undefined, prices: DEFAULT_PRICES },
      progress,
      workerHeapMb,
      async (index, path, post) => {
        local.push(index);
        await replayFile(index, path, here, post);
        if (local.length === 1) await workerTook;
      },
    );
    // This thread took the largest file first; the worker, loading its modules meanwhile, took the next.
    expect(local[0]).toBe(2);
    expect(local).not.toContain(0);
    expect([...slots].sort()).toEqual([0, 1]);
    expect(started.sort()).toEqual([0, 1, 2]);
    expect(timeless(JSON.stringify(results))).toBe(timeless(JSON.stringify(serial)));
  }, 120_000);

  it("a run takes the workers warmed up before it; those no run takes are ended", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lab-parallel-"));
    const files = [4, 6].map((tasks, i) => {
      const file = join(dir, `${"pq"[i]}.jsonl`);
      writeFileSync(file, sessionJsonl(readingSession(`/p/${i}`, tasks).entries, `/p/${i}`));
      return file;
    });
    const settings = defaultSettings(20_000);
    const here: FileReplayer = { settings, rows: selectRows(undefined).factories, prices: DEFAULT_PRICES };
    const [early] = warmUpWorkers(1, 256);
    const reports: WorkerReport["type"][] = [];
    early.on("message", (r: WorkerReport) => reports.push(r.type));
    const progress: WorkerProgress = { begin() {}, start() {}, update() {}, finish() {}, end() {} };
    // This thread replays nothing, so the one file left goes to the worker.
    const results = await replayInWorkers(
      files,
      2,
      { settings, strategies: undefined, prices: DEFAULT_PRICES },
      progress,
      workerHeapMb,
      async (index, path, post) => {
        await replayFile(index, path, here, post);
        while (!reports.includes("start")) await new Promise((ok) => setTimeout(ok, 20));
      },
    );
    expect(reports).toEqual(expect.arrayContaining(["start", "done", "idle"]));
    expect(results.map((r) => r.name)).toEqual(["p.jsonl", "q.jsonl"]);
    // Warmed up, then not needed: ended.
    const [unused] = warmUpWorkers(1, 256);
    const ended = new Promise((ok) => unused.once("exit", ok));
    await releaseWorkers();
    await ended;
  }, 120_000);

  it("a replay that fails stops the run with its error, workers included", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lab-parallel-"));
    const files = [3, 3, 3].map((tasks, i) => {
      const file = join(dir, `f${i}.jsonl`);
      writeFileSync(file, sessionJsonl(readingSession(`/p/${i}`, tasks).entries, `/p/${i}`));
      return file;
    });
    const progress: WorkerProgress = { begin() {}, start() {}, update() {}, finish() {}, end() {} };
    const run = replayInWorkers(
      files,
      3,
      { settings: defaultSettings(20_000), strategies: undefined, prices: DEFAULT_PRICES },
      progress,
      workerHeapMb,
      async () => {
        throw new Error("broken here");
      },
    );
    await expect(run).rejects.toThrow("broken here");
  }, 60_000);

  it("how many workers to start before the lab loads: one fewer than the sessions replayed at once", () => {
    expect(workersToWarm(["dir"], 4, 2)).toBe(1);
    expect(workersToWarm(["dir", "--jobs", "8"], 3, 2)).toBe(2);
    expect(workersToWarm(["dir", "--jobs", "1"], 4, 2)).toBe(0);
    expect(workersToWarm(["one.jsonl"], 1, 8)).toBe(0);
    expect(workersToWarm(["--sessions", "--last", "2"], 40, 8)).toBe(1);
    expect(workersToWarm(["dir", "--judge", "a/b"], 4, 2)).toBe(0);
    expect(workersToWarm(["dir", "--jobs", "x"], 4, 2)).toBe(0);
    expect(workersToWarm(["dir", "--no-such-option"], 4, 2)).toBe(0);
  });

  it("files are taken largest first, ties in the run's order", () => {
    expect(claimOrder([3, 10, 3, 7])).toEqual([1, 3, 0, 2]);
    expect(claimOrder([])).toEqual([]);
  });

  it("--jobs takes a count of 1 or more, and defaults to the cores", () => {
    expect(jobCount(undefined, 8)).toBe(8);
    expect(jobCount("2")).toBe(2);
    expect(() => jobCount("0")).toThrow(/bad --jobs "0"/);
    expect(() => jobCount("many")).toThrow(/bad --jobs/);
  });

  it("on a terminal: one line per worker and an ETA line, redrawn in place", () => {
    let out = "";
    let t = 0;
    const stream = { isTTY: true, write: (s: string) => ((out += s), true) } as unknown as NodeJS.WriteStream;
    const p = createWorkerProgress(2, stream, false, () => t);
    p.begin(3, 3000);
    p.start(0, "a.jsonl", 0, 1000);
    p.start(1, "b.jsonl", 1, 1000);
    t = 10_000;
    p.update(0, 50, 100);
    // Redraws are at most ten a second.
    t = 10_200;
    p.update(1, 50, 100);
    const last = out.slice(out.lastIndexOf("\x1b[J"));
    expect(last).toMatch(/worker 1 \[1\/3\] .* 50% a\.jsonl/);
    expect(last).toMatch(/worker 2 \[2\/3\] .* 50% b\.jsonl/);
    // 1000 of 3000 bytes in 10.2 s: about 20 s left.
    expect(last).toMatch(/all: 33% of 3 sessions, about 20s left/);
    p.finish(0, "done");
    expect(out).toContain("[1/3] a.jsonl: done");
    p.end();
  });
});
