// `pi-context-ledger bench`: runs every src/lab/bench/*.bench.ts module (each exports `bench…()` functions
// returning BenchRow[]), prints values with their ratios against references measured in the same run.
import { readdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { BenchRow } from "../bench/types.ts";

const USAGE = `Usage: pi-context-ledger bench [--json <file>] [--only <suite,…>]

Runs the performance benchmarks (src/lab/bench/*.bench.ts). Each figure is printed with its ratio against a
reference measured in the same run, so numbers compare across machines.
  --json <file>   write the rows as JSON ("-" for stdout)
  --only <names>  run only the named suites (file names without .bench.ts)
`;

type BenchFn = () => Promise<BenchRow[]>;

/** Bench modules next to this command, by suite name. */
export async function benchModules(dir = fileURLToPath(new URL("../bench/", import.meta.url))): Promise<Map<string, BenchFn[]>> {
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

/** Plain table of bench rows. */
export function renderBench(rows: readonly BenchRow[]): string {
  const cells = [["suite", "name", "value", "ratio", "target", "reference"], ...rows.map((r) => [r.suite, r.name, `${format(r.value)} ${r.unit}`, r.ratio === undefined ? "" : `${r.ratio.toFixed(3)}x`, r.target ?? "", r.reference ?? ""])];
  const widths = cells[0].map((_, c) => Math.max(...cells.map((row) => row[c].length)));
  return `${cells.map((row) => row.map((cell, c) => (c === 2 || c === 3 ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join("  ").trimEnd()).join("\n")}\n`;
}

export async function runBench(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { json: { type: "string" }, only: { type: "string" }, help: { type: "boolean", short: "h" } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const only = values.only?.split(",").map((s) => s.trim());
  const rows: BenchRow[] = [];
  for (const [suite, fns] of await benchModules()) {
    if (only && !only.includes(suite)) continue;
    process.stderr.write(`bench: ${suite}…\n`);
    for (const fn of fns) rows.push(...(await fn()));
  }
  if (values.json === "-") process.stdout.write(`${JSON.stringify(rows, null, 1)}\n`);
  else {
    process.stdout.write(renderBench(rows));
    if (values.json) await writeFile(resolve(values.json), `${JSON.stringify(rows, null, 1)}\n`);
  }
  return 0;
}
