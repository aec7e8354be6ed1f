import { describe, expect, it } from "vitest";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { LedgerType } from "../../../src/strategies/catalog.ts";
import { plannedUsage, usageLines } from "../../../src/strategies/planned/report.ts";
import { failureCardLines, failureDetails, PlanError } from "../../../src/strategies/shared/fallback.ts";

const facts = { strategy: "planned", trigger: "threshold" as const, durationMs: 1234.6 };

describe("planner failure records", () => {
  it("keep the category, the numbers-only reason and counts of a PlanError", () => {
    const error = new PlanError("no-valid-records", "none of the 3 records is a usable range of lines 1..40", {
      form: "tool",
      records: 3,
      accepted: 0,
      discarded: 3,
      discardedBy: { bounds: 3, sneaky: 9 } as Record<string, number>,
      firstDiscarded: 1,
      regionLines: 40,
      ...({ text: "SECRET transcript line" } as object),
    });
    const details = failureDetails(error, { ...facts, model: "faux/faux-1", usage: { input: 10, output: 2 } });
    expect(details).toEqual({
      v: 1,
      strategy: "planned",
      trigger: "threshold",
      category: "no-valid-records",
      reason: "none of the 3 records is a usable range of lines 1..40",
      counts: {
        form: "tool",
        records: 3,
        accepted: 0,
        discarded: 3,
        discardedBy: { bounds: 3 },
        firstDiscarded: 1,
        regionLines: 40,
      },
      model: "faux/faux-1",
      durationMs: 1235,
      usage: { input: 10, output: 2 },
    });
    expect(JSON.stringify(details)).not.toContain("SECRET");
  });

  it("never keep the text of other errors (a provider's message may quote the request)", () => {
    const details = failureDetails(new Error("400: messages.0.content 'SECRET transcript' is invalid"), facts);
    expect(details.category).toBe("error");
    expect(JSON.stringify(details)).not.toContain("SECRET");
    const refused = failureDetails(undefined, {
      ...facts,
      reason: `the strategy's details are not versioned ${"x".repeat(500)}`,
    });
    expect(refused.category).toBe("invalid-plan");
    expect(refused.reason.length).toBeLessThanOrEqual(200);
  });

  it("render as a one-line card that expands to its counts", () => {
    const details = failureDetails(
      new PlanError("timeout", "the planner gave no answer within 120000 ms", {
        regionLines: 812,
        regionTokens: 40_000,
        targetTokens: 20_000,
      }),
      facts,
    );
    expect(failureCardLines(details, false)).toEqual([
      "planned compaction failed (timeout) · 1.2s · threshold → Pi compacted natively",
    ]);
    expect(failureCardLines(details, true).join("\n")).toContain("region: 812 lines, ~40,000 tokens, target ~20,000");
  });
});

describe("planned usage for /context", () => {
  const compaction = (id: string, details: object) =>
    ({
      type: "compaction",
      id,
      parentId: null,
      timestamp: "",
      summary: "s",
      firstKeptEntryId: "x",
      tokensBefore: 1,
      details,
    }) as SessionEntry;
  const custom = (id: string, customType: string, data: object) =>
    ({ type: "custom", id, parentId: null, timestamp: "", customType, data }) as SessionEntry;

  it("counts compactions by planner, trimmed ones, planner tokens and fallbacks by category", () => {
    const branch = [
      compaction("c1", {
        v: 1,
        strategy: "planned",
        planner: "model",
        model: "p/m",
        stats: { trimmed: true },
        usage: { input: 1_000, output: 50 },
      }),
      compaction("c2", { v: 1, strategy: "planned", planner: "heuristic", stats: { trimmed: false } }),
      compaction("c3", { v: 1, strategy: "checkpoint" }),
      custom("f1", LedgerType.plannerFailure, { v: 1, strategy: "planned", category: "timeout" }),
      custom("f2", LedgerType.plannerFailure, {
        v: 1,
        strategy: "planned",
        category: "unparseable",
        model: "p/m",
        usage: { input: 500, output: 20 },
      }),
      custom("f3", LedgerType.plannerFailure, { v: 1, strategy: "planned", category: "timeout" }),
    ];
    const usage = plannedUsage(branch);
    expect(usage).toEqual({
      compactions: 2,
      byPlanner: { model: 1, heuristic: 1 },
      trimmed: 1,
      modelInput: 1_500,
      modelOutput: 70,
      fallbacks: 3,
      byCategory: { timeout: 2, unparseable: 1 },
      byModel: { "p/m": { compactions: 1, fallbacks: 1, input: 1_500, output: 70 } },
    });
    expect(usageLines(usage)).toEqual([
      "  planned: 2 compactions (model 1, heuristic 1), 1 trimmed at the target; planner tokens 1,500 in, 70 out",
      "  planned fallbacks to native: 3 (timeout 2, unparseable 1)",
      "    planner p/m: 1 compaction, 1 fallback; 1,500 in, 70 out",
    ]);
    expect(usageLines(plannedUsage([]))).toEqual([]);
  });
});
