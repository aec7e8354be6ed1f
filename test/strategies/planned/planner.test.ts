import { describe, expect, it } from "vitest";
import type { CompactionEntry } from "@earendil-works/pi-coding-agent";
import { PlanError } from "../../../src/strategies/shared/fallback.ts";
import {
  createPlannedPlanner,
  planHeuristic,
  planPlanned,
  transcriptOf,
  type PlannedDetails,
} from "../../../src/strategies/planned/planner.ts";
import { INTRO, markerText } from "../../../src/strategies/planned/transcript.ts";
import type { CompleteText, ModelRequest } from "../../../src/strategies/contract.ts";
import { assistant, call, filler, inputOf, NO_FLOOR, result, text, user } from "./fixtures.ts";

const KEEP = "<keepContext>\nThe public API must not change.\n</keepContext>";
const session = [
  user(`Fix the login timeout.\n${KEEP}`),
  assistant(text("I'll inspect the repository."), call("a", "bash", { command: "ls -R" })),
  result("a", "bash", filler("listing", 60)),
  assistant(call("b", "read", { path: "auth.ts" })),
  result("b", "read", "export const TIMEOUT_MS = 5000;"),
  assistant(text("Root cause: TIMEOUT_MS is too low.")),
  user("next"),
];
const signal = () => new AbortController().signal;

describe("planned planner", () => {
  it("heuristic: compacts with provenance and versioned details", () => {
    const plan = planHeuristic(inputOf(session), NO_FLOOR);
    const details = plan.details as PlannedDetails;
    expect(details).toMatchObject({ v: 1, strategy: "planned", planner: "heuristic" });
    expect(plan.firstKeptEntryId).toBe("e7");
    expect(plan.summary.startsWith(INTRO)).toBe(true);
    expect(plan.summary).toContain(KEEP);
    expect(plan.summary).toContain("Root cause: TIMEOUT_MS is too low.");
    expect(plan.summary).toMatch(/\[compacted: \d+ lines removed\]/);
    expect(details.stats.keptTokens).toBeLessThan(details.stats.regionTokens);
    expect(plan.estimatedTokensAfter).toBe(details.stats.tokensAfter);
  });

  it("defaults to the model when one is injected and sends it the numbered transcript", async () => {
    const input = inputOf(session);
    const lines = transcriptOf(input);
    const start = lines.findIndex((l) => l.text === `listing 0 ${"x".repeat(40)}`) + 1;
    let seen = "";
    const complete: CompleteText = async ({ prompt }) => {
      seen = prompt;
      return `\`\`\`\n${start},${start + 59}\n\`\`\``;
    };
    const plan = await planPlanned(
      { ...input, complete, customInstructions: "mind auth" },
      { ...NO_FLOOR, retainRatio: 0 },
      signal(),
    );
    expect((plan.details as PlannedDetails).planner).toBe("model");
    expect(seen).toContain(`${start}| listing 0`);
    expect(seen).toContain("mind auth");
    expect(plan.summary).toContain(markerText(60));
  });

  it("asks with the plan tool and the output cap, and applies a tool-call plan whose bad records are discarded", async () => {
    const input = inputOf(session);
    const lines = transcriptOf(input);
    const start = lines.findIndex((l) => l.text === `listing 0 ${"x".repeat(40)}`) + 1;
    let request: ModelRequest | undefined;
    const complete: CompleteText = async (req) => {
      request = req;
      const ranges = [
        { start: 0, end: 3 },
        { start, end: start + 59 },
        { start: 4, end: 2 },
      ];
      return {
        text: "",
        toolCalls: [{ name: "submit_deletion_plan", arguments: { ranges } }],
        model: "faux/planner-1",
        usage: { input: 900, output: 40 },
      };
    };
    const plan = await planPlanned(
      { ...input, complete },
      { ...NO_FLOOR, retainRatio: 0, maxOutputTokens: 1_234 },
      signal(),
    );
    expect(request?.maxOutputTokens).toBe(1_234);
    expect(request?.timeoutMs).toBe(120_000);
    expect(request?.tools?.map((t) => t.name)).toEqual(["submit_deletion_plan"]);
    expect(plan.summary).toContain(markerText(60));
    const details = plan.details as PlannedDetails;
    expect(details).toMatchObject({ planner: "model", model: "faux/planner-1", usage: { input: 900, output: 40 } });
    expect(details.plan).toEqual({
      form: "tool",
      records: 3,
      accepted: 1,
      discarded: 2,
      discardedBy: { bounds: 1, reversed: 1 },
      firstDiscarded: 1,
    });
  });

  it("a failed plan carries bounded counts of the region and the records, never their text", async () => {
    const complete: CompleteText = async () => ({
      text: "",
      toolCalls: [{ name: "submit_deletion_plan", arguments: { ranges: [{ start: 99_999, end: 100_000 }] } }],
    });
    const error = await planPlanned({ ...inputOf(session), complete }, NO_FLOOR, signal()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlanError);
    expect((error as PlanError).category).toBe("no-valid-records");
    expect((error as PlanError).diagnostics).toMatchObject({
      form: "tool",
      records: 1,
      accepted: 0,
      discarded: 1,
      regionLines: transcriptOf(inputOf(session)).length,
    });
  });

  it("rejects garbage model output with a PlanError and never returns a summary", async () => {
    for (const reply of ["I think you should delete the listing.", "9999,10000", "5,2", "1,4\nnot a record", ""]) {
      const complete: CompleteText = async () => reply;
      await expect(planPlanned({ ...inputOf(session), complete }, NO_FLOOR, signal())).rejects.toBeInstanceOf(
        PlanError,
      );
    }
  });

  it("rejects when the model planner is forced without a model", async () => {
    await expect(planPlanned(inputOf(session), { ...NO_FLOOR, planner: "model" }, signal())).rejects.toThrow(
      /no model/,
    );
  });

  it("rejects before calling the model when the region is under the floor", async () => {
    let called = false;
    const complete: CompleteText = async () => ((called = true), "1,2");
    await expect(
      planPlanned(
        { ...inputOf(session), complete },
        { retainRatio: 0.5, minRetainedTokens: 8_000, minSavedTokens: 2_048 },
        signal(),
      ),
    ).rejects.toThrow(/region/);
    expect(called).toBe(false);
  });

  it("rejects when aborted before or during the model call", async () => {
    const aborted = new AbortController();
    aborted.abort();
    await expect(planPlanned(inputOf(session), NO_FLOOR, aborted.signal)).rejects.toThrow();
    const controller = new AbortController();
    const complete: CompleteText = (_req, s) =>
      new Promise((_resolve, reject) =>
        s.addEventListener("abort", () => reject(new Error("aborted")), { once: true }),
      );
    const pending = createPlannedPlanner(() => NO_FLOOR).plan({ ...inputOf(session), complete }, controller.signal);
    controller.abort();
    await expect(pending).rejects.toThrow(/abort/);
    // A model that ignores the signal still cannot commit after the abort.
    const late = new AbortController();
    const ignoring: CompleteText = async () => {
      late.abort();
      return "1,2";
    };
    await expect(planPlanned({ ...inputOf(session), complete: ignoring }, NO_FLOOR, late.signal)).rejects.toThrow();
  });

  it("folds markers forward and keeps pinned lines protected on the next compaction", () => {
    const first = planHeuristic(inputOf(session), NO_FLOOR);
    const prior = { summary: first.summary, details: first.details } as Pick<CompactionEntry, "summary" | "details">;
    const more = [
      user("continue"),
      assistant(call("c", "bash", { command: "npm test" })),
      result("c", "bash", filler("test", 80)),
      assistant(text("done")),
      user("last"),
    ];
    const second = planHeuristic(inputOf(more, prior), { ...NO_FLOOR, retainRatio: 0 });
    const lines = second.summary.split("\n");
    expect(lines[0]).toBe(INTRO);
    expect(lines.filter((l) => l === INTRO)).toHaveLength(1);
    expect(second.summary).toContain(KEEP);
    expect(second.summary).toContain("[user]\nFix the login timeout.");
    // Adjacent markers never stack: removed runs fold into one marker.
    lines.forEach((line, i) => {
      if (/^\[compacted: /.test(line)) expect(/^\[compacted: /.test(lines[i + 1] ?? "")).toBe(false);
    });
    const count = (s: string) =>
      [...s.matchAll(/\[compacted: (\d+) lines? removed\]/g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(count(second.summary)).toBeGreaterThan(count(first.summary));
    expect((second.details as PlannedDetails).stats.pinnedLines).toBe(3);
  });
});
