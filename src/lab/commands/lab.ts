// `pi-context-ledger lab`: replay sessions through every row and print, write and chart the comparison.
import { parseArgs } from "node:util";
import { getHeapStatistics } from "node:v8";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { applySetting, checkApply, pasteText, settingsFile } from "../apply-setting.ts";
import { createDump, prepareDumpDir } from "../dump.ts";
import { firstLine, InputError } from "../errors.ts";
import {
  checkOutputPath,
  newestSessions,
  sampleInputs,
  sessionFiles,
  userSessionsDir,
  writeOutput,
} from "../inputs.ts";
import { LAB_OPTIONS } from "../lab-options.ts";
import { recentOptions } from "../recent.ts";
import { judgeRun, type JudgeNote, type ResolveJudgeModel } from "../judge.ts";
import { DEFAULT_PRICES, parsePrices } from "../metrics.ts";
import { workerHeapMb } from "../heap.ts";
import { releaseWorkers, replayInWorkers } from "../parallel.ts";
import { createProgress, createWorkerProgress } from "../progress.ts";
import { fileInput } from "../session-input.ts";
import { type FileReplayer, replayFile } from "../session-worker.ts";
import { choiceNote, parseWeights, recommend } from "../recommend.ts";
import { renderReport } from "../report/html.ts";
import {
  holdsRequest,
  type ReplayOptions,
  replaySession,
  type SessionInput,
  type SessionResult,
  yieldToEventLoop,
} from "../replay.ts";
import { type LabResult, nothingToReplay, replayedAny, totalsOf } from "../results.ts";
import { defaultSettings } from "../row.ts";
import { ROWS, selectRows } from "../rows/registry.ts";
import { DEFAULT_SEED } from "../sample/generate.ts";
import { LEGEND, renderTable } from "../table.ts";
import { terminalLines, terminalSafe } from "../terminal-text.ts";

/** Row ids for the usage text, comma-separated and wrapped under the options' descriptions. */
function wrapIds(ids: readonly string[]): string {
  const indent = " ".repeat(25);
  const lines: string[] = [];
  let line = "";
  for (const id of ids) {
    const item = line ? `, ${id}` : id;
    if (line && indent.length + line.length + item.length > 118) {
      lines.push(`${indent}${line},`);
      line = id;
    } else line += item;
  }
  if (line) lines.push(indent + line);
  return lines.join("\n");
}

export const LAB_USAGE = `Usage: pi-context-ledger lab [files or dirs…] [options]

Replays Pi sessions request by request through our strategies and reference baselines.
With no path, replays a seeded sample of generated coding sessions.

Options:
  --sessions             replay your own sessions (~/.pi/agent/sessions, or $PI_CODING_AGENT_DIR/sessions)
  --last <n>             only the n most recently changed session files
  --since <date>         only session files changed since then (2026-11-01, 2026-11-01T09:00)
  --jobs <n>             sessions replayed at once, on worker threads (default: the number of cores)
  --window <tokens>      context window (default 128000; accepts 200k)
  --strategies <ids>     comma-separated rows (default: all available):
${wrapIds(ROWS.map((r) => r.id))}
  --json <file>          write every figure as JSON
  --report <file>        write the HTML report (default lab-report.html; --no-report to skip)
  --prices <spec>        input=1,write=1.25,read=0.1,output=5,usd=3 (multipliers; usd per M input tokens)
  --weights <spec>       quality=0.7,cost=0.3: how the recommendation weighs quality (the lower of needed later and
                         the working set) against cost
  --seed <n>             sample seed (default ${DEFAULT_SEED})
  --dump <dir>           write the model view right after every act of every row (JSONL per session and row)
  --judge <prov/model>   ask a real model probe questions (skipped without credentials)
  --apply                merge the recommended setting into Pi's settings file, after asking
  --yes, -y              with --apply: merge without asking (needed without a terminal)
  --quiet                no progress output
`;

/** `--jobs`: how many sessions replay at once (default: the machine's cores). */
export function jobCount(value: string | undefined, cores = availableParallelism()): number {
  if (value === undefined) return cores;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1)
    throw new InputError(`bad --jobs "${terminalSafe(value)}" (a count of workers, 1 or more)`);
  return n;
}

/** Parse "128000", "128k", "1m". */
export function parseTokens(value: string): number {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(value.trim());
  if (!match) throw new InputError(`bad token count "${value}" (examples: 64000, 128k)`);
  const n = Number(match[1]) * (match[2].toLowerCase() === "k" ? 1000 : match[2].toLowerCase() === "m" ? 1_000_000 : 1);
  if (n < 20_000) throw new InputError(`window ${value} is too small: Pi reserves 16384 tokens for the reply`);
  return Math.round(n);
}

interface Out {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const defaultOut: Out = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };

/** What a test may replace: where the `--judge` model comes from. */
export interface LabDeps {
  judgeModel?: ResolveJudgeModel;
}

/** Run the lab command; returns the exit code. */
export async function runLab(argv: readonly string[], out: Out = defaultOut, deps: LabDeps = {}): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: LAB_OPTIONS,
    });
  } catch (error) {
    out.stderr(`lab: ${terminalSafe(firstLine(error))} (see lab --help)\n`);
    return 2;
  }
  const { values, positionals } = args;
  if (values.help) {
    out.stdout(LAB_USAGE);
    return 0;
  }
  const started = performance.now();
  try {
    const settings = defaultSettings(values.window ? parseTokens(values.window) : 128_000);
    const prices = parsePrices(values.prices, DEFAULT_PRICES);
    const weights = parseWeights(values.weights);
    const { factories, skipped } = selectRows(values.strategies);
    if (!factories.length) throw new InputError("no runnable strategy selected");
    const seed = values.seed ? Number(values.seed) : DEFAULT_SEED;
    if (!Number.isInteger(seed)) throw new InputError(`bad seed "${values.seed}"`);
    // Output paths are checked before the replay, which can take long on big sessions.
    const jsonPath = values.json ? await checkOutputPath("--json", values.json) : undefined;
    const reportPath = values["no-report"]
      ? undefined
      : await checkOutputPath("--report", values.report ?? "lab-report.html");
    checkApply(values.apply === true, values.yes === true);
    const recent = recentOptions(values.last, values.since);
    const dump = values.dump ? createDump(await prepareDumpDir(values.dump)) : undefined;

    // Inputs: paths, the user's sessions, or the sample. Files load one at a time, so memory follows one session.
    const paths = [...positionals];
    if (values.sessions) paths.push(userSessionsDir());
    if (recent && !paths.length)
      throw new InputError("--last and --since pick among session files: give --sessions or paths");
    // A setting is applied for the sessions it was measured on: the generated sample is nobody's.
    if (values.apply && !paths.length)
      throw new InputError(
        "--apply merges what your own sessions recommend, and the sample is generated: give --sessions or paths",
      );
    const found = paths.length ? await sessionFiles(paths) : [];
    const files = recent ? await newestSessions(found, recent) : found;
    if (recent && !files.length) throw new InputError(`no session file changed since ${values.since}`);
    const sample = paths.length ? [] : sampleInputs(seed);
    const count = files.length || sample.length;
    const progress = createProgress(process.stderr, values.quiet === true);
    const judge = values.judge ? await judgeRun(values.judge, process.env, deps.judgeModel) : undefined;
    // With the heap flags the CLI starts the lab with (heap.ts), gc is exposed: a full collection once a
    // session's rows are dropped gives their pages back before the recall index is built.
    const collect = (globalThis as { gc?: () => void }).gc;
    const options: ReplayOptions = {
      settings,
      rows: factories,
      prices,
      onProgress: (d, t) => progress.update(d, t),
      onFinalView: judge?.collect,
      ...(dump ? { onAct: dump.act } : {}),
      ...(collect ? { onRowsReleased: () => collect() } : {}),
    };

    const jobs = jobCount(values.jobs);
    let sessions: SessionResult[] = [];
    // A folder goes to this thread and worker threads, one session each at a time; the judge collects final
    // views in this thread, so a run with it stays serial.
    if (files.length > 1 && jobs > 1 && !judge) {
      const workers = createWorkerProgress(Math.min(jobs, files.length), process.stderr, values.quiet === true);
      const here: FileReplayer = {
        settings,
        rows: factories,
        prices,
        ...(dump ? { dump } : {}),
        ...(collect ? { collect } : {}),
      };
      sessions = await replayInWorkers(
        files,
        jobs,
        { settings, strategies: values.strategies, prices, ...(dump ? { dumpDir: resolve(values.dump ?? "") } : {}) },
        workers,
        workerHeapMb,
        (index, path, post) => replayFile(index, path, here, post),
      );
    } else {
      // A serial run: workers started ahead of it would only hold memory.
      await releaseWorkers();
      for (let i = 0; i < count; i++) {
        const input: SessionInput = files.length ? await fileInput(files[i]) : sample[i];
        // A lone file without a request is refused before its replay draws anything: the one line, alone.
        if (files.length === 1 && !holdsRequest(input.entries)) throw new InputError(refusedInput(input));
        progress.start(input.name, i, count);
        await dump?.session(i, input.name);
        const t0 = performance.now();
        const result = await replaySession(input, options);
        progress.finish(
          `${result.requests} requests, ${result.probes.total} probes, ${((performance.now() - t0) / 1000).toFixed(1)}s`,
        );
        sessions.push(result);
        // The session's recall index and the rest of its replay are garbage now; the next session, or the JSON and
        // the report, would otherwise be allocated on top of them.
        collect?.();
        await yieldToEventLoop();
      }
    }

    await dump?.close();
    const result: LabResult = {
      v: 1,
      tool: "pi-context-ledger lab",
      input: files.length ? { kind: "files", paths: files } : { kind: "sample", seed },
      settings,
      prices,
      unavailable: skipped.map((r) => ({ id: r.id, reason: r.unavailable ?? "" })),
      sessions,
      totals: totalsOf(sessions),
    };
    // Sessions without a request have nothing to choose between: no recommendation for them, nor for a run of them alone.
    if (replayedAny(sessions)) result.recommendation = recommend(result.totals, weights);
    for (const session of sessions)
      if (session.requests > 0) session.recommendation = recommend(totalsOf([session]), weights);
    if (judge) result.judge = await judge.finish();
    const usage = process.resourceUsage();
    result.run = {
      seconds: (performance.now() - started) / 1000,
      cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
      maxRssBytes: usage.maxRSS * 1024,
      heapLimitBytes: getHeapStatistics().heap_size_limit,
    };

    out.stdout(renderSummary(result, settingsFile(), values.apply === true));
    if (jsonPath) {
      await writeOutput(jsonPath, `${JSON.stringify(result, null, 1)}\n`);
      out.stdout(`JSON: ${terminalSafe(values.json ?? "")}\n`);
    }
    if (dump)
      out.stdout(`Dump: ${terminalSafe(values.dump ?? "")} (the model view after every act, one JSON line per act)\n`);
    if (reportPath) {
      await writeOutput(reportPath, await renderReport(result));
      out.stdout(`Report: ${terminalSafe(values.report ?? "lab-report.html")}\n`);
    }
    const choice = result.recommendation?.choice;
    if (values.apply)
      out.stdout(
        `${choice ? await applySetting(choice.value, settingsFile(), values.yes === true) : "Nothing applied: no strategy to recommend."}\n`,
      );
    return 0;
  } catch (error) {
    if (error instanceof InputError) {
      out.stderr(`lab: ${terminalSafe(error.message)}\n`);
      return 2;
    }
    throw error;
  } finally {
    // Workers warmed up for a parallel run that did not happen (bin.ts).
    await releaseWorkers();
  }
}

/**
 * What the paste line offers besides pasting: nothing when the setting is being applied, and for the generated sample
 * (whose setting --apply refuses) a run on the user's own sessions.
 */
function applyHint(result: LabResult, applying: boolean): string {
  if (applying) return "";
  return result.input.kind === "sample"
    ? ", or measure your own sessions with lab --sessions --apply"
    : ", or run the lab again with --apply";
}

/** Why the lab refuses a lone session file without a request: its name, and what it held. */
function refusedInput(input: SessionInput): string {
  const skipped = input.malformedLines?.length ?? 0;
  const lines = skipped
    ? `; ${skipped} malformed line${skipped === 1 ? "" : "s"} skipped, listed by pi-context-ledger show`
    : "";
  return `nothing to replay in ${input.name}: it holds no request (${input.entries.length} entries${lines})`;
}

/** The terminal summary: one table per session, totals when there are several, notes and diagnostics. */
export function renderSummary(result: LabResult, settingsPath = settingsFile(), applying = false): string {
  const lines: string[] = [];
  const { settings } = result;
  const count = result.sessions.length;
  const source =
    result.input.kind === "sample"
      ? `generated sample (seed ${result.input.seed}), ${count} session${count === 1 ? "" : "s"}`
      : `${count} session file${count === 1 ? "" : "s"}`;
  lines.push(
    ``,
    `pi-context-ledger lab · ${source} · window ${settings.window} (compacts above ${settings.window - settings.reserve}) · prices ${priceText(result)}`,
    ``,
  );
  for (const session of result.sessions) {
    const notes = diagnostics(session).map((n) => `  ${n}`);
    // A session without a request (a header alone, or only skipped lines) would be a table of zeros.
    if (session.requests === 0) {
      lines.push(`■ ${session.name}: ${nothingToReplay(session)}`, ...notes, ``);
      continue;
    }
    lines.push(
      `■ ${session.name}: ${session.branchEntries} entries, ${session.requests} requests, ${session.probes.total} probes, ${session.neededItems} items needed later`,
      ...notes,
    );
    lines.push(renderTable(totalsOf([session])));
    const own = session.recommendation;
    if (own?.choice && count > 1) lines.push(`  for this session alone: ${own.choice.label}${choiceNote(own)}`);
    lines.push(``);
  }
  if (!replayedAny(result.sessions)) {
    lines.push(`Nothing to recommend: none of these ${count} session files holds a request.`, ``);
    return terminalLines(lines.join("\n"));
  }
  if (count > 1) lines.push(`■ all ${count} sessions`, renderTable(result.totals), ``);
  lines.push(...LEGEND, ``);
  const simulated = result.totals.filter((t) => t.info.note.startsWith("simulated"));
  if (simulated.length)
    lines.push(
      `Simulations of published behaviour (not the real products): ${simulated.map((t) => t.info.label).join(", ")}.`,
    );
  for (const row of result.unavailable) lines.push(`Not in this run: ${row.id} (${row.reason}).`);
  if (result.judge) lines.push(`Judge: ${result.judge.note}`);
  if (result.recommendation)
    lines.push(
      ``,
      `Recommendation for ${count === 1 ? "this session" : `these ${count} sessions`}:`,
      ...result.recommendation.lines.map((l) => `  ${l}`),
    );
  const choice = result.recommendation?.choice;
  if (choice) {
    lines.push(
      ``,
      `To use it, merge this into ${settingsPath} (keep your other settings)${applyHint(result, applying)}:`,
      ...pasteText(choice.value)
        .split("\n")
        .map((l) => `  ${l}`),
    );
  }
  lines.push(``);
  return terminalLines(lines.join("\n"));
}

function priceText(result: LabResult): string {
  const p = result.prices;
  return `in ${p.input}× write ${p.cacheWrite}× read ${p.cacheRead}× out ${p.output}× at $${p.usdPerMTok}/M`;
}

/** Malformed lines (with numbers), unknown entry types and dropped compactions of one session. */
export function diagnostics(session: SessionResult): string[] {
  const out: string[] = [];
  if (session.malformedLines.length) {
    const shown = session.malformedLines.slice(0, 10).map((d) => `line ${d.line}: ${terminalSafe(d.reason)}`);
    out.push(
      `skipped ${session.malformedLines.length} malformed line(s): ${shown.join("; ")}${session.malformedLines.length > 10 ? "; …" : ""}`,
    );
  }
  const unknown = Object.entries(session.unknownTypes);
  if (unknown.length)
    out.push(`unknown entry types (ignored): ${unknown.map(([t, n]) => `${terminalSafe(t)} ×${n}`).join(", ")}`);
  for (const problem of session.treeProblems ?? []) out.push(`session tree: ${problem}`);
  if (session.originalCompactions)
    out.push(
      `the file's own ${session.originalCompactions} compaction(s) were set aside, so every row starts from the raw history`,
    );
  return out;
}

export type { JudgeNote };
