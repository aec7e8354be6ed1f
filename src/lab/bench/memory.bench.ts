// The lab's memory and time on a large session: a generated session file (10 MB by default, 100 MB with
// `bench --large`, any size with LAB_BENCH_MB) is replayed by the real CLI, as a user runs it, with every row;
// its peak resident memory above the fixed cost (the same CLI on a tiny session) is compared with the file size.
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LabResult } from "../results.ts";
import { generateSession } from "../sample/generate.ts";
import type { BenchOptions } from "../commands/bench.ts";
import type { BenchRow } from "./types.ts";

/** Write a linear session of about `megabytes` MB by chaining generated sessions; streams, never holds it all. */
export async function writeLargeSession(path: string, megabytes: number, tasks = 64): Promise<number> {
  const out = createWriteStream(path);
  const write = (line: string) => new Promise<void>((ok) => (out.write(line) ? ok() : out.once("drain", () => ok())));
  const target = megabytes * 1024 * 1024;
  let bytes = 0;
  let parent: string | null = null;
  let round = 0;
  await write(
    `${JSON.stringify({ type: "session", version: 3, id: "bench-large", timestamp: "2025-01-06T00:00:00.000Z", cwd: "/home/dev/src/bench" })}\n`,
  );
  while (bytes < target) {
    const session = generateSession(90_000 + round, round, { tasks, longOutputRate: 0.04 });
    for (const entry of session.entries) {
      if (entry.type === "session") continue;
      const id = `${round.toString(36)}-${entry.id}`;
      const line = `${JSON.stringify({ ...entry, id, parentId: parent })}\n`;
      parent = id;
      bytes += Buffer.byteLength(line);
      await write(line);
    }
    round++;
  }
  await new Promise<void>((ok) => out.end(ok));
  return bytes;
}

/** Run the lab CLI on one file as a user would (it sizes its own heap); returns its result document and wall time. */
function labRun(file: string, json: string): { result: LabResult; seconds: number } {
  const bin = fileURLToPath(new URL("../bin.ts", import.meta.url));
  const started = Date.now();
  const env = { ...process.env };
  delete env.PI_CONTEXT_LEDGER_LAB_CHILD;
  const child = spawnSync(process.execPath, [bin, "lab", file, "--json", json, "--no-report", "--quiet"], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env,
  });
  if (child.status !== 0) throw new Error(`lab failed on ${file}: ${child.stderr.slice(0, 2000)}`);
  return { result: JSON.parse(readFileSync(json, "utf8")) as LabResult, seconds: (Date.now() - started) / 1000 };
}

export async function benchLabMemory(options: BenchOptions): Promise<BenchRow[]> {
  const megabytes = options.memoryMb;
  const dir = mkdtempSync(join(tmpdir(), "lab-memory-"));
  try {
    // Reference: the same CLI on a tiny session (two tasks), so the fixed cost of Node and Pi's modules is known.
    const tiny = join(dir, "tiny.jsonl");
    await writeLargeSession(tiny, 0.001, 2);
    const baseline = labRun(tiny, join(dir, "tiny.json")).result.run?.maxRssBytes ?? 0;
    const file = join(dir, "large.jsonl");
    await writeLargeSession(file, megabytes);
    const size = statSync(file).size;
    const { result, seconds } = labRun(file, join(dir, "out.json"));
    const rss = result.run?.maxRssBytes ?? 0;
    const session = result.sessions[0];
    const mb = (size / 1e6).toFixed(0);
    return [
      { suite: "memory", name: `lab on a tiny session, peak RSS (fixed cost)`, value: baseline / 1e6, unit: "MB" },
      {
        suite: "memory",
        name: `lab on a ${mb} MB session (${session.branchEntries} entries), peak RSS`,
        value: rss / 1e6,
        unit: "MB",
        reference: "session file size",
        ratio: rss / size,
      },
      {
        suite: "memory",
        name: `lab on a ${mb} MB session, RSS above the fixed cost`,
        value: (rss - baseline) / 1e6,
        unit: "MB",
        reference: "session file size",
        ratio: (rss - baseline) / size,
        target: "≤ 3x",
      },
      {
        suite: "memory",
        name: `lab on a ${mb} MB session, wall time (${session.rows.length} rows, one pass)`,
        value: seconds,
        unit: "s",
      },
      {
        suite: "memory",
        name: `lab on a ${mb} MB session, CPU time of the replaying process`,
        value: result.run?.cpuSeconds ?? 0,
        unit: "s",
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
