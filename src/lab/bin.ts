#!/usr/bin/env node
// pi-context-ledger: the lab CLI. `lab` compares strategies on sessions, `bench` measures performance,
// `machines` exports the statecharts, `show` prints a session's ledger as the extension sees it.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { firstLine, InputError } from "./errors.ts";
import { heapEnv, heapFlags, inputBytes } from "./heap.ts";
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
// Commands load on demand: `--help` then works in an installed copy without Pi, a peer dependency the
// commands themselves need; and a `lab` run first re-starts itself with a heap sized to its input (see heap.ts).
const commands: Record<string, () => Promise<(argv: string[]) => Promise<number>>> = {
  lab: async () => (await import("./commands/lab.ts")).runLab,
  bench: async () => (await import("./commands/bench.ts")).runBench,
  machines: async () => (await import("./commands/machines.ts")).runMachines,
  show: async () => (await import("./commands/show.ts")).runShow,
};

/** Run the lab in a child Node with heap flags for its input; its exit code is ours. */
async function labWithSizedHeap(argv: string[]): Promise<number> {
  // Only --sessions needs Pi's agent directory; the settings module pulls in every strategy, which would
  // cost this waiting parent process tens of megabytes for the whole run.
  const sessionsDir = argv.includes("--sessions") ? join((await import("../host/settings.ts")).agentDir(), "sessions") : "";
  const flags = heapFlags(await inputBytes(argv, sessionsDir));
  const child = spawn(process.execPath, [...process.execArgv, ...flags, process.argv[1], "lab", ...argv], { stdio: "inherit", env: { ...heapEnv(process.env), PI_CONTEXT_LEDGER_LAB_CHILD: "1" } });
  return new Promise((ok) => child.once("exit", (code, signal) => ok(code ?? (signal ? 128 + 2 : 1))));
}

/** Pi missing from an install without peer dependencies: one line saying what to install, not a stack. */
function missingPi(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const match = error instanceof Error && code === "ERR_MODULE_NOT_FOUND" ? /'(@earendil-works\/[^/']+|typebox)'/.exec(error.message) : null;
  return match ? `needs ${match[1]}, a peer dependency that is not installed (npm install @earendil-works/pi-coding-agent)` : undefined;
}

if (!command || command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(USAGE);
  process.exitCode = command ? 0 : 2;
} else if (!Object.hasOwn(commands, command)) {
  process.stderr.write(`pi-context-ledger: unknown command ${JSON.stringify(terminalSafe(command))} (see pi-context-ledger --help)\n`);
  process.exitCode = 2;
} else {
  try {
    const sized = command === "lab" && !process.env.PI_CONTEXT_LEDGER_LAB_CHILD && !process.execArgv.some((a) => a.startsWith("--max-old-space-size"));
    process.exitCode = sized ? await labWithSizedHeap(rest) : await (await commands[command]())(rest);
  } catch (error) {
    // Bad input is one line and exit 2; anything else is one line too, exit 1, with the stack on request.
    const missing = missingPi(error);
    if (error instanceof InputError) {
      process.stderr.write(`${command}: ${terminalSafe(error.message)}\n`);
      process.exitCode = 2;
    } else if (missing) {
      process.stderr.write(`pi-context-ledger ${command}: ${missing}\n`);
      process.exitCode = 1;
    } else {
      const stack = process.env.PI_CONTEXT_LEDGER_DEBUG && error instanceof Error ? `\n${error.stack}` : " (PI_CONTEXT_LEDGER_DEBUG=1 shows the stack)";
      process.stderr.write(`pi-context-ledger ${command}: internal error: ${terminalSafe(firstLine(error))}${stack}\n`);
      process.exitCode = 1;
    }
  }
}
