// The lab's memory and time on a large session: a generated session file (10 MB by default, 100 MB with
// `bench --large`, any size with LAB_BENCH_MB) is replayed by the real CLI, as a user runs it, with every row;
// its peak resident memory above the fixed cost (the same CLI on a tiny session) is compared with the file size.
// The same run gives the lab's throughput (megabytes of session per CPU second of the replaying process), set
// against what Pi itself spends on the file in this run (read, parse, build the session context), and its
// linearity: the CPU time of the session over that of one a tenth its size.
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { buildSessionContext, parseSessionEntries, type SessionEntry } from "@earendil-works/pi-coding-agent";
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

/** The lab's throughput floor: megabytes of session replayed, all rows, per CPU second of the replaying process. */
export const THROUGHPUT_TARGET = "≥ 1 MB/CPU s";
/**
 * Linearity: the CPU time of a session over that of a smaller one stays within this factor of their size ratio
 * (for 100 MB over 10 MB: at most 12x).
 */
export const LINEARITY_SLACK = 1.2;

/** Tasks per generated round: 64 make rounds of about 2.6 MB; a tenth of the default 10 MiB needs smaller ones. */
function tasksFor(megabytes: number): number {
  return megabytes < 5 ? 16 : 64;
}

/**
 * Run the lab CLI on files or folders as a user would (it sizes its own heap); returns its result document and
 * wall time. `extra` are further options (`--jobs 2`).
 */
export function labRun(
  inputs: string | readonly string[],
  json: string,
  extra: readonly string[] = [],
): { result: LabResult; seconds: number } {
  const bin = fileURLToPath(new URL("../bin.ts", import.meta.url));
  const started = Date.now();
  const env = { ...process.env };
  delete env.PI_CONTEXT_LEDGER_LAB_CHILD;
  const files = typeof inputs === "string" ? [inputs] : inputs;
  const child = spawnSync(
    process.execPath,
    [bin, "lab", ...files, ...extra, "--json", json, "--no-report", "--quiet"],
    {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env,
    },
  );
  if (child.status !== 0) throw new Error(`lab failed on ${files.join(", ")}: ${child.stderr.slice(0, 2000)}`);
  return { result: JSON.parse(readFileSync(json, "utf8")) as LabResult, seconds: (Date.now() - started) / 1000 };
}

/**
 * CPU seconds Pi itself spends on a session file, in this process: read it, parse its lines, build the context of
 * its leaf. The least any replay of the file costs; the lower of two runs, the modules already loaded.
 */
export function piReadCpuSeconds(file: string): number {
  let best = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 2; run++) {
    const before = process.cpuUsage();
    const entries = parseSessionEntries(readFileSync(file, "utf8")).filter(
      (e): e is SessionEntry => e.type !== "session",
    );
    buildSessionContext(entries);
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / 1e6);
  }
  return best;
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
    const cpu = result.run?.cpuSeconds ?? 0;
    const reference = piReadCpuSeconds(file);
    // Linearity: the same generator at a tenth of the size (10 MB beside --large's 100 MB).
    const small = join(dir, "small.jsonl");
    await writeLargeSession(small, megabytes / 10, tasksFor(megabytes / 10));
    const smallSize = statSync(small).size;
    const smallCpu = labRun(small, join(dir, "small.json")).result.run?.cpuSeconds ?? 0;
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
        value: cpu,
        unit: "s",
        reference: "Pi reading the file: read, parse, buildSessionContext (in the bench process)",
        ratio: reference > 0 ? cpu / reference : undefined,
      },
      {
        suite: "throughput",
        name: `lab on a ${mb} MB session, all rows: MB of session per CPU s`,
        value: cpu > 0 ? size / 1e6 / cpu : 0,
        unit: "MB/CPU s",
        reference: `Pi reading the same file: ${(size / 1e6 / reference).toFixed(1)} MB/CPU s`,
        ratio: reference > 0 && cpu > 0 ? reference / cpu : undefined,
        target: THROUGHPUT_TARGET,
      },
      {
        suite: "throughput",
        name: `linearity: CPU of the ${mb} MB session over a ${(smallSize / 1e6).toFixed(1)} MB one (${smallCpu.toFixed(1)} s; target ${LINEARITY_SLACK} x size ratio)`,
        value: cpu,
        unit: "s",
        reference: `CPU of the ${(smallSize / 1e6).toFixed(1)} MB session, same generator`,
        ratio: smallCpu > 0 ? cpu / smallCpu : undefined,
        target: `≤ ${((LINEARITY_SLACK * size) / smallSize).toFixed(1)}x`,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
