// Inputs and helpers for checkpoint unit tests; branches come from the shared LedgerBuilder.
import type { SessionEntry } from "../../../src/log/entries.ts";
import { compactionInput, type CompactionInput } from "../../../src/strategies/contract.ts";
import { planCheckpoint, type CheckpointOptions } from "../../../src/strategies/checkpoint/planner.ts";
import type { LedgerBuilder } from "../../support/ledger-builder.ts";

export const CWD = "/repo";

/** A compaction input with test defaults. */
export function inputFor(
  branch: readonly SessionEntry[],
  firstKeptEntryId: string,
  overrides: Partial<CompactionInput> = {},
): CompactionInput {
  return compactionInput(
    { firstKeptEntryId, messagesToSummarize: [], turnPrefixMessages: [], tokensBefore: 1000 },
    { reason: "manual", branch, contextWindow: 100_000, cwd: CWD, ...overrides },
  );
}

export const UNCAPPED: CheckpointOptions = { capPercent: null, startupReads: true };

/** Plan, then append the compaction entry the way Pi would, and return the plan and its entry id. */
export function compactInto(
  b: LedgerBuilder,
  firstKeptEntryId: string,
  options: CheckpointOptions = UNCAPPED,
  overrides: Partial<CompactionInput> = {},
) {
  const plan = planCheckpoint(inputFor(b.entries, firstKeptEntryId, overrides), options);
  const id = b.compaction(plan.firstKeptEntryId, plan.summary, plan.details);
  return { plan, id };
}

/** Lines between `<span ...>` and `</span>` of the n-th span (1-based) in a summary. */
export function spanBody(summary: string, n: number): string[] {
  const lines = summary.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`<span n="${n}"`));
  if (start < 0) return [];
  const end = lines.indexOf("</span>", start);
  return lines.slice(start + 1, end);
}
