// Invariants 5 (byte-stable prefixes), 6 (verbatim fidelity) and 8 (determinism) of the checkpoint strategy,
// plus the cap bound, on generated ledgers. Pi's own prepareCompaction picks every boundary.
import { describe, it } from "vitest";
import fc from "fast-check";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
// Pi does not export its preparation step; the tests use it to get real boundaries.
import { prepareCompaction } from "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/compaction/compaction.js";
import { branchTo } from "../../../src/log/branch.ts";
import { textBlocks, toolCallsOf, pathArgument } from "../../../src/strategies/shared/conversation.ts";
import { planCheckpoint, type CheckpointOptions } from "../../../src/strategies/checkpoint/planner.ts";
import { isGeneratedLine, unescapeLine } from "../../../src/strategies/checkpoint/render.ts";
import { compactionInput, type CompactionInput } from "../../../src/strategies/contract.ts";
import { ledgerArb, type GeneratedLedger } from "../../arbitraries/index.ts";

const CWD = "/work/project";

function prepare(branch: SessionEntry[], keepRecentTokens: number) {
  return prepareCompaction(branch, { enabled: true, reserveTokens: 1_000, keepRecentTokens });
}

/** Instruction text naming every other path the branch reads, so startup-read selection has work to do. */
function instructions(branch: readonly SessionEntry[]) {
  const paths = branch
    .flatMap((e) => (e.type === "message" ? toolCallsOf(e.message) : []))
    .flatMap((c) => pathArgument(c.arguments) ?? []);
  return [{ path: `${CWD}/AGENTS.md`, content: paths.filter((_, i) => i % 2 === 0).join("\n") }];
}

function inputOf(branch: SessionEntry[], keep: number, contextWindow: number): CompactionInput | undefined {
  const prep = prepare(branch, keep);
  if (!prep) return undefined;
  return compactionInput(prep, { branch, contextWindow, cwd: CWD, contextFiles: instructions(branch) });
}

/** Every line of text the branch holds: message texts, tool outputs, summaries and edit replacements. */
function sourceLines(branch: readonly SessionEntry[]): Set<string> {
  const lines = new Set<string>();
  const add = (text: unknown) => {
    if (typeof text === "string") for (const line of text.split("\n")) lines.add(line);
  };
  for (const entry of branch) {
    if (entry.type === "message") {
      const m = entry.message as { content?: unknown };
      for (const text of textBlocks(m.content)) add(text);
      // A user message's text blocks are joined by newlines, so its joined text is a source too.
      add(textBlocks(m.content).join("\n"));
    } else if (entry.type === "custom_message") add(textBlocks(entry.content).join("\n"));
    else if (entry.type === "branch_summary" || entry.type === "compaction") add(entry.summary);
    else if (entry.type === "context_edit" && entry.replacement)
      for (const text of textBlocks(entry.replacement.content)) add(text);
  }
  return lines;
}

const optionsArb: fc.Arbitrary<CheckpointOptions> = fc.record({
  capPercent: fc.option(fc.integer({ min: 1, max: 40 }), { nil: null }),
  startupReads: fc.boolean(),
});
const caseArb = fc.record({
  ledger: ledgerArb({ minCommands: 4 }),
  keep: fc.integer({ min: 0, max: 3_000 }),
  contextWindow: fc.integer({ min: 1_000, max: 60_000 }),
  options: optionsArb,
});

function branchOf(ledger: GeneratedLedger): SessionEntry[] {
  return branchTo(ledger.entries, ledger.leafId);
}

describe("checkpoint invariants on generated ledgers", () => {
  it("6: every surviving non-marker line equals a source line byte for byte (escaped lines once unescaped)", () => {
    fc.assert(
      fc.property(caseArb, ({ ledger, keep, contextWindow, options }) => {
        const branch = branchOf(ledger);
        const input = inputOf(branch, keep, contextWindow);
        fc.pre(input !== undefined);
        const { summary } = planCheckpoint(input!, options);
        const sources = sourceLines(branch);
        // A copied line that could pass for structure is escaped reversibly; its original must be a source line.
        const stray = summary.split("\n").filter((line) => !isGeneratedLine(line) && !sources.has(unescapeLine(line)));
        if (stray.length) throw new Error(`lines with no source: ${JSON.stringify(stray.slice(0, 3))}`);
      }),
    );
  });

  it("8: the same input gives byte-identical output", () => {
    fc.assert(
      fc.property(caseArb, ({ ledger, keep, contextWindow, options }) => {
        const branch = branchOf(ledger);
        const input = inputOf(branch, keep, contextWindow);
        fc.pre(input !== undefined);
        const a = JSON.stringify(planCheckpoint(input!, options));
        const b = JSON.stringify(planCheckpoint(structuredClone(input!), { ...options }));
        return a === b;
      }),
    );
  });

  it("5: the context up to checkpoint k is byte-identical before and after checkpoint k+1", () => {
    fc.assert(
      fc.property(
        caseArb,
        fc.nat(),
        fc.integer({ min: 0, max: 3_000 }),
        ({ ledger, keep, contextWindow }, splitPick, keep2) => {
          const branch = branchOf(ledger);
          fc.pre(branch.length > 4);
          const split = 2 + (splitPick % (branch.length - 2));
          const first = branch.slice(0, split);
          const input1 = inputOf(first, keep, contextWindow);
          fc.pre(input1 !== undefined);
          const rest = branch.slice(split);
          // A native compaction after ours would start a new chain; the invariant is about our chain.
          fc.pre(!rest.some((e) => e.type === "compaction"));
          const uncapped: CheckpointOptions = { capPercent: null, startupReads: true };
          const plan1 = planCheckpoint(input1!, uncapped);
          const compaction = {
            type: "compaction",
            id: "ckpt0001",
            parentId: first[first.length - 1].id,
            timestamp: first[first.length - 1].timestamp,
            summary: plan1.summary,
            firstKeptEntryId: plan1.firstKeptEntryId,
            tokensBefore: plan1.tokensBefore,
            details: plan1.details,
            fromHook: true,
          } as SessionEntry;
          const continued = rest.map((e, i) => (i === 0 ? { ...e, parentId: compaction.id } : e));
          const second = [...first, compaction, ...continued];
          const input2 = inputOf(second, keep2, contextWindow);
          fc.pre(input2 !== undefined);
          const plan2 = planCheckpoint(input2!, uncapped);
          const end = plan1.summary.lastIndexOf("</span>") + "</span>".length;
          const prefix = plan1.summary.slice(0, end);
          if (!plan2.summary.startsWith(prefix))
            throw new Error("checkpoint k+1 rewrote the context up to checkpoint k");
        },
      ),
    );
  });

  it("cap bound: spans fit the budget left after fixed overhead (at least 500 characters), unless nothing is left to trim", () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 1, max: 40 }), ({ ledger, keep, contextWindow, options }, capPercent) => {
        const branch = branchOf(ledger);
        const input = inputOf(branch, keep, contextWindow);
        fc.pre(input !== undefined);
        const { summary } = planCheckpoint(input!, { ...options, capPercent });
        const lines = summary.split("\n");
        const first = lines.findIndex((l) => l.startsWith("<span "));
        const last = lines.lastIndexOf("</span>");
        const chars = (from: number, to: number) => lines.slice(from, to).reduce((sum, l) => sum + l.length + 1, 0);
        const spanChars = chars(first, last + 2);
        const overhead = chars(0, lines.length) - spanChars;
        const budget = Math.floor((contextWindow * capPercent) / 100) * 4;
        const itemsLeft = lines
          .slice(first, last)
          .some((l) => /^\[(user|assistant|call|custom|fold|shell|branch-summary|message)[ ;]/.test(l));
        return spanChars <= Math.max(budget - overhead, 500) || !itemsLeft;
      }),
    );
  });
});
