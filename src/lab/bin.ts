#!/usr/bin/env node
// pi-context-ledger: the lab CLI. `lab` compares strategies on sessions, `bench` measures performance,
// `machines` exports the statecharts, `show` prints a session's ledger as the extension sees it.
import { spawn } from "node:child_process";
import { availableParallelism, constants as osConstants } from "node:os";
import { join } from "node:path";
import { firstLine, InputError } from "./errors.ts";
import { childFlags, heapEnv, inputSize, workerHeapMb } from "./heap.ts";
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

/** How many workers the lab's child starts before it loads the lab (parallel.ts, warmUpWorkers). */
const WARM_ENV = "PI_CONTEXT_LEDGER_LAB_WARM";

/** Signals the parent passes on to the lab's child, so that stopping the command stops the replay. */
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * Run the lab in a child Node with heap and compiler flags for its input; its exit code is ours. The child is tied to this
 * process: signals sent here are passed on, and the child leaves when the IPC channel closes, which it does
 * however this process ends (even on SIGKILL). The channel carries no messages.
 */
async function labWithSizedHeap(argv: string[]): Promise<number> {
  // Only --sessions needs Pi's agent directory; the settings module pulls in every strategy, which would
  // cost this waiting parent process tens of megabytes for the whole run.
  const sessionsDir = argv.includes("--sessions")
    ? join((await import("../host/settings.ts")).agentDir(), "sessions")
    : "";
  const size = await inputSize(argv, sessionsDir);
  const cores = availableParallelism();
  const workers = (await import("./parallel.ts")).workersToWarm(argv, size.files, cores);
  const flags = childFlags(size.bytes, size.largest, { replayers: workers + 1, cores });
  const child = spawn(process.execPath, [...process.execArgv, ...flags, process.argv[1], "lab", ...argv], {
    stdio: ["inherit", "inherit", "inherit", "ipc"],
    env: { ...heapEnv(process.env), PI_CONTEXT_LEDGER_LAB_CHILD: "1", [WARM_ENV]: String(workers) },
  });
  let stopped: NodeJS.Signals | undefined;
  const forward = (signal: NodeJS.Signals) => () => {
    stopped ??= signal;
    child.kill(signal);
  };
  const handlers = FORWARDED.map((signal) => [signal, forward(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  const limitMb = Number(/--max-old-space-size=(\d+)/.exec(flags.join(" "))?.[1] ?? 0);
  return new Promise((ok) =>
    child.once("exit", (code, signal) => {
      for (const [name, handler] of handlers) process.off(name, handler);
      ok(childExit(code, signal, stopped, limitMb));
    }),
  );
}

/** The command's exit code for how the lab's child ended, with one line on stderr when it did not end by itself. */
function childExit(
  code: number | null,
  signal: NodeJS.Signals | null,
  stopped: NodeJS.Signals | undefined,
  limitMb: number,
): number {
  // A progress bar may be half drawn on the terminal: the line is cleared before anything else is written.
  const clear = process.stderr.isTTY ? "\r\x1b[K" : "";
  if (stopped) {
    process.stderr.write(`${clear}lab: stopped (${stopped})\n`);
    return 128 + (osConstants.signals[stopped] ?? 2);
  }
  if (signal) {
    // V8 aborts when the heap is full (it prints its own "heap out of memory" first); the kernel's OOM killer
    // sends SIGKILL. Neither is an interruption.
    const cause =
      signal === "SIGABRT"
        ? `ran out of memory (heap limit ${limitMb} MB) or aborted`
        : signal === "SIGKILL"
          ? "was killed (SIGKILL: the system may have run out of memory)"
          : `was stopped by ${signal}`;
    process.stderr.write(`${clear}lab: the replay ${cause}\n`);
    return 128 + (osConstants.signals[signal] ?? 0);
  }
  return code ?? 1;
}

/**
 * In the lab's child: leave when the parent does. The IPC channel closes with the parent; the parent's pid is
 * watched as well, for a child started without the channel. Neither keeps the process alive on its own.
 */
function tieToParent(): void {
  if (process.channel) {
    process.once("disconnect", () => process.exit(129));
    process.channel.unref();
  }
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(129);
  }, 500).unref();
}

/** Pi missing from an install without peer dependencies: one line saying what to install, not a stack. */
function missingPi(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const match =
    error instanceof Error && code === "ERR_MODULE_NOT_FOUND"
      ? /'(@earendil-works\/[^/']+|typebox)'/.exec(error.message)
      : null;
  return match
    ? `needs ${match[1]}, a peer dependency that is not installed (npm install @earendil-works/pi-coding-agent)`
    : undefined;
}

if (!command || command === "--help" || command === "-h" || command === "help") {
  process.stdout.write(USAGE);
  process.exitCode = command ? 0 : 2;
} else if (!Object.hasOwn(commands, command)) {
  process.stderr.write(
    `pi-context-ledger: unknown command ${JSON.stringify(terminalSafe(command))} (see pi-context-ledger --help)\n`,
  );
  process.exitCode = 2;
} else {
  try {
    if (command === "lab" && process.env.PI_CONTEXT_LEDGER_LAB_CHILD) {
      tieToParent();
      // The workers of a parallel run load their modules on the other cores while this thread loads its own.
      // Bounded by the cores: a run asking for more workers starts the rest when it begins.
      const warm = Math.min(Math.trunc(Number(process.env[WARM_ENV] ?? 0)) || 0, availableParallelism());
      // Their heap is set by this process's heap flags, which V8 applies to every thread (workerHeapMb is for a run
      // without them).
      if (warm > 0) (await import("./parallel.ts")).warmUpWorkers(warm, workerHeapMb(0));
    }
    const sized =
      command === "lab" &&
      !process.env.PI_CONTEXT_LEDGER_LAB_CHILD &&
      !process.execArgv.some((a) => a.startsWith("--max-old-space-size"));
    // The process that runs a command checks Pi first: an older Pi fails later with a missing function.
    // Pi's version is read from its own module: the package root would load all of Pi (see pi-internals.ts).
    const tooOld =
      sized || command === "machines"
        ? undefined
        : (await import("../host/pi-version.ts")).piVersionProblem(
            await (await import("./pi-internals.ts")).installedPiVersion(),
          );
    if (tooOld) {
      process.stderr.write(`pi-context-ledger ${command}: ${tooOld}\n`);
      process.exitCode = 1;
    } else process.exitCode = sized ? await labWithSizedHeap(rest) : await (await commands[command]())(rest);
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
      const stack =
        process.env.PI_CONTEXT_LEDGER_DEBUG && error instanceof Error
          ? `\n${error.stack}`
          : " (PI_CONTEXT_LEDGER_DEBUG=1 shows the stack)";
      process.stderr.write(`pi-context-ledger ${command}: internal error: ${terminalSafe(firstLine(error))}${stack}\n`);
      process.exitCode = 1;
    }
  }
}
