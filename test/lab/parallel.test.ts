// A folder replayed on worker threads gives the serial run's JSON byte for byte, timings aside; progress shows a
// line per worker and the time left for the whole run.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { jobCount } from "../../src/lab/commands/lab.ts";
import { createWorkerProgress } from "../../src/lab/progress.ts";
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
