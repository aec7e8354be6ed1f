#!/usr/bin/env node
// pi-context-ledger: the lab CLI. `lab` compares strategies on sessions, `bench` measures performance,
// `machines` exports the statecharts, `show` prints a session's ledger as the extension sees it.

const USAGE = `Usage: pi-context-ledger <command> [options]

Commands:
  lab [files or dirs…]   replay sessions through every strategy and baseline (default: a generated sample)
  bench                  performance benchmarks, with ratios against a reference measured in the same run
  machines               export the statecharts (JSON, for the Stately inspector)
  show <session.jsonl>   the ledger as the extension sees it: facts, timeline, hidden and visible counts

Run a command with --help for its options.
`;

const [command, ...rest] = process.argv.slice(2);
// Commands load on demand: `--help` then works in an installed copy without Pi, a peer dependency the
// commands themselves need.
const commands: Record<string, () => Promise<(argv: string[]) => Promise<number>>> = {
  lab: async () => (await import("./commands/lab.ts")).runLab,
  bench: async () => (await import("./commands/bench.ts")).runBench,
  machines: async () => (await import("./commands/machines.ts")).runMachines,
  show: async () => (await import("./commands/show.ts")).runShow,
};

/** Pi missing from an install without peer dependencies: one line saying what to install, not a stack. */
function missingPi(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const match = error instanceof Error && code === "ERR_MODULE_NOT_FOUND" ? /'(@earendil-works\/[^/']+|typebox)'/.exec(error.message) : null;
  return match ? `needs ${match[1]}, a peer dependency that is not installed (npm install @earendil-works/pi-coding-agent)` : undefined;
}

if (!command || command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(USAGE);
  process.exitCode = command ? 0 : 2;
} else if (!commands[command]) {
  process.stderr.write(`pi-context-ledger: unknown command "${command}"\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  try {
    process.exitCode = await (await commands[command]())(rest);
  } catch (error) {
    const missing = missingPi(error);
    process.stderr.write(`pi-context-ledger ${command}: ${missing ?? (error instanceof Error ? (error.stack ?? error.message) : String(error))}\n`);
    process.exitCode = 1;
  }
}
