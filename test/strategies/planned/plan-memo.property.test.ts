// The planned planner's memos and counted structures against the from-scratch computations they replace: a
// compaction's ranking and applied plan (read once per reading, shared by the lab's two rows), block keys compared
// by hash, markers parsed and sized without a regex, the kind code, the numbered prompt and the rendered summary.
// None may go stale or differ by a byte, on any seed.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
// Pi does not export its preparation step; the tests use it to get real boundaries.
import { prepareCompaction } from "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/compaction/compaction.js";
import { branchTo, indexById } from "../../../src/log/branch.ts";
import { projectBranch } from "../../../src/projection/project.ts";
import { LEDGER_FACTS } from "../../../src/strategies/catalog.ts";
import { compactionInput, type CompactionInput, type CompactionPlan } from "../../../src/strategies/contract.ts";
import { PlanError } from "../../../src/strategies/shared/fallback.ts";
import {
  applyPlan,
  type PlanRange,
  regionTarget,
  render,
  type RetentionOptions,
  validateRanges,
} from "../../../src/strategies/planned/apply.ts";
import { contentKey, KeyCursor, KeySet, keyHash, rankDeletions } from "../../../src/strategies/planned/heuristic.ts";
import { buildPlannerPrompt, PLANNER_SYSTEM, protectedRuns } from "../../../src/strategies/planned/model-plan.ts";
import {
  heuristicRanking,
  laterContextOf,
  planHeuristic,
  planPlanned,
  transcriptOf,
} from "../../../src/strategies/planned/planner.ts";
import { scriptedPlanner } from "../../../src/strategies/planned/scripted.ts";
import {
  encodeKinds,
  markerCount,
  markerLength,
  markerText,
  type LineKind,
  type TranscriptLine,
} from "../../../src/strategies/planned/transcript.ts";
import { ledgerArb } from "../../arbitraries/index.ts";
import type { GeneratedLedger } from "../../arbitraries/ledger.ts";
import { runs } from "../../support/fast-check.ts";

function lastBranch(ledger: GeneratedLedger): SessionEntry[] {
  const entries: SessionEntry[] = [];
  let leaf: string | null = null;
  for (const step of ledger.steps) {
    if (step.kind === "append") {
      entries.push(step.entry);
      leaf = step.entry.id;
    } else leaf = step.leafId;
  }
  return branchTo(entries, leaf, indexById(entries));
}

function inputOf(branch: SessionEntry[], keep: number): CompactionInput | undefined {
  const prep = prepareCompaction(branch, { enabled: true, reserveTokens: 1_000, keepRecentTokens: keep });
  if (!prep) return undefined;
  return compactionInput(prep, { branch, contextWindow: 100_000, cwd: "/p" });
}

/** A plan, or the category of the PlanError it threw. */
function outcome(run: () => CompactionPlan | { summary: string }): { summary: string } | { error: string } {
  try {
    return { summary: run().summary };
  } catch (error) {
    if (error instanceof PlanError) return { error: error.category };
    throw error;
  }
}

async function outcomeAsync(run: () => Promise<CompactionPlan>): Promise<{ summary: string } | { error: string }> {
  try {
    return { summary: (await run()).summary };
  } catch (error) {
    if (error instanceof PlanError) return { error: error.category };
    throw error;
  }
}

const retentionArb: fc.Arbitrary<RetentionOptions> = fc.record({
  retainRatio: fc.constantFrom(0.2, 0.5, 0.8),
  minRetainedTokens: fc.constantFrom(0, 50),
  minSavedTokens: fc.constantFrom(0, 10),
});

describe("a compaction's ranking and applied plan, read once", () => {
  it("equal the from-scratch ranking and application, for either planner, other retentions and other ranges", async () => {
    await fc.assert(
      fc.asyncProperty(
        ledgerArb({ minCommands: 4 }),
        fc.integer({ min: 0, max: 3_000 }),
        retentionArb,
        retentionArb,
        fc.nat(),
        async (ledger, keep, first, second, pick) => {
          const branch = lastBranch(ledger);
          const input = inputOf(branch, keep);
          fc.pre(input !== undefined);
          // From scratch: the whole branch projected, fresh copies of the lines (no memo can recognise them).
          const fresh = () => {
            const projection = projectBranch(input!.branch, LEDGER_FACTS);
            return {
              lines: structuredClone(transcriptOf(input!, projection)),
              later: structuredClone(laterContextOf(input!, projection)),
            };
          };
          const scratch = fresh();
          const ranking = rankDeletions(scratch.lines, scratch.later);
          expect(heuristicRanking(input!)).toEqual(ranking);
          // What the planner must answer, from scratch: too small a region is refused before any plan, a model
          // answering no range has no plan, and any other plan is applied to fresh lines.
          const expected = (options: RetentionOptions, ranges: readonly PlanRange[] = ranking, model = false) => {
            const lines = fresh().lines;
            const { regionTokens } = regionTarget(lines, options);
            if (regionTokens - options.minRetainedTokens < Math.max(options.minSavedTokens, 1))
              return { error: "too-small" };
            if (model && !ranges.length) return { error: "empty" };
            return outcome(() => applyPlan(lines, ranges, options));
          };
          const signal = new AbortController().signal;
          // The heuristic row, then the scripted model row over the same compaction, as the lab runs them.
          expect(outcome(() => planHeuristic(input!, first))).toEqual(expected(first));
          const model = { ...input!, complete: scriptedPlanner(input!) };
          expect(await outcomeAsync(() => planPlanned(model, { ...first, planner: "model" }, signal))).toEqual(
            expected(first, ranking, true),
          );
          // Another retention over the same reading, then a model answering other ranges: never the memoized plan.
          expect(outcome(() => planHeuristic(input!, second))).toEqual(expected(second));
          const others = ranking.filter((_, i) => (pick >>> (i % 30)) & 1).reverse();
          const answer = {
            ...input!,
            complete: async () => ({
              text: "",
              toolCalls: [
                {
                  name: "submit_deletion_plan",
                  arguments: { ranges: others.map((r) => ({ start: r.from, end: r.to })) },
                },
              ],
            }),
          };
          const got = await outcomeAsync(() => planPlanned(answer, { ...second, planner: "model" }, signal));
          expect(got).toEqual(expected(second, others, true));
          // Another reading of the same region (its line objects are the ones read above), with a kept tail that now
          // repeats a region output: the ranking follows the new tail, and the plan the new ranking.
          const output = input!.messagesToSummarize.find((m) => m.role === "toolResult");
          const extra = {
            type: "message",
            id: "extra",
            parentId: input!.branch.at(-1)?.id ?? null,
            timestamp: "2025-01-01T00:00:00.000Z",
            message: { ...(output ?? { role: "user", content: "more", timestamp: 0 }), toolCallId: "extra-call" },
          } as unknown as SessionEntry;
          const grown: CompactionInput = { ...input!, branch: [...input!.branch, extra] };
          const grownScratch = (() => {
            const projection = projectBranch(grown.branch, LEDGER_FACTS);
            return {
              lines: structuredClone(transcriptOf(grown, projection)),
              later: structuredClone(laterContextOf(grown, projection)),
            };
          })();
          const grownRanking = rankDeletions(grownScratch.lines, grownScratch.later);
          expect(heuristicRanking(grown)).toEqual(grownRanking);
          expect(outcome(() => planHeuristic(grown, first))).toEqual(expected(first, grownRanking));
          // The region edited in place: a message dropped; the ranking and the plan follow it.
          const messages = input!.messagesToSummarize as AgentMessage[];
          if (messages.length) messages.splice(pick % messages.length, 1);
          const edited = fresh();
          const rankingAfter = rankDeletions(edited.lines, edited.later);
          expect(heuristicRanking(input!)).toEqual(rankingAfter);
          expect(outcome(() => planHeuristic(input!, first))).toEqual(expected(first, rankingAfter));
        },
      ),
      { numRuns: runs(0.25) },
    );
  });
});

/** Text that exercises the key's normalization: blanks of every kind, digit runs, lines that vanish. */
const keyTextArb = fc
  .array(
    fc.constantFrom(
      "a",
      "b",
      "Z",
      "7",
      "42",
      " ",
      "  ",
      "\t",
      "\r",
      "\u00a0",
      "\u2003",
      "\u3000",
      "\ufeff",
      "—",
      "é",
      "#",
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(""));

const keyLinesArb: fc.Arbitrary<TranscriptLine[]> = fc.array(
  fc.oneof(
    keyTextArb.map((text): TranscriptLine => ({ text, kind: "text" })),
    fc.integer({ min: 1, max: 30 }).map((n): TranscriptLine => ({ text: markerText(n), kind: "marker" })),
  ),
  { maxLength: 12 },
);

function cursorText(lines: readonly TranscriptLine[], start: number, end: number): string {
  const cursor = new KeyCursor(lines, start, end);
  const codes: number[] = [];
  for (let c = cursor.next(); c >= 0; c = cursor.next()) codes.push(c);
  return String.fromCharCode(...codes);
}

describe("block keys compared by hash", () => {
  it("read the characters of the key text, and hash equal keys alike", () => {
    fc.assert(
      fc.property(keyLinesArb, keyLinesArb, (a, b) => {
        expect(cursorText(a, 0, a.length)).toBe(contentKey(a, 0, a.length));
        const keyA = contentKey(a, 0, a.length);
        const keyB = contentKey(b, 0, b.length);
        expect(keyHash(a, 0, a.length) < 0).toBe(keyA === "");
        if (keyA === keyB) expect(keyHash(a, 0, a.length)).toBe(keyHash(b, 0, b.length));
        // A set told only the hash (here forced equal) still tells different keys apart by their text.
        const set = new KeySet();
        expect(set.add({ lines: a, start: 0, end: a.length, hash: 1 })).toBe(false);
        expect(set.add({ lines: b, start: 0, end: b.length, hash: 1 })).toBe(keyA === keyB);
        expect(set.add({ lines: b, start: 0, end: b.length, hash: 1 })).toBe(true);
      }),
    );
  });
});

const MARKER = /^\[compacted: (\d{1,12}) lines? removed\]$/;

describe("markers read and sized without a regex", () => {
  it("parse as the marker syntax does, and size as their text", () => {
    const pieceArb = fc.constantFrom(
      "[compacted: ",
      "[compacted:",
      "1",
      "0",
      "99",
      "123456789012",
      " line",
      " lines",
      "s",
      " removed]",
      " removed] ",
      "x",
      "\n",
    );
    fc.assert(
      fc.property(fc.array(pieceArb, { maxLength: 7 }), fc.nat(999_999_999_999), (pieces, count) => {
        const text = pieces.join("");
        const match = MARKER.exec(text);
        expect(markerCount(text)).toBe(match ? Number(match[1]) : undefined);
        expect(markerCount(markerText(count))).toBe(count);
        expect(markerLength(count)).toBe(markerText(count).length);
      }),
    );
  });
});

/** `encodeKinds` as it was written first: one string appended per run. */
function kindsReference(kinds: readonly LineKind[]): string {
  const code: Record<LineKind, string> = { structure: "s", text: "t", pinned: "p", marker: "m" };
  let out = "";
  for (let i = 0; i < kinds.length; ) {
    let j = i;
    while (j < kinds.length && kinds[j] === kinds[i]) j++;
    out += `${code[kinds[i]]}${j - i}`;
    i = j;
  }
  return out;
}

describe("the kind code", () => {
  it("is the run-length code, for runs of any length and codes longer than one decoded chunk", () => {
    const kindArb = fc.constantFrom<LineKind>("structure", "text", "pinned", "marker");
    fc.assert(
      fc.property(fc.array(fc.tuple(kindArb, fc.integer({ min: 1, max: 1_200 })), { maxLength: 30 }), (runs) => {
        const kinds = runs.flatMap(([kind, n]) => Array.from({ length: n }, () => kind));
        expect(encodeKinds(kinds)).toBe(kindsReference(kinds));
      }),
    );
    // More than 8,192 characters of code: every line its own run.
    const alternating = Array.from({ length: 9_000 }, (_, i): LineKind => (i % 2 ? "text" : "structure"));
    expect(encodeKinds(alternating)).toBe(kindsReference(alternating));
  });
});

/** The prompt's numbered transcript as it was written first: one string per line, all joined. */
function numberedReference(lines: readonly TranscriptLine[]): string {
  const parts = ["<transcript>"];
  for (let i = 0; i < lines.length; i++) parts.push(`${i + 1}| ${lines[i].text}`);
  parts.push("</transcript>");
  return parts.join("\n");
}

const lineArb: fc.Arbitrary<TranscriptLine> = fc.record({
  text: fc.string({ maxLength: 20 }),
  kind: fc.constantFrom<LineKind>("structure", "text", "pinned", "marker"),
});

describe("the planner prompt", () => {
  it("numbers every line as one string per line would, past the numbers it keeps made", () => {
    const check = (lines: readonly TranscriptLine[]) => {
      const { prompt, system } = buildPlannerPrompt(lines, { regionTokens: 10, targetTokens: 5 });
      expect(system).toBe(PLANNER_SYSTEM);
      expect(prompt.endsWith(`\n${numberedReference(lines)}`)).toBe(true);
      expect(prompt).toContain(
        `Protected lines are never deleted even if your ranges cover them: ${protectedRuns(lines)}.`,
      );
    };
    fc.assert(fc.property(fc.array(lineArb, { maxLength: 40 }), check));
    // Twice over more lines than the kept numbers: the made ones and the ones made each time.
    const many = Array.from({ length: 17_000 }, (_, i): TranscriptLine => ({ text: `l${i % 97}`, kind: "text" }));
    check(many);
    check(many);
  });
});

/** `render` as it was written first: pushed lists, a marker flushed before each surviving line. */
function renderReference(lines: readonly TranscriptLine[], removed: readonly boolean[]) {
  const out = [
    "[planned compaction: earlier conversation kept line for line; [compacted: N lines removed] marks removed runs]",
  ];
  const kinds: LineKind[] = [];
  const body: TranscriptLine[] = [];
  let pending = 0;
  const flush = () => {
    if (pending > 0) {
      out.push(markerText(pending));
      kinds.push("marker");
      body.push({ text: markerText(pending), kind: "marker" });
    }
    pending = 0;
  };
  lines.forEach((line, i) => {
    if (line.kind === "marker") pending += markerCount(line.text) ?? 0;
    else if (removed[i]) pending += 1;
    else {
      flush();
      out.push(line.text);
      kinds.push(line.kind);
      body.push(line);
    }
  });
  flush();
  return { summary: out.join("\n"), kinds, body };
}

describe("the rendered summary", () => {
  it("is the pushed rendering, markers of zero and unparsed markers included", () => {
    const markerLineArb = fc.oneof(
      fc.integer({ min: 0, max: 12 }).map((n): TranscriptLine => ({ text: markerText(n), kind: "marker" })),
      fc.constant<TranscriptLine>({ text: "not a marker", kind: "marker" }),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(lineArb, markerLineArb), fc.boolean()), { maxLength: 40 }), (rows) => {
        const lines = rows.map(([line]) => line);
        const removed = rows.map(([, r]) => r);
        expect(render(lines, removed)).toEqual(renderReference(lines, removed));
        expect(render(lines, Uint8Array.from(removed, Number))).toEqual(renderReference(lines, removed));
      }),
    );
  });
});

describe("validated ranges", () => {
  it("keep the first of each exact duplicate, in rank order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 3 })), { maxLength: 20 }),
        (pairs) => {
          const ranges = pairs.map(([from, span]) => ({ from, to: from + span }));
          const seen = new Set<string>();
          const expected = ranges.filter((r) => {
            const key = `${r.from},${r.to}`;
            if (seen.has(key)) return false;
            seen.add(key);
            return true;
          });
          expect(validateRanges(ranges, 9)).toEqual(expected);
        },
      ),
    );
  });
});
