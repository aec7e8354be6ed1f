// `pi-context-ledger bench`: runs every src/lab/bench/*.bench.ts module (each exports `bench…()` functions
// returning BenchRow[]), prints values with their ratios against references measured in the same run.
import { readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { BenchRow } from "../bench/types.ts";
import { InputError } from "../errors.ts";
import { checkOutputPath } from "../inputs.ts";

/** Size of the memory suite's session by default: large enough to show the trend, small enough for minutes. */
export const DEFAULT_MEMORY_MB = 10;

const USAGE = `Usage: pi-context-ledger bench [--json <file>] [--only <suite,…>] [--large] [--strict]

Runs the performance benchmarks (src/lab/bench/*.bench.ts). Each figure is printed with its ratio against a
reference measured in the same run, so numbers compare across machines. A figure with a target is marked
met (✓) or missed (✗).
  --json <file>   write the rows as JSON ("-" for stdout)
  --only <names>  run only the named suites (file names without .bench.ts)
  --large         the memory suite replays a 100 MB session (default ${DEFAULT_MEMORY_MB} MB; LAB_BENCH_MB sets any size)
  --strict        exit 1 when a target is missed
`;

/** Options every bench function receives. */
export interface BenchOptions {
  /** Megabytes of the memory suite's generated session. */
  memoryMb: number;
}

type BenchFn = (options: BenchOptions) => Promise<BenchRow[]>;

/** Bench modules next to this command, by suite name. */
export async function benchModules(
  dir = fileURLToPath(new URL("../bench/", import.meta.url)),
): Promise<Map<string, BenchFn[]>> {
  const out = new Map<string, BenchFn[]>();
  for (const file of (await readdir(dir)).filter((f) => f.endsWith(".bench.ts")).sort()) {
    const module = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
    const fns = Object.entries(module)
      .filter(([name, value]) => name.startsWith("bench") && typeof value === "function")
      .map(([, value]) => value as BenchFn);
    out.set(file.replace(/\.bench\.ts$/, ""), fns);
  }
  return out;
}

function format(value: number): string {
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(3);
}

/**
 * Whether a figure meets its target; undefined without one the runner can judge. "≤ Nx" and "≥ Nx" bound the
 * ratio; "≥ N <unit>" (or "≤ N <unit>") bounds the value itself, in the row's own unit (an absolute floor such as
 * the lab's megabytes per CPU second).
 */
export function targetMet(row: BenchRow): boolean | undefined {
  const target = row.target?.trim() ?? "";
  const onRatio = /^([≤≥])\s*([\d.]+)x$/.exec(target);
  if (onRatio) {
    if (row.ratio === undefined) return undefined;
    return onRatio[1] === "≤" ? row.ratio <= Number(onRatio[2]) : row.ratio >= Number(onRatio[2]);
  }
  const onValue = /^([≤≥])\s*([\d.]+)\s+(.+)$/.exec(target);
  if (!onValue || onValue[3] !== row.unit) return undefined;
  return onValue[1] === "≤" ? row.value <= Number(onValue[2]) : row.value >= Number(onValue[2]);
}

/** Plain table of bench rows, each target marked met or missed, with a count of misses at the end. */
export function renderBench(rows: readonly BenchRow[]): string {
  const mark = (r: BenchRow) => {
    const met = targetMet(r);
    return met === undefined ? (r.target ?? "") : `${r.target} ${met ? "✓" : "✗ missed"}`;
  };
  const cells = [
    ["suite", "name", "value", "ratio", "target", "reference"],
    ...rows.map((r) => [
      r.suite,
      r.name,
      `${format(r.value)} ${r.unit}`,
      r.ratio === undefined ? "" : `${r.ratio.toFixed(3)}x`,
      mark(r),
      r.reference ?? "",
    ]),
  ];
  const widths = cells[0].map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  const table = cells
    .map((row) =>
      row
        .map((cell, c) => (c === 2 || c === 3 ? cell.padStart(widths[c]) : cell.padEnd(widths[c])))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
  const judged = rows.map(targetMet).filter((m) => m !== undefined);
  const missed = judged.filter((m) => !m).length;
  return `${table}\n\n${judged.length} target(s): ${judged.length - missed} met, ${missed} missed\n`;
}

/** Run the bench command; returns the exit code. `dir` holds the bench modules (tests point it elsewhere). */
export async function runBench(argv: readonly string[], dir?: string): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      json: { type: "string" },
      only: { type: "string" },
      large: { type: "boolean" },
      strict: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const modules = await benchModules(dir);
  const only = values.only?.split(",").map((s) => s.trim());
  const unknown = only?.filter((name) => !modules.has(name)) ?? [];
  if (unknown.length) throw new InputError(`unknown suite "${unknown[0]}" (known: ${[...modules.keys()].join(", ")})`);
  const jsonPath = values.json && values.json !== "-" ? await checkOutputPath("--json", values.json) : undefined;
  const env = process.env.LAB_BENCH_MB;
  const memoryMb = env !== undefined ? Number(env) : values.large ? 100 : DEFAULT_MEMORY_MB;
  if (!(memoryMb > 0)) throw new InputError(`bad LAB_BENCH_MB "${env}" (megabytes, above 0)`);
  const rows: BenchRow[] = [];
  for (const [suite, fns] of modules) {
    if (only && !only.includes(suite)) continue;
    process.stderr.write(`bench: ${suite}…\n`);
    for (const fn of fns) rows.push(...(await fn({ memoryMb })));
  }
  if (values.json === "-")
    process.stdout.write(
      `${JSON.stringify(
        rows.map((r) => ({ ...r, met: targetMet(r) })),
        null,
        1,
      )}\n`,
    );
  else {
    process.stdout.write(renderBench(rows));
    if (jsonPath)
      await writeFile(
        jsonPath,
        `${JSON.stringify(
          rows.map((r) => ({ ...r, met: targetMet(r) })),
          null,
          1,
        )}\n`,
      );
  }
  return values.strict && rows.some((r) => targetMet(r) === false) ? 1 : 0;
}
