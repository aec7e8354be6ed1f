#!/usr/bin/env node
// pi-context-ledger: the lab CLI. `lab` compares strategies on sessions, `bench` measures performance,
// `machines` exports the statecharts, `show` prints a session's ledger as the extension sees it.
import { runBench } from "./commands/bench.ts";
import { runLab } from "./commands/lab.ts";
import { runMachines } from "./commands/machines.ts";
import { firstLine, runShow } from "./commands/show.ts";
import { InputError } from "./errors.ts";
import { terminalSafe } from "./terminal-text.ts";

const USAGE = `Usage: pi-context-ledger <command> [options]

Commands:
  lab [files or dirs…]   replay sessions through every strategy and baseline (default: a generated sample)
  bench                  performance benchmarks, with ratios against a reference measured in the same run
  machines               export the statecharts (JSON, for the Stately inspector)
  show <session.jsonl>   the ledger as the extension sees it: facts, timeline, hidden and visible counts

Run a command with --help for its options.
`;

const [command, ...rest] = process.argv.slice(2);
const commands: Record<string, (argv: string[]) => Promise<number>> = { lab: runLab, bench: runBench, machines: runMachines, show: runShow };

if (!command || command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(USAGE);
  process.exitCode = command ? 0 : 2;
} else if (!commands[command]) {
  process.stderr.write(`pi-context-ledger: unknown command ${JSON.stringify(terminalSafe(command))} (see pi-context-ledger --help)\n`);
  process.exitCode = 2;
} else {
  try {
    process.exitCode = await commands[command](rest);
  } catch (error) {
    // Bad input is one line and exit 2; anything else is a bug, one line too, with the stack on request.
    if (error instanceof InputError) {
      process.stderr.write(`${command}: ${terminalSafe(error.message)}\n`);
      process.exitCode = 2;
    } else {
      const stack = process.env.PI_CONTEXT_LEDGER_DEBUG && error instanceof Error ? `\n${error.stack}` : " (PI_CONTEXT_LEDGER_DEBUG=1 shows the stack)";
      process.stderr.write(`pi-context-ledger ${command}: internal error: ${terminalSafe(firstLine(error))}${stack}\n`);
      process.exitCode = 1;
    }
  }
}
