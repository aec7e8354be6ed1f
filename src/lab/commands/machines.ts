// `pi-context-ledger machines`: export every statechart in machines/ as JSON (the Stately inspector and
// visualizers read this form), to stdout or one file per machine.
import { mkdir, readdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const USAGE = `Usage: pi-context-ledger machines [--out <dir>]

Exports each XState machine in machines/*.machine.ts as JSON.
  --out <dir>   write <id>.json files instead of printing one JSON document
`;

interface MachineLike {
  id: string;
  toJSON(): unknown;
}

function isMachine(value: unknown): value is MachineLike {
  return !!value && typeof value === "object" && typeof (value as MachineLike).toJSON === "function" && typeof (value as MachineLike).id === "string" && "config" in value;
}

/** Load the machines exported by machines/*.machine.ts, keyed by machine id. */
export async function loadMachines(dir = fileURLToPath(new URL("../../../machines/", import.meta.url))): Promise<Map<string, MachineLike>> {
  const found = new Map<string, MachineLike>();
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith(".machine.ts")).sort();
  for (const file of files) {
    const module = (await import(pathToFileURL(join(dir, file)).href)) as Record<string, unknown>;
    for (const value of Object.values(module)) if (isMachine(value)) found.set(value.id, value);
  }
  return found;
}

export async function runMachines(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({ args: [...argv], options: { out: { type: "string" }, help: { type: "boolean", short: "h" } } });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const machines = await loadMachines();
  if (!machines.size) {
    process.stderr.write("machines: no statecharts found in machines/*.machine.ts\n");
    return 2;
  }
  if (values.out) {
    const dir = resolve(values.out);
    await mkdir(dir, { recursive: true });
    for (const [id, machine] of machines) {
      await writeFile(join(dir, `${id}.json`), `${JSON.stringify(machine.toJSON(), null, 2)}\n`);
      process.stdout.write(`${id}: ${join(values.out, `${id}.json`)}\n`);
    }
    return 0;
  }
  process.stdout.write(`${JSON.stringify(Object.fromEntries([...machines].map(([id, m]) => [id, m.toJSON()])), null, 2)}\n`);
  return 0;
}
