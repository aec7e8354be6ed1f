// The planned strategy's recovery and reporting paths through a real AgentSession with Pi's default compaction
// settings: a text plan cut by the output limit, the stop reason in the failure record, duplicate listings under the
// heuristic planner, and the card and /context lines of a successful compaction. Every provider call is recorded, so
// the tests count model calls and read what the provider was sent.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { LedgerType } from "../../src/strategies/catalog.ts";
import type { PlannedDetails } from "../../src/strategies/planned/planner.ts";
import { PLANNED_REPORT, type PlannedReportDetails } from "../../src/strategies/planned/report.ts";
import type { PlannerFailureDetails } from "../../src/strategies/shared/fallback.ts";
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

const compactions = () => branchOf(h!).filter((e) => e.type === "compaction");
const captureWarnings = (harness: Harness) => capture(harness, (restore) => (restoreNotify = restore));
const SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:";

/** `first,last` of the planner lines holding `tag`. */
const rangeOf = (call: Call, tag: string) => {
  const lines = linesWith(call, tag);
  return [Math.min(...lines), Math.max(...lines)] as const;
};

describe("planned recovery (Pi's default settings)", () => {
  it("a text plan cut by the output limit inside its last record's number keeps the complete records", async () => {
    h = await startHarness({ ledgerSettings: { strategy: "planned" }, files: FILES });
    const warnings = captureWarnings(h);
    await work(h);
    const calls: Call[] = [];
    h.faux.appendResponses([
      recorded(calls, () => {
        const [a1, a2] = rangeOf(calls[0], "A-LINE");
        const [b1, b2] = rangeOf(calls[0], "B-LINE");
        const [c1, c2] = rangeOf(calls[0], "C-LINE");
        // The third record was cut inside its last number, as `705,7` of `705,712`: well formed, but reversed.
        const cut = `${c1},${String(c2).slice(0, -2)}`;
        expect(Number(cut.split(",")[1])).toBeLessThan(c1);
        return fauxAssistantMessage(`${a1},${a2}\n${b1},${b2}\n${cut}`, { stopReason: "length" });
      }),
    ]);
    await h.session.compact();
    expect(warnings).toEqual([]);
    // One model call, the planner's: no native summary after it.
    expect(calls).toHaveLength(1);
    expect(calls[0].planner).toBe(true);
    expect(calls[0].options).toMatchObject({ maxTokens: 4_096, timeoutMs: 120_000 });
    const [entry] = compactions();
    const details = (entry as { details?: PlannedDetails }).details;
    expect(details).toMatchObject({ strategy: "planned", planner: "model" });
    expect(details!.plan).toEqual({
      form: "text",
      records: 3,
      accepted: 2,
      discarded: 1,
      stopReason: "length",
      truncated: true,
    });
    expect(customsOf(h, LedgerType.plannerFailure)).toEqual([]);

    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("after compaction");
    const summary = h.requests
      .at(-1)!
      .map(textOf)
      .find((t) => t.startsWith(SUMMARY_PREFIX))!;
    expect(summary).not.toContain("A-LINE 100 ");
    expect(summary).toContain("KEEP-THIS: the public API must not change.");
  });

  it("a successful planned compaction leaves a card with its figures, and /context shows the last run and planner usage per model", async () => {
    h = await startHarness({ ledgerSettings: { strategy: "planned" }, files: FILES });
    await work(h);
    const calls: Call[] = [];
    h.faux.appendResponses([
      recorded(calls, () => {
        const [a1, a2] = rangeOf(calls[0], "A-LINE");
        const [c1, c2] = rangeOf(calls[0], "C-LINE");
        return fauxAssistantMessage(`${a1},${a2}\n${c1},${String(c2).slice(0, -2)}`, { stopReason: "length" });
      }),
    ]);
    const before = branchOf(h).length;
    await h.session.compact();
    expect(calls).toHaveLength(1);
    const added = branchOf(h).slice(before);
    expect(added.map((e) => (e.type === "custom" ? e.customType : e.type))).toEqual(["compaction", PLANNED_REPORT]);
    const [entry] = compactions();
    const details = (entry as { details?: PlannedDetails }).details!;
    const [card] = customsOf<PlannedReportDetails>(h, PLANNED_REPORT);
    const model = `${h.faux.getModel().provider}/faux-1`;
    expect(card.data).toMatchObject({
      v: 1,
      compactionEntryId: entry.id,
      trigger: "manual",
      planner: "model",
      model,
      tokensBefore: (entry as { tokensBefore: number }).tokensBefore,
      tokensAfter: details.stats.tokensAfter,
      removedLines: details.stats.removedLines,
      pinnedLines: details.stats.pinnedLines,
      plan: { form: "text", records: 2, accepted: 1, discarded: 1, truncated: true },
    });
    expect(card.data!.pinnedLines).toBeGreaterThanOrEqual(3);
    expect(card.data!.durationMs).toBeGreaterThanOrEqual(0);
    // Its card renders in full, collapsed or not; the record never reaches the model.
    const runner = (
      h.session as unknown as {
        _extensionRunner: {
          getEntryRenderer: (t: string) => (e: unknown, o: unknown, th: unknown) => { render(w: number): string[] };
        };
      }
    )._extensionRunner;
    const theme = { fg: (_c: string, t: string) => t, bg: (_c: string, t: string) => t, bold: (t: string) => t };
    const render = (expanded: boolean) =>
      runner.getEntryRenderer(PLANNED_REPORT)(card, { expanded }, theme).render(200).join("\n");
    const text = render(false);
    expect(text).toBe(render(true));
    const f = (n: number) => n.toLocaleString("en-US");
    expect(text).toContain(`≡ planned compaction`);
    expect(text).toContain(`${f(card.data!.tokensBefore)} → ~${f(card.data!.tokensAfter)} tokens`);
    expect(text).toContain(`${f(card.data!.removedLines)} lines removed`);
    expect(text).toMatch(new RegExp(`${card.data!.pinnedLines} pinned lines · ${model} · \\d+\\.\\ds · manual`));
    expect(text).toContain(
      "recovered plan (text form): 2 records, 1 accepted, 1 discarded (the last one was cut by the output limit)",
    );
    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("after compaction");
    expect(JSON.stringify(h.requests.at(-1))).not.toContain("planned-report");

    const notices: string[] = [];
    const ui = (
      h.session as unknown as { _extensionRunner: { uiContext: { notify: (m: string, t?: string) => void } } }
    )._extensionRunner.uiContext;
    ui.notify = (message) => notices.push(message);
    await h.session.prompt("/context");
    const dashboard = notices.join("\n");
    expect(dashboard).toMatch(new RegExp(`planner ${model}: 1 compaction, 0 fallbacks; [\\d,]+ in, [\\d,]+ out`));
    expect(dashboard).toMatch(
      /planned last run: [\d,]+ → ~[\d,]+ tokens, [\d,]+ lines removed, \d+ pinned lines, .*faux-1, \d+\.\ds, manual/,
    );
    expect(dashboard).toContain("recovered plan (text form): 2 records, 1 accepted, 1 discarded");
  });

  it("the planner's stop reason reaches the failure record and its card", async () => {
    h = await startHarness({ ledgerSettings: { strategy: "planned" }, files: FILES });
    captureWarnings(h);
    await work(h);
    const calls: Call[] = [];
    const native = () => fauxAssistantMessage("NATIVE-SUMMARY of the work");
    h.faux.appendResponses([
      recorded(calls, () => fauxAssistantMessage("Here are the ranges I would", { stopReason: "length" })),
      recorded(calls, native),
      recorded(calls, native),
    ]);
    const result = await h.session.compact();
    expect(result.summary).toContain("NATIVE-SUMMARY");
    expect(calls[0].planner).toBe(true);
    const [failure] = customsOf<PlannerFailureDetails>(h, LedgerType.plannerFailure);
    expect(failure.data!.counts).toMatchObject({ form: "text", stopReason: "length" });
    const runner = (
      h.session as unknown as {
        _extensionRunner: {
          getEntryRenderer: (t: string) => (e: unknown, o: unknown, th: unknown) => { render(w: number): string[] };
        };
      }
    )._extensionRunner;
    const theme = { fg: (_c: string, t: string) => t, bg: (_c: string, t: string) => t, bold: (t: string) => t };
    expect(
      runner.getEntryRenderer(LedgerType.plannerFailure)(failure, { expanded: true }, theme).render(200).join("\n"),
    ).toContain("planner reply ended with: length");
  });

  it("the heuristic planner drops an older copy of a listing Pi keeps verbatim later (two identical 400-line outputs)", async () => {
    const listing = `${Array.from({ length: 400 }, (_, i) => `LIST-ENTRY src/module-${i}/index.ts`).join("\n")}\n`;
    h = await startHarness({
      ledgerSettings: { strategy: "planned", planned: { planner: "heuristic" } },
      files: { ...FILES, "files.txt": listing },
    });
    h.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "cat files.txt" })], { stopReason: "toolUse" }),
      fauxAssistantMessage(
        [
          fauxToolCall("read", { path: "a.txt" }),
          fauxToolCall("read", { path: "b.txt" }),
          fauxToolCall("read", { path: "c.txt" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("ROOT-CAUSE found."),
      fauxAssistantMessage([fauxToolCall("bash", { command: "cat files.txt" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("same files"),
    ]);
    await h.session.prompt("Map the repository, then find the timeout.");
    await h.session.prompt("List the files again.");
    const before = h.requests.length;
    await h.session.compact();
    // The heuristic makes no model call.
    expect(h.requests.length).toBe(before);
    const [entry] = compactions();
    expect((entry as { details?: PlannedDetails }).details).toMatchObject({
      strategy: "planned",
      planner: "heuristic",
    });
    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("after compaction");
    const request = h.requests.at(-1)!;
    const summary = request.map(textOf).find((t) => t.startsWith(SUMMARY_PREFIX))!;
    // The region's copy went whole; the copy Pi kept after the cut is still there, once.
    expect(summary.split("\n").filter((l) => l.startsWith("LIST-ENTRY "))).toEqual([]);
    const all = request.map(textOf).join("\n");
    expect(all.split("\n").filter((l) => l === "LIST-ENTRY src/module-200/index.ts")).toHaveLength(1);
  });
});
