// The heuristic planner on both real sessions at Pi's default cut (keep 20k): it compacts, keeps the floor and the
// target, and every surviving line is a stored line byte for byte. Prints the measured figures.
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { prepareCompaction } from "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/compaction/compaction.js";
import { branchTo } from "../../../src/log/branch.ts";
import { estimateTextTokens } from "../../../src/projection/tokens.ts";
import { compactionInput } from "../../../src/strategies/contract.ts";
import { planHeuristic, type PlannedDetails } from "../../../src/strategies/planned/planner.ts";
import {
  markerCount,
  parseHeader,
  stableJson,
  INTRO,
  unescapeLine,
} from "../../../src/strategies/planned/transcript.ts";
import { loadRealSessions } from "../../properties/real-sessions.ts";

type Block = Record<string, unknown>;
function sourceLines(branch: readonly SessionEntry[]): Set<string> {
  const lines = new Set<string>();
  const add = (t: unknown) => typeof t === "string" && t.split("\n").forEach((l) => lines.add(l));
  for (const entry of branch) {
    if (entry.type !== "message") continue;
    const m = entry.message as unknown as Block;
    if (typeof m.content === "string") add(m.content);
    else if (Array.isArray(m.content))
      for (const b of m.content as Block[]) {
        add(b.text);
        add(b.thinking);
        if (b.type === "toolCall") lines.add(stableJson(b.arguments ?? {}));
      }
    add(m.command);
    add(m.output);
    add(m.errorMessage);
  }
  return lines;
}

describe("planned heuristic on the real sessions", () => {
  for (const session of loadRealSessions()) {
    it(`${session.name}: compacts to the target with verbatim survivors`, () => {
      // The raw history without the compactions already in the file, so the planner sees the whole region.
      const raw = session.entries.filter((e) => e.type !== "compaction");
      const leaf = raw[raw.length - 1];
      const branch = branchTo(raw, leaf.id);
      const prep = prepareCompaction(branch, { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 })!;
      expect(prep).toBeDefined();
      const plan = planHeuristic(compactionInput(prep, { branch, contextWindow: 200_000, cwd: "/" }));
      const { stats } = plan.details as PlannedDetails;
      console.log(
        `${session.name}: tokensBefore ${prep.tokensBefore} → after ${stats.tokensAfter}; region ${stats.regionTokens} → ${stats.keptTokens} (${stats.removedLines} lines removed, ${stats.appliedRanges} ranges)`,
      );
      expect(stats.keptTokens).toBeGreaterThanOrEqual(8_000);
      expect(stats.regionTokens - stats.keptTokens).toBeGreaterThanOrEqual(2_048);
      expect(stats.keptTokens).toBeLessThanOrEqual(stats.targetTokens * 1.1);
      expect(estimateTextTokens(plan.summary)).toBe(stats.keptTokens);
      const sources = sourceLines(branch);
      const [intro, ...body] = plan.summary.split("\n");
      expect(intro).toBe(INTRO);
      const stray = body.filter(
        (l) => markerCount(l) === undefined && parseHeader(l) === undefined && !sources.has(unescapeLine(l)),
      );
      expect(stray).toEqual([]);
    });
  }
});
