// The planned strategy through a real AgentSession with Pi's default compaction settings and the package's default
// planned settings: only `strategy: "planned"` (plus what a case is about) is set. Every planner and summary request
// the faux provider receives is recorded with its options, so the tests assert what reached the provider and count
// model calls.
import { afterEach, describe, expect, it } from "vitest";
import {
  fauxAssistantMessage,
  fauxProvider,
  fauxToolCall,
  type AssistantMessage,
  type FauxResponseStep,
} from "@earendil-works/pi-ai";
import { LedgerType } from "../../src/strategies/catalog.ts";
import type { PlannedDetails } from "../../src/strategies/planned/planner.ts";
import type { NativeCompactionDetails, PlannerFailureDetails } from "../../src/strategies/shared/fallback.ts";
import { INTRO } from "../../src/strategies/planned/transcript.ts";
import { startHarness, type Harness } from "./harness.ts";
import {
  branchOf,
  captureWarnings as capture,
  customsOf,
  FILES,
  linesWith,
  recorded,
  textOf,
  workSession as work,
  type Call,
} from "./planned-fixtures.ts";

let h: Harness | undefined;
let restoreNotify: (() => void) | undefined;
afterEach(async () => {
  restoreNotify?.();
  restoreNotify = undefined;
  await h?.dispose();
  h = undefined;
});

const branch = () => branchOf(h!);
const compactions = () => branch().filter((e) => e.type === "compaction");
const customs = <T>(type: string) => customsOf<T>(h!, type);
const captureWarnings = (harness: Harness) => capture(harness, (restore) => (restoreNotify = restore));
const workSession = () => work(h!);

const SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:";

describe("planned e2e with Pi's default settings", () => {
  it("offers a constrained submit_deletion_plan tool with the output cap and deadline, and applies the tool-call plan", async () => {
    h = await startHarness({ ledgerSettings: { strategy: "planned" }, files: FILES });
    const warnings = captureWarnings(h);
    await workSession();
    const calls: Call[] = [];
    h.faux.appendResponses([
      recorded(calls, () => {
        const a = linesWith(calls[0], "A-LINE");
        const b = linesWith(calls[0], "B-LINE");
        // Rank order: all of a.txt, then all of b.txt; one record out of bounds and one reversed are discarded.
        const ranges = [
          { start: Math.min(...a), end: Math.max(...a) },
          { start: 900_000, end: 900_001 },
          { start: Math.min(...b), end: Math.max(...b) },
          { start: 9, end: 3 },
        ];
        return fauxAssistantMessage([fauxToolCall("submit_deletion_plan", { ranges })], { stopReason: "toolUse" });
      }),
    ]);
    await h.session.compact();
    expect(warnings).toEqual([]);
    // One model call: the planner's. No native summary was asked for.
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call.planner).toBe(true);
    expect(call.tools.map((t) => t.name)).toEqual(["submit_deletion_plan"]);
    expect(call.tools[0].constrainedSampling).toEqual({ type: "json_schema", strict: "prefer" });
    expect(call.options).toMatchObject({ maxTokens: 4_096, timeoutMs: 120_000 });
    expect(call.signal).toBeInstanceOf(AbortSignal);

    const [entry] = compactions();
    const details = entry.type === "compaction" ? (entry.details as PlannedDetails) : undefined;
    expect(details).toMatchObject({
      v: 1,
      strategy: "planned",
      planner: "model",
      model: `${h.faux.getModel().provider}/faux-1`,
    });
    expect(details?.plan).toMatchObject({
      form: "tool",
      records: 4,
      accepted: 2,
      discarded: 2,
      discardedBy: { bounds: 1, reversed: 1 },
      firstDiscarded: 2,
    });
    // The 50% target of the region is reached on a.txt and part of b.txt, never gone below.
    expect(details!.stats.keptTokens).toBeGreaterThanOrEqual(details!.stats.targetTokens);

    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("after compaction");
    const request = h.requests[h.requests.length - 1];
    const summary = request.map(textOf).find((t) => t.startsWith(SUMMARY_PREFIX))!;
    expect(summary).toContain(INTRO);
    expect(summary).toContain("<keepContext>\nKEEP-THIS: the public API must not change.\n</keepContext>");
    expect(summary).not.toContain("A-LINE 100 ");
    expect(summary).toMatch(/\[compacted: \d+ lines removed\]/);
  });

  it("a garbage plan falls back to native with a warning, a bounded failure record and two cards", async () => {
    h = await startHarness({ ledgerSettings: { strategy: "planned" }, files: FILES });
    const warnings = captureWarnings(h);
    await workSession();
    const before = branch().length;
    const calls: Call[] = [];
    const native = () => fauxAssistantMessage("NATIVE-SUMMARY of the work");
    h.faux.appendResponses([
      recorded(calls, () => fauxAssistantMessage("SECRET-PLANNER-TEXT: delete the big files")),
      recorded(calls, native),
      recorded(calls, native),
    ]);
    const result = await h.session.compact();
    expect(result.summary).toContain("NATIVE-SUMMARY");
    // Planner once, then Pi's own summary (one call, or two when Pi splits the turn).
    expect(calls[0].planner).toBe(true);
    expect(calls.slice(1).every((c) => !c.planner)).toBe(true);
    expect(warnings.some((w) => /planned compaction fell back/.test(w) && /unparseable/.test(w))).toBe(true);

    const added = branch().slice(before);
    expect(added.map((e) => (e.type === "custom" ? e.customType : e.type))).toEqual([
      LedgerType.plannerFailure,
      "compaction",
      LedgerType.nativeCompaction,
    ]);
    const [failure] = customs<PlannerFailureDetails>(LedgerType.plannerFailure);
    expect(failure.data).toMatchObject({
      v: 1,
      strategy: "planned",
      trigger: "manual",
      category: "unparseable",
      model: `${h.faux.getModel().provider}/faux-1`,
    });
    expect(failure.data!.counts).toMatchObject({ form: "text" });
    expect(failure.data!.counts.regionLines).toBeGreaterThan(0);
    expect(typeof failure.data!.durationMs).toBe("number");
    const persisted = JSON.stringify(added.filter((e) => e.type === "custom"));
    for (const secret of ["SECRET-PLANNER-TEXT", "A-LINE", "KEEP-THIS", "login"])
      expect(persisted).not.toContain(secret);
    const [card] = customs<NativeCompactionDetails>(LedgerType.nativeCompaction);
    expect(card.data).toMatchObject({
      v: 1,
      trigger: "manual",
      compactionEntryId: compactions()[0].id,
      after: "planned",
    });

    // Both cards render; the failure card expands to its counts.
    const runner = (
      h.session as unknown as {
        _extensionRunner: {
          getEntryRenderer: (
            t: string,
          ) => ((e: unknown, o: unknown, th: unknown) => { render(w: number): string[] }) | undefined;
        };
      }
    )._extensionRunner;
    const theme = { fg: (_c: string, t: string) => t, bg: (_c: string, t: string) => t, bold: (t: string) => t };
    const render = (entry: unknown, expanded: boolean, type: string) =>
      runner.getEntryRenderer(type)!(entry, { expanded }, theme).render(200).join("\n");
    expect(render(failure, false, LedgerType.plannerFailure)).toMatch(
      /planned compaction failed \(unparseable\).*Pi compacted natively/,
    );
    expect(render(failure, true, LedgerType.plannerFailure)).toMatch(/region: [\d,]+ lines/);
    expect(render(card, false, LedgerType.nativeCompaction)).toMatch(
      /native compaction · [\d,]+ → ~[\d,]+ tokens · manual \(after planned failed\)/,
    );

    // The records never reach the model.
    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("after compaction");
    expect(JSON.stringify(h.requests[h.requests.length - 1])).not.toContain("planner-failure");

    // /context reports the fallback.
    const notices: string[] = [];
    const ui = (
      h.session as unknown as { _extensionRunner: { uiContext: { notify: (m: string, t?: string) => void } } }
    )._extensionRunner.uiContext;
    ui.notify = (message) => notices.push(message);
    await h.session.prompt("/context");
    expect(notices.join("\n")).toContain("planned fallbacks to native: 1 (unparseable 1)");
  });

  it("a planner that never answers is aborted at the deadline and Pi compacts natively", async () => {
    h = await startHarness({ ledgerSettings: { strategy: "planned", planned: { timeoutMs: 300 } }, files: FILES });
    const warnings = captureWarnings(h);
    await workSession();
    const calls: Call[] = [];
    // The planner only "answers" once its request is aborted (as a provider honouring its signal would).
    const silent: FauxResponseStep = (_context, options) =>
      new Promise<AssistantMessage>((resolve) =>
        options!.signal!.addEventListener("abort", () => resolve(fauxAssistantMessage("too late, 1,2")), {
          once: true,
        }),
      );
    const native = () => fauxAssistantMessage("NATIVE-SUMMARY after the deadline");
    h.faux.appendResponses([recorded(calls, silent), recorded(calls, native), recorded(calls, native)]);
    const result = await h.session.compact();
    expect(result.summary).toContain("NATIVE-SUMMARY");
    expect(calls[0].planner).toBe(true);
    expect(calls[0].options).toMatchObject({ maxTokens: 4_096, timeoutMs: 300 });
    expect(calls[0].signal!.aborted).toBe(true);
    expect(warnings.some((w) => /fell back/.test(w) && /timeout/.test(w) && /300 ms/.test(w))).toBe(true);
    const [failure] = customs<PlannerFailureDetails>(LedgerType.plannerFailure);
    expect(failure.data).toMatchObject({ category: "timeout", trigger: "manual" });
    const [entry] = compactions();
    expect((entry as { details?: { strategy?: string } }).details?.strategy).not.toBe("planned");
  });

  it("an unknown plannerModel warns, naming the setting, and Pi compacts natively without asking any planner", async () => {
    h = await startHarness({
      ledgerSettings: { strategy: "planned", plannerModel: "nowhere/anthropic/claude-x" },
      files: FILES,
    });
    const warnings = captureWarnings(h);
    await workSession();
    const calls: Call[] = [];
    const native = () => fauxAssistantMessage("NATIVE-SUMMARY without a planner");
    h.faux.appendResponses([recorded(calls, native), recorded(calls, native)]);
    const result = await h.session.compact();
    expect(result.summary).toContain("NATIVE-SUMMARY");
    expect(calls.every((c) => !c.planner)).toBe(true);
    expect(
      warnings.some((w) => w.includes('contextLedger.plannerModel "nowhere/anthropic/claude-x" is not a known model')),
    ).toBe(true);
    const [failure] = customs<PlannerFailureDetails>(LedgerType.plannerFailure);
    expect(failure.data).toMatchObject({ category: "model-unresolved" });
  });

  it("a plannerModel whose id holds slashes resolves at the first slash and answers the planner request", async () => {
    h = await startHarness({
      ledgerSettings: { strategy: "planned", plannerModel: "router/anthropic/claude-x" },
      files: FILES,
    });
    const router = fauxProvider({
      api: "faux-router",
      provider: "router",
      models: [{ id: "anthropic/claude-x", contextWindow: 200_000, maxTokens: 8_000 }],
    });
    h.session.modelRuntime.registerNativeProvider(router.provider);
    await h.session.modelRuntime.setRuntimeApiKey("router", "test-key");
    const warnings = captureWarnings(h);
    await workSession();
    const calls: Call[] = [];
    router.appendResponses([
      recorded(calls, () => {
        const a = linesWith(calls[0], "A-LINE");
        return fauxAssistantMessage(
          [fauxToolCall("submit_deletion_plan", { ranges: [{ start: Math.min(...a), end: Math.max(...a) }] })],
          { stopReason: "toolUse" },
        );
      }),
    ]);
    const mainCalls = h.requests.length;
    await h.session.compact();
    expect(warnings).toEqual([]);
    expect(calls).toHaveLength(1);
    expect(h.requests.length).toBe(mainCalls);
    const [entry] = compactions();
    expect((entry as { details?: PlannedDetails }).details).toMatchObject({
      strategy: "planned",
      planner: "model",
      model: "router/anthropic/claude-x",
    });
  });
});
