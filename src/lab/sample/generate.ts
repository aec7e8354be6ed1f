// Seeded generator of realistic Pi coding sessions (v3 JSONL entries), the lab's default input.
// Deterministic: ids and timestamps derive from the seed; no clocks, no Math.random, no I/O.
import type { FileEntry, SessionEntry, SessionHeader } from "../../log/entries.ts";
import {
  buildLog,
  failingTestOutput,
  fileContent,
  gitStatus,
  grepOutput,
  makeProject,
  passingTestOutput,
  type Project,
  testFileFor,
} from "./corpus.ts";
import { Rng } from "./random.ts";

/** One generated session: a name for tables and its file entries (header first). */
export interface SampleSession {
  name: string;
  entries: FileEntry[];
}

/** Shape of one generated session. */
export interface SessionSpec {
  /** Number of user tasks. */
  tasks: number;
  /** Probability that a tool output is exceptionally long (big file, build log). */
  longOutputRate?: number;
}

/** The default sample: several sessions, some long. */
export const DEFAULT_SAMPLE: readonly SessionSpec[] = [
  { tasks: 6 },
  { tasks: 14 },
  { tasks: 24, longOutputRate: 0.05 },
  { tasks: 40, longOutputRate: 0.04 },
  { tasks: 64, longOutputRate: 0.03 },
];

export const DEFAULT_SEED = 20_251_206;

const MODEL = { api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5" } as const;

const CONSTRAINTS = [
  "Don't add new dependencies.",
  "Keep the public API of {symbol} unchanged.",
  "Please use {pm} for everything, never the other package manager.",
  "Always run the tests before you tell me it's done.",
  "Never edit files under dist/ by hand.",
  "Make sure {symbol} stays synchronous.",
  "Prefer small pure functions over classes.",
  "Don't touch the public exports in {file}.",
  "Keep error messages lowercase and without trailing periods.",
];
const CORRECTIONS = [
  "No, that's not what I meant: {symbol} must keep returning null for unknown keys.",
  "Wait, don't rename {symbol}, other packages import it.",
  "Actually, use a Map instead of a plain object in {file}.",
  "No, the cache key must include the tenant id.",
  "Undo the change to {file}, it was fine before.",
];
const ASKS = [
  "{symbol} fails on {case}. Can you find out why and fix it?",
  "Add support for {case} to {symbol} in {file}, with tests.",
  "Refactor {file} so that {symbol} is easier to test.",
  "The tests in {test} are flaky. Investigate and make them deterministic.",
  "Rename the helper in {file} and update all callers of {symbol}.",
  "Write tests for {symbol} covering {case}.",
  "Why is {symbol} so slow on large inputs? Profile it and speed it up.",
];
const CASES = [
  "empty input",
  "nested segments",
  "unicode keys",
  "a missing tenant",
  "duplicate ids",
  "trailing slashes",
  "very large payloads",
];

interface Ctx {
  rng: Rng;
  project: Project;
  entries: FileEntry[];
  parentId: string | null;
  clock: number;
  ids: Set<string>;
  modified: string[];
}

function fill(rng: Rng, project: Project, template: string, file: string): string {
  return template
    .replaceAll("{symbol}", `\`${rng.pick(project.symbols)}\``)
    .replaceAll("{file}", file)
    .replaceAll("{test}", testFileFor(file))
    .replaceAll("{case}", rng.pick(CASES))
    .replaceAll("{pm}", project.packageManager);
}

function nextId(ctx: Ctx): string {
  let id = ctx.rng.hex(8);
  while (ctx.ids.has(id)) id = ctx.rng.hex(8);
  ctx.ids.add(id);
  return id;
}

function append(ctx: Ctx, body: Record<string, unknown>, advanceSeconds: number): SessionEntry {
  ctx.clock += advanceSeconds * 1000 + ctx.rng.int(0, 999);
  const entry = {
    ...body,
    id: nextId(ctx),
    parentId: ctx.parentId,
    timestamp: new Date(ctx.clock).toISOString(),
  } as unknown as SessionEntry;
  if (entry.type === "message") (entry.message as { timestamp: number }).timestamp = ctx.clock;
  ctx.entries.push(entry);
  ctx.parentId = entry.id;
  return entry;
}

function userSays(ctx: Ctx, text: string): void {
  append(ctx, { type: "message", message: { role: "user", content: [{ type: "text", text }] } }, ctx.rng.int(20, 600));
}

interface Call {
  name: string;
  arguments: Record<string, unknown>;
  output: string;
  isError?: boolean;
}

/** One assistant step: optional thinking and text, parallel tool calls, then their results. */
function step(ctx: Ctx, text: string | undefined, calls: Call[], thinking?: string): void {
  const content: Record<string, unknown>[] = [];
  if (thinking) content.push({ type: "thinking", thinking, thinkingSignature: ctx.rng.hex(24) });
  if (text) content.push({ type: "text", text });
  const ids = calls.map(() => `toolu_${ctx.rng.hex(24)}`);
  calls.forEach((call, i) =>
    content.push({ type: "toolCall", id: ids[i], name: call.name, arguments: call.arguments }),
  );
  const output = Math.ceil(JSON.stringify(content).length / 4);
  append(
    ctx,
    {
      type: "message",
      message: {
        role: "assistant",
        content,
        ...MODEL,
        usage: {
          input: ctx.rng.int(3, 40),
          output,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: output,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: calls.length ? "toolUse" : "stop",
      },
    },
    ctx.rng.int(2, 30),
  );
  calls.forEach((call, i) => {
    append(
      ctx,
      {
        type: "message",
        message: {
          role: "toolResult",
          toolCallId: ids[i],
          toolName: call.name,
          content: [{ type: "text", text: call.output }],
          isError: call.isError ?? false,
        },
      },
      ctx.rng.int(0, 8),
    );
  });
}

function readCall(ctx: Ctx, file: string, long: boolean): Call {
  const path = ctx.rng.chance(0.3) ? `${ctx.project.cwd}/${file}` : file;
  return {
    name: "read",
    arguments: { path },
    output: fileContent(ctx.project, file, long ? ctx.rng.int(900, 1800) : undefined),
  };
}

function testCommand(ctx: Ctx, testFile?: string): string {
  const pm = ctx.project.packageManager;
  return testFile ? `${pm} test -- ${testFile}` : `${pm} test`;
}

function editCall(ctx: Ctx, file: string): Call {
  const symbol = ctx.rng.pick(ctx.project.symbols);
  if (!ctx.modified.includes(file)) ctx.modified.push(file);
  return {
    name: "edit",
    arguments: {
      path: file,
      edits: [
        {
          oldText: `  const value1 = ${symbol}(input);`,
          newText: `  const value1 = ${symbol}(input) ?? fallback(input);`,
        },
      ],
    },
    output: `Successfully replaced 1 block(s) in ${file}.`,
  };
}

/** One user task, worked through by the agent: explore, edit, test, maybe fix, maybe get corrected, report. */
function task(ctx: Ctx, index: number, longRate: number): void {
  const { rng, project } = ctx;
  const focus = rng.pick(project.files);
  const testFile = testFileFor(focus);
  let ask = fill(rng, project, rng.pick(ASKS), focus);
  if (index === 0 || rng.chance(0.45)) ask += ` ${fill(rng, project, rng.pick(CONSTRAINTS), focus)}`;
  userSays(ctx, ask);

  // Explore: parallel reads, sometimes a grep or an ls first.
  const related = rng.sample(
    project.files.filter((f) => f !== focus),
    rng.int(1, 3),
  );
  const reads = [focus, ...related].map((f) => readCall(ctx, f, rng.chance(longRate)));
  step(
    ctx,
    `I'll start by reading ${focus} and the code around it.`,
    reads,
    `The user wants: ${ask.slice(0, 120)}. First I need to see how ${focus} is structured.`,
  );
  if (rng.chance(0.6)) {
    const symbol = rng.pick(project.symbols);
    step(ctx, undefined, [
      { name: "grep", arguments: { pattern: symbol, path: "src" }, output: grepOutput(rng, project, symbol) },
    ]);
  }
  if (rng.chance(0.5)) step(ctx, undefined, [readCall(ctx, testFile, false)]);

  // Edit.
  const edits = [focus, ...rng.sample(related, rng.int(0, 1))].map((f) => editCall(ctx, f));
  step(ctx, `The problem is in ${focus}: the lookup does not handle a missing value. Fixing it now.`, edits);
  if (rng.chance(0.25)) {
    const newTest = testFile.replace(/\.test\.ts$/, `.${rng.pick(["edge", "regression", "unicode"])}.test.ts`);
    ctx.modified.push(newTest);
    step(ctx, undefined, [
      {
        name: "write",
        arguments: { path: newTest, content: fileContent(project, newTest, rng.int(20, 60)) },
        output: `Successfully wrote ${rng.int(600, 3000)} bytes to ${newTest}`,
      },
    ]);
  }

  // Test, sometimes failing first.
  if (rng.chance(0.45)) {
    const failing = failingTestOutput(rng, project, testFile, focus);
    step(ctx, undefined, [
      { name: "bash", arguments: { command: testCommand(ctx, testFile) }, output: failing.text, isError: true },
    ]);
    step(ctx, `The test fails with \`${failing.signature.slice(0, 60)}\`. Looking at the stack.`, [
      readCall(ctx, focus, false),
    ]);
    step(ctx, undefined, [editCall(ctx, focus)]);
  }
  const passing = passingTestOutput(rng, project, [
    testFile,
    ...rng.sample(project.files.map(testFileFor), rng.int(1, 4)),
  ]);
  step(ctx, undefined, [{ name: "bash", arguments: { command: testCommand(ctx) }, output: passing.text }]);
  if (rng.chance(longRate * 3)) {
    step(ctx, undefined, [
      {
        name: "bash",
        arguments: { command: `${project.packageManager} run build` },
        output: buildLog(rng, project, rng.int(400, 1200)),
      },
    ]);
  }

  // The user sometimes corrects course mid-task.
  if (rng.chance(0.2)) {
    step(ctx, `Done: ${focus} now handles the missing value and the tests pass.`, []);
    userSays(ctx, fill(rng, project, rng.pick(CORRECTIONS), focus));
    step(ctx, "Understood, adjusting.", [editCall(ctx, focus)]);
    const again = passingTestOutput(rng, project, [testFile]);
    step(ctx, undefined, [{ name: "bash", arguments: { command: testCommand(ctx, testFile) }, output: again.text }]);
  }
  step(
    ctx,
    `Summary of the change:\n- ${focus}: handle the missing value instead of throwing\n- tests: ${passing.summary}`,
    [],
  );

  // A `!` command from the user between tasks.
  if (rng.chance(0.15)) {
    append(
      ctx,
      {
        type: "message",
        message: {
          role: "bashExecution",
          command: "git status",
          output: gitStatus(rng, project, ctx.modified),
          exitCode: 0,
          cancelled: false,
          truncated: false,
        },
      },
      rng.int(5, 120),
    );
  }
}

/** Generate one session. */
export function generateSession(seed: number, index: number, spec: SessionSpec): SampleSession {
  const rng = new Rng(seed).fork(index);
  const project = makeProject(rng, index);
  const start = Date.UTC(2025, 0, 6) + (seed % 1000) * 86_400_000 + index * 3_600_000;
  const header: SessionHeader = {
    type: "session",
    version: 3,
    id: `${rng.hex(8)}-${rng.hex(4)}-4${rng.hex(3)}-a${rng.hex(3)}-${rng.hex(12)}`,
    timestamp: new Date(start).toISOString(),
    cwd: project.cwd,
  };
  const ctx: Ctx = { rng, project, entries: [header], parentId: null, clock: start, ids: new Set(), modified: [] };
  append(ctx, { type: "model_change", provider: MODEL.provider, modelId: MODEL.model }, 0);
  append(ctx, { type: "thinking_level_change", thinkingLevel: "medium" }, 0);
  for (let i = 0; i < spec.tasks; i++) task(ctx, i, spec.longOutputRate ?? 0.02);
  return { name: `sample-${index + 1}-${project.name}`, entries: ctx.entries };
}

/** Generate the sample set. */
export function generateSample(
  seed: number = DEFAULT_SEED,
  specs: readonly SessionSpec[] = DEFAULT_SAMPLE,
): SampleSession[] {
  return specs.map((spec, index) => generateSession(seed, index, spec));
}
