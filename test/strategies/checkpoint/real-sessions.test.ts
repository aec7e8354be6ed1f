// Both real Pi sessions (legacy files, migrated by Pi) compact with the checkpoint planner: once at Pi's
// default boundary, and twice in a row to exercise chaining on real data. Read in place, never copied.
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { prepareCompaction } from "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/compaction/compaction.js";
import { branchTo } from "../../../src/log/branch.ts";
import { textBlocks } from "../../../src/strategies/shared/conversation.ts";
import {
  DEFAULT_CHECKPOINT_OPTIONS,
  planCheckpoint,
  type CheckpointDetails,
} from "../../../src/strategies/checkpoint/planner.ts";
import { isGeneratedLine } from "../../../src/strategies/checkpoint/render.ts";
import { compactionInput, type CompactionInput } from "../../../src/strategies/contract.ts";
import { loadRealSessions } from "../../properties/real-sessions.ts";

const SETTINGS = { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 };
const CWD = "/Users/badlogic/workspaces/pi-mono";

function inputAt(branch: SessionEntry[]): CompactionInput {
  const prep = prepareCompaction(branch, SETTINGS);
  if (!prep) throw new Error("Pi found nothing to compact");
  return compactionInput(prep, { reason: "manual", branch, contextWindow: 200_000, cwd: CWD });
}

function sources(branch: readonly SessionEntry[]): Set<string> {
  const lines = new Set<string>();
  for (const entry of branch) {
    const texts =
      entry.type === "message"
        ? [textBlocks((entry.message as { content?: unknown }).content).join("\n")]
        : entry.type === "compaction" || entry.type === "branch_summary"
          ? [entry.summary]
          : [];
    for (const text of texts) for (const line of text.split("\n")) lines.add(line);
  }
  return lines;
}

describe.each(loadRealSessions())("real session $name", ({ name, entries }) => {
  const branch = branchTo(entries);

  it("compacts at Pi's boundary with verbatim lines only, well under the token count before", () => {
    const input = inputAt(branch);
    const plan = planCheckpoint(input, DEFAULT_CHECKPOINT_OPTIONS);
    const details = plan.details as CheckpointDetails;
    const known = sources(branch);
    expect(plan.summary.split("\n").filter((line) => !isGeneratedLine(line) && !known.has(line))).toEqual([]);
    expect(plan.firstKeptEntryId).toBe(input.firstKeptEntryId);
    expect(details.stats.summaryTokens).toBeLessThanOrEqual(50_000);
    expect(plan.estimatedTokensAfter!).toBeLessThan(input.tokensBefore);
    console.log(
      `${name}: tokens before ${input.tokensBefore}, after ${plan.estimatedTokensAfter} (checkpoint ${details.stats.summaryTokens}, spans ${details.stats.spans}, trimmed spans ${details.stats.trimmedSpans})`,
    );
  });

  it("chains a second checkpoint onto a first one made halfway through", () => {
    // Split after Pi's own compactions (a native one after ours would start a new chain).
    const lastNative = branch.map((e) => e.type).lastIndexOf("compaction");
    const half = branch.slice(0, Math.floor((lastNative + 1 + branch.length) / 2));
    const first = planCheckpoint(inputAt(half), DEFAULT_CHECKPOINT_OPTIONS);
    const last = half[half.length - 1];
    const compaction = {
      type: "compaction",
      id: "real-ckpt",
      parentId: last.id,
      timestamp: last.timestamp,
      summary: first.summary,
      firstKeptEntryId: first.firstKeptEntryId,
      tokensBefore: first.tokensBefore,
      details: first.details,
    } as SessionEntry;
    const rest = branch.slice(half.length).map((e, i) => (i === 0 ? { ...e, parentId: compaction.id } : e));
    const second = planCheckpoint(inputAt([...half, compaction, ...rest]), DEFAULT_CHECKPOINT_OPTIONS);
    const stats = (second.details as CheckpointDetails).stats;
    expect(stats.spans).toBeGreaterThanOrEqual(2);
    expect(second.summary).toContain('<span n="2"');
    console.log(
      `${name}: chained checkpoint ${stats.summaryTokens} tokens, ${stats.spans} spans, ${stats.trimmedSpans} trimmed`,
    );
  });
});
