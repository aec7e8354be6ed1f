// The recommendation: scores under stated weights, the choice and why, close calls explained as such, rows
// over the window excluded, and weights the user can change.
import { describe, expect, it } from "vitest";
import { parseWeights, recommend } from "../../src/lab/recommend.ts";
import type { RowTotals } from "../../src/lab/results.ts";

/** Totals with only what the recommendation reads. */
function row(
  id: string,
  quality: number,
  usd: number,
  extra: { overWindow?: number; acts?: number; family?: "ours" | "baseline"; workingSet?: number } = {},
): RowTotals {
  const acts = extra.acts ?? 4;
  const ws = extra.workingSet;
  return {
    info: { id, label: `${id} row`, family: extra.family ?? "ours", note: "" },
    sessions: 1,
    requests: 100,
    peakTokens: 1000,
    meanTokens: 500,
    actions: acts,
    modelCalls: 0,
    retention: { share: 1, kept: 1, total: 1, byKind: {} as RowTotals["retention"]["byKind"] },
    neededLater: {
      acts,
      needed: acts ? 100 : 0,
      visible: acts ? Math.round(quality * 100) : 0,
      share: acts ? quality : 1,
      byKind: {} as RowTotals["neededLater"]["byKind"],
    },
    cache: { reuse: 0.9, promptTokens: 1, cachedTokens: 1 },
    workingSet: {
      total: ws === undefined ? 0 : 100,
      visible: ws === undefined ? 0 : Math.round(ws * 100),
      share: ws ?? 1,
      misses: ws === undefined ? 0 : 100 - Math.round(ws * 100),
      seen: { total: ws === undefined ? 0 : 100, share: ws ?? 1 },
      rereads: { calls: 0, readTokens: 0, contextTokens: 0 },
    },
    cost: { units: usd * 1e6, usd, reread: { units: 0, usd: 0 } },
    overWindow: extra.overWindow ?? 0,
  };
}

describe("recommend", () => {
  it("does not let requests that exceed the window in every strategy (one message larger than it) cancel the choice", () => {
    const r = recommend([
      row("checkpoint", 0.9, 10, { overWindow: 2 }),
      row("digest", 0.95, 10, { overWindow: 2 }),
      row("planned", 0.99, 9, { overWindow: 3 }),
    ]);
    expect(r.choice?.id).toBe("digest");
    expect(r.candidates.find((c) => c.id === "planned")?.excluded).toMatch(/3 request\(s\) larger than the window/);
    expect(r.lines.join("\n")).toMatch(/2 request\(s\) were larger than the window in every strategy/);
  });

  it("judges by the probes kept when nothing was needed later and nothing edited, and says so", () => {
    // A session of reads and answers without edits, whose acts measured nothing needed later: both content
    // measures are empty, so they would give every row 100%. The probes the final view kept are what is left.
    const unmeasured = (id: string, kept: number, usd: number) => {
      const t = row(id, 1, usd);
      t.neededLater = { ...t.neededLater, needed: 0, visible: 0, share: 1 };
      t.retention = { ...t.retention, share: kept / 100, kept, total: 100 };
      return t;
    };
    const r = recommend([unmeasured("checkpoint", 90, 10), unmeasured("preserve", 14, 9)]);
    expect(r.choice?.id).toBe("checkpoint");
    const text = r.lines.join("\n");
    expect(text).toMatch(/quality 90%, set by the probes/);
    expect(text).not.toMatch(/100% of what the agent used later/);
  });

  it("scores the working set over every replaced text, not only the ones the agent had seen", () => {
    const t = row("digest", 0.98, 10, { workingSet: 0.8 });
    // 100 texts, 90 seen: the row showed 80, so 89% of the seen ones, but 80% of all.
    t.workingSet.seen = { total: 90, share: 80 / 90 };
    const [c] = recommend([t]).candidates;
    expect(c.workingSet).toBe(0.8);
    expect(c.quality).toBe(0.8);
    expect(c.decidedBy).toBe("working set");
  });

  it("picks the best score under the default weights and says why, with the setting to use", () => {
    const r = recommend([
      row("checkpoint", 0.82, 10),
      row("native", 0.7, 9.5),
      row("masking", 0.99, 8, { family: "baseline", overWindow: 3 }),
    ]);
    expect(r.weights).toEqual({ quality: 0.7, cost: 0.3 });
    expect(r.choice).toMatchObject({ id: "checkpoint", setting: expect.stringContaining(`"strategy": "checkpoint"`) });
    // 70 * 0.82 + 30 * 9.5 / 10 = 57.4 + 28.5 = 85.9; native: 70 * 0.7 + 30 = 79.
    expect(r.candidates.map((c) => [c.id, Number(c.score.toFixed(1))])).toEqual([
      ["checkpoint", 85.9],
      ["native", 79],
    ]);
    expect(r.lines[0]).toBe(
      `Use checkpoint row: "strategy": "checkpoint" (the default). Score 85.9 of 100 (weights: quality 70%, cost 30%).`,
    );
    expect(r.lines[1]).toBe(
      "Why: quality 82%, set by needed later: it showed 82% of what the agent used later right after it acted (needed later), and 100% of the working set, at $10.00; " +
        "native row: quality 70%, set by needed later: it showed 70% of what the agent used later right after it acted (needed later), and 100% of the working set, at $9.50 (score 79.0).",
    );
    expect(r.closeCall).toBe(false);
    // (1 - w) * 0.12 + w * (0.95 - 1) = 0  =>  w = 0.12 / 0.17.
    expect(r.flipAtCostWeight).toBeCloseTo(0.12 / 0.17, 6);
    expect(r.lines[2]).toMatch(
      /^A clear choice: checkpoint row leads by 6\.9 points, on quality, not on cost; native row would win with the cost weight above 71%\.$/,
    );
    // The simulated masking row is no setting and exceeded the window: not mentioned as a choice.
    expect(r.lines.join("\n")).not.toMatch(/masking/);
  });

  it("quality is the lower of needed later and the working set, and the answer names the measure that decided", () => {
    // digest keeps the names (98%) but shows 79% of the text later edits replace; checkpoint the reverse.
    const r = recommend([
      row("digest", 0.98, 10, { workingSet: 0.79 }),
      row("checkpoint", 0.6, 20, { workingSet: 0.95 }),
    ]);
    expect(r.candidates.map((c) => [c.id, c.quality, c.decidedBy])).toEqual([
      ["digest", 0.79, "working set"],
      ["checkpoint", 0.6, "needed later"],
    ]);
    // 70 * 0.79 + 30 = 85.3 (not 98.6 on names alone).
    expect(r.candidates[0].score).toBeCloseTo(85.3, 6);
    expect(r.lines[1]).toMatch(
      /^Why: quality 79%, set by the working set: it showed 79% of the text later edits replace \(working set\), and 98% of what the agent used later/,
    );
    expect(r.lines[1]).toMatch(/checkpoint row: quality 60%, set by needed later/);
  });

  it("a leader that loses the working set is not a clear choice, even ahead on both counts", () => {
    const below = recommend([
      row("digest", 0.98, 10, { workingSet: 0.85 }),
      row("checkpoint", 0.6, 20, { workingSet: 0.95 }),
    ]);
    expect(below.closeCall).toBe(false);
    expect(below.losesWorkingSet).toBe(true);
    expect(below.lines[2]).toMatch(/^Not a clear choice: digest row leads by/);
    expect(below.lines[3]).toBe(
      "digest row shows less of the text later edits replace than checkpoint row (85% against 95%): it leads on what it kept of the rest.",
    );
    // Above the runner-up but under the floor: still not clear, and said so.
    const floor = recommend([
      row("digest", 0.98, 10, { workingSet: 0.85 }),
      row("checkpoint", 0.6, 20, { workingSet: 0.8 }),
    ]);
    expect(floor.lines[2]).toMatch(/^Not a clear choice/);
    expect(floor.lines[3]).toMatch(/^digest row showed only 85% of the text later edits replace/);
    // Keeping both is a clear choice.
    const kept = recommend([
      row("digest", 0.98, 10, { workingSet: 0.97 }),
      row("checkpoint", 0.6, 20, { workingSet: 0.95 }),
    ]);
    expect(kept.losesWorkingSet).toBeUndefined();
    expect(kept.lines[2]).toMatch(/^A clear choice/);
  });

  it("explains a close call and the weight that would flip it", () => {
    const r = recommend([row("checkpoint", 0.8, 10), row("preserve", 0.78, 9.4)]);
    expect(r.closeCall).toBe(true);
    expect(r.lines.join("\n")).toMatch(/A close call: .* leads by [0-2]\.\d points/);
    expect(r.lines.join("\n")).toMatch(/would win with the cost weight (above|below) \d+%/);
  });

  it("user weights change the choice", () => {
    const totals = [row("checkpoint", 0.9, 12), row("native", 0.5, 8)];
    expect(recommend(totals).choice?.id).toBe("checkpoint");
    expect(recommend(totals, parseWeights("quality=1,cost=3")).choice?.id).toBe("native");
    expect(recommend(totals, parseWeights("cost=1")).choice?.id).toBe("native");
  });

  it("a row with requests over the window is not eligible, and is named as such", () => {
    const r = recommend([row("checkpoint", 0.6, 10), row("planned", 0.99, 9, { overWindow: 2 })]);
    expect(r.choice?.id).toBe("checkpoint");
    expect(r.candidates.at(-1)).toMatchObject({ id: "planned", excluded: "2 request(s) larger than the window" });
    expect(r.lines.join("\n")).toContain("Not eligible: planned row (2 request(s) larger than the window).");
  });

  it("says when a reference row that is not a setting scores higher", () => {
    const r = recommend([row("checkpoint", 0.6, 10), row("masking", 0.95, 9, { family: "baseline" })]);
    expect(r.choice?.id).toBe("checkpoint");
    expect(r.lines.join("\n")).toMatch(
      /For reference, rows that are not settings of this package scored higher: masking row 96\.5/,
    );
  });

  it("a leader at least as good on quality and cost is a clear choice, however near the scores", () => {
    const r = recommend([row("checkpoint", 1, 10.1), row("planned", 1, 10.65)]);
    expect(r.closeCall).toBe(false);
    expect(r.flipAtCostWeight).toBeUndefined();
    expect(r.lines[2]).toMatch(
      /^A clear choice: checkpoint row leads by 1\.5 points, on cost, at the same quality; no choice of weights makes planned row win\.$/,
    );
  });

  it("when nothing had to act, says the choice hardly matters", () => {
    const r = recommend([row("checkpoint", 1, 1, { acts: 0 }), row("native", 1, 1, { acts: 0 })]);
    expect(r.closeCall).toBe(true);
    expect(r.lines[0]).toMatch(/hardly matters here: no strategy had to act/);
    // The heading names one session or several; this line does not repeat it.
    expect(r.lines[0]).not.toMatch(/these sessions|\(.*\(/);
  });
});

describe("parseWeights", () => {
  it("normalizes, fills a missing side, and rejects bad input with a clear message", () => {
    expect(parseWeights(undefined)).toEqual({ quality: 0.7, cost: 0.3 });
    expect(parseWeights("quality=3,cost=1")).toEqual({ quality: 0.75, cost: 0.25 });
    expect(parseWeights("quality=0.5")).toEqual({ quality: 0.5, cost: 0.5 });
    expect(() => parseWeights("speed=1")).toThrow(/bad weight "speed=1"/);
    expect(() => parseWeights("quality=-1")).toThrow(/bad weight/);
    expect(() => parseWeights("quality=0,cost=0")).toThrow(/at least one must be above 0/);
  });
});

describe("recommendation wording", () => {
  it("a chosen row that never acted is not described as 'right after it acted'", () => {
    const r = recommend([row("checkpoint", 1, 10, { acts: 0 }), row("native", 0.5, 9)]);
    expect(r.choice?.id).toBe("checkpoint");
    // Only the chosen row never acted; the runner-up did, and is described as such.
    expect(r.lines[1].split("; ")[0]).not.toMatch(/right after it acted/);
    expect(r.lines[1]).toMatch(
      /^Why: it never had to act, so the view kept everything the agent used later, and 100% of the text later edits replace \(working set\), at \$10\.00; native row: quality 50%/,
    );
  });

  it("a tie is never a clear choice", () => {
    const r = recommend([row("checkpoint", 1, 10), row("digest", 1, 10)]);
    expect(r.closeCall).toBe(true);
    expect(r.lines.join("\n")).not.toMatch(/clear choice/);
    expect(r.lines[2]).toBe(
      "A tie: checkpoint row and digest row have the same quality and cost; no choice of weights separates them.",
    );
  });

  it("a tie between a better and a cheaper row names what each is ahead on", () => {
    // digest: 0.7 * 0.9 + 0.3 * 1 = 0.93; checkpoint, 1.3x dearer: 0.7 * 1 + 0.3 * 0.767 = 0.93. Level scores, different counts.
    const r = recommend([row("checkpoint", 1, 10), row("digest", 0.9, 10 * (0.23 / 0.3))]);
    const tieLine = r.lines.find((line) => line.startsWith("A tie"));
    expect(tieLine).toBeDefined();
    expect(tieLine).not.toMatch(/ahead on both/);
    expect(tieLine).toMatch(/ahead on (quality|cost), .* on (cost|quality)/);
  });

  it("a tie at the same quality credits only the cost", () => {
    const r = recommend([row("checkpoint", 1, 10), row("digest", 1, 10.001)]);
    expect(r.lines[2]).toMatch(
      /^A tie: checkpoint row and digest row score the same; checkpoint row is ahead on cost, at the same quality;/,
    );
    expect(r.lines[2]).not.toMatch(/ahead on quality/);
  });

  it("a leader ahead on one count and level on the other says so", () => {
    const r = recommend([row("checkpoint", 1, 10), row("planned", 0.8, 10)]);
    expect(r.lines[2]).toMatch(
      /^A clear choice: checkpoint row leads by [0-9.]+ points, on quality, at the same cost;/,
    );
  });

  it("a run without any settable strategy says so, not that they all exceeded the window", () => {
    const r = recommend([row("none", 1, 10, { family: "baseline" })]);
    expect(r.choice).toBeUndefined();
    expect(r.lines).toEqual([
      expect.stringMatching(
        /^No strategy to recommend: the run included none of the strategies this package can set \(checkpoint, digest, digest-ws, native, planned, preserve\)/,
      ),
    ]);
  });

  it("the choice carries the exact contextLedger value to merge", () => {
    expect(recommend([row("planned", 0.9, 10)]).choice?.value).toEqual({
      strategy: "planned",
      planned: { planner: "heuristic" },
    });
  });
});
