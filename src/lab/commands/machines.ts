// `pi-context-ledger machines`: export every statechart as JSON (the authored definition, which the Stately editor
// and inspector read) and as a Mermaid state diagram, into a directory (docs/machines for `npm run machines`).
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { exportMachines, renderMachineFiles } from "../machine-export.ts";

const USAGE = `Usage: pi-context-ledger machines [--out <dir>]

Exports each statechart as <name>.machine.json and <name>.machine.mmd.
  --out <dir>   write the files into <dir> (npm run machines uses docs/machines); without it, print the JSON
`;

export async function runMachines(argv: readonly string[]): Promise<number> {
  let values: { out?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { out: { type: "string" }, help: { type: "boolean", short: "h" } },
    }));
  } catch (error) {
    process.stderr.write(`machines: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.out) {
    for (const path of exportMachines(resolve(values.out))) process.stdout.write(`${path}\n`);
    return 0;
  }
  const files = renderMachineFiles();
  const json = Object.fromEntries(
    Object.entries(files)
      .filter(([name]) => name.endsWith(".json"))
      .map(([name, body]) => [name.replace(/\.machine\.json$/, ""), JSON.parse(body) as unknown]),
  );
  process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  return 0;
}
