// Compaction rows answer Pi's compaction the way the host does: through the strategy's own chart (its routes) and
// compaction effects (its planner and validation). A plan the host's validation refuses, or any planner error, ends
// in Pi's native compaction; a route that cancels Pi's compaction leaves the row's context alone.
import { describe, expect, it } from "vitest";
import { replaySession } from "../../src/lab/replay.ts";
import { DEFAULT_PRICES } from "../../src/lab/metrics.ts";
import { defaultSettings, type RowFactory, type RowInfo } from "../../src/lab/row.ts";
import { chartSummarizer } from "../../src/lab/rows/chart-compaction.ts";
import { compactionRow } from "../../src/lab/rows/compaction-row.ts";
import { STAND_IN_SUMMARY_TOKENS } from "../../src/lab/rows/native.ts";
import { planCheckpoint } from "../../src/strategies/checkpoint/planner.ts";
import { checkpointStrategy } from "../../src/strategies/checkpoint/strategy.ts";
import type { CompactionPlan, StrategyPlanner } from "../../src/strategies/contract.ts";
import type { RegisteredStrategy } from "../../src/strategies/registry.ts";
import { readingSession } from "./fixtures.ts";

const settings = { ...defaultSettings(40_000), cwd: "/work/app" };
const info: RowInfo = { id: "probe", label: "probe", family: "ours", note: "test row" };

/** A row of `strategy` whose compaction planner is `plan`. */
function rowWith(plan: StrategyPlanner["plan"], strategy: RegisteredStrategy = checkpointStrategy): RowFactory {
  return (s) =>
    compactionRow(
      info,
      s,
      chartSummarizer(strategy, { engine: "compaction", planner: () => ({ name: "checkpoint", plan }) }, s),
    );
}

async function replay(factory: RowFactory) {
  const l = readingSession(settings.cwd);
  const result = await replaySession(
    { name: "reading", cwd: settings.cwd, entries: l.entries },
    { settings, rows: [factory], prices: DEFAULT_PRICES },
  );
  return result.rows[0];
}

describe("compaction rows decide through the strategy's chart and effects", () => {
  it("the strategy's plan is stored when the host's validation accepts it", async () => {
    const row = await replay(rowWith(async (input) => planCheckpoint(input)));
    expect(row.compactions).toBeGreaterThan(0);
    expect(row.actions.every((a) => a.modelCall !== true && a.sideCalls.length === 0)).toBe(true);
  });

  it("a plan the host's validation refuses (its kept entry is not on the branch) ends in Pi's native compaction", async () => {
    const row = await replay(
      rowWith(
        async (input): Promise<CompactionPlan> => ({ ...planCheckpoint(input), firstKeptEntryId: "not-on-the-branch" }),
      ),
    );
    expect(row.compactions).toBeGreaterThan(0);
    // Pi's summarization calls are costed: the native stand-in ran, not the refused plan.
    expect(
      row.actions.every((a) => a.modelCall === true && a.sideCalls.some((c) => c.output === STAND_IN_SUMMARY_TOKENS)),
    ).toBe(true);
  });

  it("any planner error, not only a PlanError, ends in Pi's native compaction", async () => {
    const row = await replay(
      rowWith(async () => {
        throw new TypeError("planner bug");
      }),
    );
    expect(row.compactions).toBeGreaterThan(0);
    expect(row.actions.every((a) => a.modelCall === true)).toBe(true);
  });

  it("a strategy whose route cancels Pi's threshold compaction never compacts in the row", async () => {
    const cancelling: RegisteredStrategy = {
      ...checkpointStrategy,
      routes: { ...checkpointStrategy.routes, threshold: "cancel" },
    };
    let asked = 0;
    const row = await replay(
      rowWith(async (input) => {
        asked++;
        return planCheckpoint(input);
      }, cancelling),
    );
    expect(asked).toBe(0);
    expect(row.compactions).toBe(0);
  });
});
