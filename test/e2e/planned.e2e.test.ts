// The planned strategy end to end: a real AgentSession on the faux provider with `strategy: "planned"`. The faux
// model answers the planner request; every assertion reads what was persisted or sent to the provider.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall, type Context, type Message } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { PLANNER_SYSTEM } from "../../src/strategies/planned/model-plan.ts";
import { INTRO } from "../../src/strategies/planned/transcript.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
let restoreNotify: (() => void) | undefined;
afterEach(async () => {
  restoreNotify?.();
  restoreNotify = undefined;
  await h?.dispose();
  h = undefined;
});

const SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:";
const KEEP = "<keepContext>\nKEEP-THIS: the public API must not change.\n</keepContext>";
const BIG = Array.from({ length: 120 }, (_, i) => `BIG-LINE ${i} ${"filler ".repeat(10)}`).join("\n");
const LEDGER = { strategy: "planned", planned: { retainRatio: 0.5, minRetainedTokens: 1, minSavedTokens: 1 } };
const SETTINGS = { compaction: { keepRecentTokens: 60 } };

const textOf = (m: Message): string =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("");
const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const compactions = () => branch().filter((e) => e.type === "compaction");
const promptOf = (context: Context) => context.messages.map(textOf).join("\n");
const isPlannerRequest = (context: Context) =>
  (context.systemPrompt ?? "").includes(PLANNER_SYSTEM) || promptOf(context).includes("\n<transcript>\n");

/** Capture extension warnings: the session runs headless, so notices go to Pi's no-op UI context. */
function captureWarnings(harness: Harness): string[] {
  const warnings: string[] = [];
  const runner = (
    harness.session as unknown as { _extensionRunner: { uiContext: { notify: (m: string, t?: string) => void } } }
  )._extensionRunner;
  const ui = runner.uiContext;
  const original = ui.notify;
  ui.notify = (message, type) => {
    if (type === "warning") warnings.push(message);
  };
  restoreNotify = () => {
    ui.notify = original;
  };
  return warnings;
}

/** A user turn pinning a constraint, a big read, the root cause; then a second short turn for Pi to keep. */
async function workSession(): Promise<void> {
  h!.script([
    fauxAssistantMessage([fauxToolCall("read", { path: "big.txt" })], { stopReason: "toolUse" }),
    fauxAssistantMessage("ROOT-CAUSE: TIMEOUT_MS is too low."),
    fauxAssistantMessage(`second answer ${"pad ".repeat(40)}`),
  ]);
  await h!.session.prompt(`Fix the login timeout.\n${KEEP}`);
  await h!.session.prompt("second turn");
}

/** The faux planner: delete the numbered lines of the big file but its first ten, nothing else. */
function planBigFile(context: Context) {
  expect(isPlannerRequest(context)).toBe(true);
  const numbers = promptOf(context)
    .split("\n")
    .flatMap((line) => /^(\d+)\| .*BIG-LINE/.exec(line)?.[1] ?? [])
    .map(Number);
  return fauxAssistantMessage(`\`\`\`\n${Math.min(...numbers) + 10},${Math.max(...numbers)}\n\`\`\``);
}

describe("planned e2e", () => {
  it("applies the model's plan and sends the surviving lines verbatim", async () => {
    h = await startHarness({ ledgerSettings: LEDGER, settings: SETTINGS, files: { "big.txt": BIG } });
    const warnings = captureWarnings(h);
    await workSession();
    h.script([planBigFile]);
    await h.session.compact().catch(() => undefined);
    expect(warnings).toEqual([]);
    const [entry] = compactions();
    expect(entry.type === "compaction" && entry.details).toMatchObject({ v: 1, strategy: "planned", planner: "model" });
    expect(h.requests.some((r) => r.some((m) => textOf(m).includes("1| [user]")))).toBe(true);

    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("after compaction");
    const request = h.requests[h.requests.length - 1];
    const summary = request.map(textOf).find((t) => t.startsWith(SUMMARY_PREFIX))!;
    expect(summary).toContain(INTRO);
    expect(summary).toContain(`Fix the login timeout.\n${KEEP}`);
    // Surviving lines are the stored lines byte for byte.
    expect(summary).toContain(BIG.split("\n").slice(0, 10).join("\n"));
    // The range is trimmed at the 50% target: its first lines go, the rest of the file stays verbatim.
    const { stats } = (
      entry as {
        details: { stats: { removedLines: number; trimmed: boolean; keptTokens: number; targetTokens: number } };
      }
    ).details;
    expect(stats.trimmed).toBe(true);
    expect(stats.keptTokens).toBeGreaterThanOrEqual(stats.targetTokens);
    expect(summary).toContain(
      `[compacted: ${stats.removedLines} lines removed]\n${BIG.split("\n")
        .slice(10 + stats.removedLines)
        .join("\n")}`,
    );
    expect(request.some((m) => textOf(m).includes("ROOT-CAUSE: TIMEOUT_MS is too low."))).toBe(true);
    expect(summary).toContain('[tool result: read "big.txt"]');
    expect(summary).toMatch(/\[compacted: \d+ lines removed\]/);
    expect(summary).not.toContain("BIG-LINE 10 ");
    expect(textOf(request[request.length - 1])).toBe("after compaction");
  });

  it("falls back to Pi's native summary with a warning when the planner returns garbage", async () => {
    h = await startHarness({ ledgerSettings: LEDGER, settings: SETTINGS, files: { "big.txt": BIG } });
    const warnings = captureWarnings(h);
    await workSession();
    const native = (context: Context) =>
      fauxAssistantMessage(isPlannerRequest(context) ? "unexpected second planner call" : "NATIVE-SUMMARY of the work");
    h.script([fauxAssistantMessage("Sure! I would delete the big file, lines ten to forty."), native, native]);
    const result = await h.session.compact();
    const [entry] = compactions();
    expect(result.summary).toContain("NATIVE-SUMMARY");
    expect(entry.type === "compaction" && (entry.details as { strategy?: string } | undefined)?.strategy).not.toBe(
      "planned",
    );
    expect(warnings.some((w) => /planned compaction fell back/.test(w) && /not a `first,last` record/.test(w))).toBe(
      true,
    );
    // The diagnostic carries categories and numbers, never the planner's text.
    expect(warnings.join("\n")).not.toContain("Sure!");
  });

  it("an abort during planning leaves no compaction entry and loses nothing", async () => {
    h = await startHarness({ ledgerSettings: LEDGER, settings: SETTINGS, files: { "big.txt": BIG } });
    await workSession();
    const before = branch().map((e) => e.id);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const planning = new Promise<void>((resolve) => (started = resolve));
    let providerSignal: AbortSignal | undefined;
    h.script([
      async (context: Context, options?: { signal?: AbortSignal }) => {
        providerSignal = options?.signal;
        started();
        await gate;
        return planBigFile(context);
      },
    ]);
    const pending = h.session.compact().then(
      () => "resolved",
      () => "rejected",
    );
    await planning;
    h.session.abortCompaction();
    // Pi's abort reaches the planner's provider request.
    expect(providerSignal?.aborted).toBe(true);
    release();
    await pending;
    expect(compactions()).toHaveLength(0);
    // An abort is the user's choice, not a failure: no failure record either.
    expect(branch().some((e) => e.type === "custom")).toBe(false);
    expect(branch().map((e) => e.id)).toEqual(before);

    // The session carries on with the full history.
    h.script([fauxAssistantMessage("still here")]);
    await h.session.prompt("next");
    const request = h.requests[h.requests.length - 1];
    expect(request.some((m) => textOf(m).includes("BIG-LINE 60"))).toBe(true);
    expect(request.some((m) => textOf(m).startsWith(SUMMARY_PREFIX))).toBe(false);
  });
});
