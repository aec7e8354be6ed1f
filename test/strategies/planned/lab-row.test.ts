// The lab measures both planner paths of the planned strategy: the heuristic row calls no model, the scripted
// model row runs the model planner path (request, tool plan, parse, apply) and pays for one planner call per
// compaction. Both replay a generated session through the same strategy code as the host.
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { defaultSettings } from "../../../src/lab/row.ts";
import { replaySession } from "../../../src/lab/replay.ts";
import { selectRows } from "../../../src/lab/rows/registry.ts";
import { generateSession } from "../../../src/lab/sample/generate.ts";
import { DEFAULT_PRICES } from "../../../src/lab/metrics.ts";

describe("planned lab rows", () => {
  it("replays the heuristic and the scripted model planner, counting the planner calls of the model path", async () => {
    const session = generateSession(7, 0, { tasks: 24, longOutputRate: 0.05 });
    const { factories, skipped } = selectRows("planned,planned-model");
    expect(skipped).toEqual([]);
    const result = await replaySession(
      { name: session.name, entries: session.entries.filter((e): e is SessionEntry => e.type !== "session") },
      { settings: defaultSettings(32_000), rows: factories, prices: DEFAULT_PRICES },
    );
    const [heuristic, model] = result.rows;
    expect(heuristic.info.id).toBe("planned");
    expect(model.info.id).toBe("planned-model");
    expect(heuristic.compactions).toBeGreaterThan(0);
    expect(model.compactions).toBeGreaterThan(0);
    expect(heuristic.actions.every((a) => a.sideCalls.length === 0 || a.modelCall)).toBe(true);
    // Every model-path compaction made a planner call (the request carries the numbered region, so it is large).
    expect(model.actions.every((a) => a.modelCall && a.sideCalls.length >= 1 && a.sideCalls[0].input > 1_000)).toBe(
      true,
    );
    expect(model.sideCalls.count).toBeGreaterThanOrEqual(model.compactions);
    console.log(
      `planned rows on ${session.name}: heuristic ${heuristic.compactions} compactions, peak ${heuristic.peakTokens}, side calls ${heuristic.sideCalls.count}; ` +
        `scripted model ${model.compactions} compactions, peak ${model.peakTokens}, side calls ${model.sideCalls.count} (${model.sideCalls.inputTokens} in / ${model.sideCalls.outputTokens} out)`,
    );
  });
});
