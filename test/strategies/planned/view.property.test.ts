// The planner's memoized view (src/strategies/planned/view.ts) and its counted region size (apply.ts) against the
// from-scratch computations they replace: `projectBranch`, `reduceBranch`, `lookupOf` and the rendered summary.
// The memo must never go stale: branches that grow, jump with /tree, interleave, or are edited in place.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
// Pi does not export its preparation step; the tests use it to get real boundaries.
import { prepareCompaction } from "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/compaction/compaction.js";
import { branchTo, indexById } from "../../../src/log/branch.ts";
import { reduceBranch } from "../../../src/projection/ledger-state.ts";
import { lookupOf, projectBranch } from "../../../src/projection/project.ts";
import { LEDGER_FACTS } from "../../../src/strategies/catalog.ts";
import type { CompactionEntry } from "../../../src/log/entries.ts";
import { compactionInput, type CompactionInput, type CompactionPlan } from "../../../src/strategies/contract.ts";
import { PlanError } from "../../../src/strategies/shared/fallback.ts";
import {
  laterContextOf,
  planHeuristic,
  transcriptOf,
  type PlannedDetails,
} from "../../../src/strategies/planned/planner.ts";
import { regionTarget, render, renderedLength } from "../../../src/strategies/planned/apply.ts";
import {
  buildTranscript,
  headerOf,
  markerText,
  parseHeader,
  priorLines,
  readPriorLines,
  type LineKind,
  type TranscriptLine,
} from "../../../src/strategies/planned/transcript.ts";
import { backwardLookup } from "../../../src/projection/project.ts";
import { BranchViews } from "../../../src/strategies/planned/view.ts";
import { estimateTextTokens } from "../../../src/projection/tokens.ts";
import { blocksOf, normalized, rankDeletions } from "../../../src/strategies/planned/heuristic.ts";
import { ledgerArb } from "../../arbitraries/index.ts";
import type { GeneratedLedger } from "../../arbitraries/ledger.ts";

/** The active branch after each step of a generated ledger (appends and /tree moves), in order. */
function branchesOf(ledger: GeneratedLedger): SessionEntry[][] {
  const entries: SessionEntry[] = [];
  let leaf: string | null = null;
  const out: SessionEntry[][] = [];
  for (const step of ledger.steps) {
    if (step.kind === "append") {
      entries.push(step.entry);
      leaf = step.entry.id;
    } else leaf = step.leafId;
    out.push(branchTo(entries, leaf, indexById(entries)));
  }
  return out;
}

function expectView(views: BranchViews, branch: readonly SessionEntry[]) {
  expect(views.state(branch, LEDGER_FACTS)).toEqual(reduceBranch(branch, LEDGER_FACTS));
  expect(views.view(branch, LEDGER_FACTS)).toEqual(projectBranch(branch, LEDGER_FACTS).entries);
}

describe("the planner's memoized view", () => {
  it("equals projectBranch and reduceBranch after every append and /tree move", () => {
    fc.assert(
      fc.property(ledgerArb(), fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }), (ledger, ask) => {
        const views = new BranchViews();
        branchesOf(ledger).forEach((branch, i) => {
          if (ask[i % ask.length]) expectView(views, branch);
        });
      }),
    );
  });

  it("keeps two interleaved ledgers apart, with fewer slots than ledgers", () => {
    fc.assert(
      fc.property(ledgerArb({ maxCommands: 30 }), ledgerArb({ maxCommands: 30 }), fc.nat(3), (a, b, slots) => {
        const views = new BranchViews(slots + 1);
        const left = branchesOf(a);
        const right = branchesOf(b);
        for (let i = 0; i < Math.max(left.length, right.length); i++) {
          if (i < left.length) expectView(views, left[i]);
          if (i < right.length) expectView(views, right[i]);
        }
      }),
    );
  });

  it("notices a branch edited in place after it was read", () => {
    fc.assert(
      fc.property(ledgerArb({ minCommands: 4 }), ledgerArb({ minCommands: 2 }), fc.nat(), (ledger, other, pick) => {
        const views = new BranchViews();
        const branches = branchesOf(ledger);
        const branch = branches[branches.length - 1].slice();
        fc.pre(branch.length >= 2);
        expectView(views, branch);
        // The same array, one entry swapped for another ledger's (ids and facts differ), then one dropped.
        const donor = other.entries[pick % other.entries.length];
        branch[pick % branch.length] = donor;
        expectView(views, branch);
        branch.splice(pick % branch.length, 1);
        expectView(views, branch);
      }),
    );
  });
});

describe("the lookup that reads from the end", () => {
  it("answers every id as lookupOf does, duplicates and absent ids included, in any order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("a", "b", "c", "d", "e", "f"), { maxLength: 30 }),
        fc.array(fc.constantFrom("a", "b", "c", "d", "e", "f", "z"), { maxLength: 20 }),
        (ids, asks) => {
          const path = ids.map((id, i) => ({ id, n: i }) as unknown as SessionEntry);
          const fast = backwardLookup(path);
          const reference = lookupOf(path);
          for (const id of asks) {
            expect(fast.indexOf(id)).toBe(reference.indexOf(id));
            expect(fast.get(id)).toBe(reference.get(id));
          }
        },
      ),
    );
  });
});

const lineArb: fc.Arbitrary<TranscriptLine> = fc.oneof(
  fc.record({
    text: fc.string({ maxLength: 12 }),
    kind: fc.constantFrom<LineKind>("text", "structure", "pinned"),
  }),
  fc.nat(1_000).map((n): TranscriptLine => ({ text: markerText(n), kind: "marker" })),
  // A marker line whose text is not a marker counts nothing, as in the render.
  fc.string({ maxLength: 6 }).map((text): TranscriptLine => ({ text, kind: "marker" })),
);

describe("the region's counted size", () => {
  it("is the length of the rendered summary, for any lines and deletion mask", () => {
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 40 }), fc.array(fc.boolean(), { maxLength: 40 }), (lines, mask) => {
        expect(renderedLength(lines, mask)).toBe(render(lines, mask).summary.length);
        expect(renderedLength(lines)).toBe(render(lines, []).summary.length);
      }),
    );
  });

  it("gives the region and target the rendered region gives", () => {
    fc.assert(
      fc.property(
        fc.array(lineArb, { maxLength: 40 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.nat(50),
        (lines, retainRatio, minRetainedTokens) => {
          const regionTokens = estimateTextTokens(render(lines, []).summary);
          expect(regionTarget(lines, { retainRatio, minRetainedTokens })).toEqual({
            regionTokens,
            targetTokens: Math.max(Math.ceil(regionTokens * retainRatio), minRetainedTokens),
          });
        },
      ),
    );
  });
});

describe("the near-duplicate key's line normalization", () => {
  it("equals trim, blank runs to one space and digit runs to #, on any text", () => {
    const blank = fc.constantFrom(" ", "  ", "\t", "\n", "\r", "\u00a0", "\u2028", "\ufeff", "\u3000", "\v");
    const piece = fc.oneof(fc.string({ maxLength: 6 }), blank, fc.constantFrom("0", "42", "x1y", "٣"));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join("");
        expect(normalized(text)).toBe(text.trim().replace(/\s+/g, " ").replace(/\d+/g, "#"));
      }),
    );
  });
});

function inputOf(branch: SessionEntry[], keep: number): CompactionInput | undefined {
  const prep = prepareCompaction(branch, { enabled: true, reserveTokens: 1_000, keepRecentTokens: keep });
  if (!prep) return undefined;
  return compactionInput(prep, { branch, contextWindow: 100_000, cwd: "/p" });
}

/** The reading from scratch: the whole branch projected, as before the memo. */
function fromScratch(input: CompactionInput) {
  const projection = projectBranch(input.branch, LEDGER_FACTS);
  return { lines: transcriptOf(input, projection), later: laterContextOf(input, projection) };
}

describe("the planner's reading of a compaction", () => {
  it("equals the whole-branch reading, for a second input of the same compaction, and after edits in place", () => {
    fc.assert(
      fc.property(ledgerArb({ minCommands: 4 }), fc.integer({ min: 0, max: 3_000 }), fc.nat(), (ledger, keep, pick) => {
        const branches = branchesOf(ledger);
        const branch = branches[branches.length - 1].slice();
        const input = inputOf(branch, keep);
        fc.pre(input !== undefined);
        const check = (i: CompactionInput) => {
          const expected = fromScratch(i);
          expect(transcriptOf(i)).toEqual(expected.lines);
          expect(laterContextOf(i)).toEqual(expected.later);
        };
        check(input!);
        // The lab's scripted model reads an input with the same lists, then the planner reads its own.
        check({ ...input!, contextFiles: [] });
        // The same arrays edited in place: an entry of the branch swapped for another of the file (maybe off the branch),
        // then a message dropped from the region.
        branch[pick % branch.length] = ledger.entries[pick % ledger.entries.length];
        check(input!);
        const messages = input!.messagesToSummarize as AgentMessage[];
        if (messages.length) messages.splice(pick % messages.length, 1);
        check(input!);
      }),
    );
  });
});

/** A planned compaction entry as the lab and Pi store it, from a plan. */
function entryOf(plan: CompactionPlan, details: unknown = plan.details): CompactionEntry {
  return {
    type: "compaction",
    id: "c1",
    parentId: null,
    timestamp: "2025-01-01T00:00:00.000Z",
    summary: plan.summary,
    firstKeptEntryId: plan.firstKeptEntryId,
    tokensBefore: plan.tokensBefore,
    details,
  } as CompactionEntry;
}

describe("a planned summary read back as the next prior", () => {
  it("gives the lines the long reading gives, and the long reading once its provenance is touched", () => {
    fc.assert(
      fc.property(
        ledgerArb({ minCommands: 4 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.constantFrom("none", "digest", "kinds", "version", "text"),
        (ledger, keep, touch) => {
          const branches = branchesOf(ledger);
          const input = inputOf(branches[branches.length - 1], keep);
          fc.pre(input !== undefined);
          let plan: CompactionPlan;
          try {
            plan = planHeuristic(input!, { retainRatio: 0.5, minRetainedTokens: 0, minSavedTokens: 0 });
          } catch (error) {
            if (error instanceof PlanError) return;
            throw error;
          }
          const details = structuredClone(plan.details) as PlannedDetails;
          if (touch === "digest") details.provenance.digest = "00000000000000";
          if (touch === "kinds") details.provenance.kinds = `${details.provenance.kinds}t1`;
          if (touch === "version") (details as { v: unknown }).v = 2;
          const entry = entryOf(plan, details);
          if (touch === "text") entry.summary = `${plan.summary}\n[user]`;
          expect(priorLines(entry)).toEqual(readPriorLines(entry));
        },
      ),
    );
  });
});

describe("the heuristic's memoized parses and keys", () => {
  it("ranks a region sharing line objects with an earlier one as it ranks fresh copies of it", () => {
    fc.assert(
      fc.property(
        ledgerArb({ minCommands: 4 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (ledger, keep, drops) => {
          const branches = branchesOf(ledger);
          const input = inputOf(branches[branches.length - 1], keep);
          fc.pre(input !== undefined);
          const lines = transcriptOf(input!);
          const later = laterContextOf(input!);
          rankDeletions(lines, later);
          // The next region shares this one's line objects, but for changes under some headers:
          const next = lines.slice();
          // some lines gone, some replaced by an edited copy (a block of the same length under the same header).
          for (const d of drops) {
            if (!next.length) break;
            const at = d % next.length;
            if (d % 2) next.splice(at, 1);
            else next[at] = { ...next[at], text: `${next[at].text} 7` };
          }
          const fresh = structuredClone(next);
          expect(rankDeletions(next, later)).toEqual(rankDeletions(fresh, structuredClone(later)));
          expect(blocksOf(next)).toEqual(blocksOf(fresh));
          for (const line of next) expect(headerOf(line)).toEqual(parseHeader(line.text));
        },
      ),
    );
  });
});

describe("messages serialized once", () => {
  it("give the lines fresh copies give, whatever calls the transcript is built with", () => {
    fc.assert(
      fc.property(ledgerArb({ minCommands: 4 }), fc.nat(), (ledger, cut) => {
        const messages = branchesOf(ledger)
          .at(-1)!
          .flatMap((e) => (e.type === "message" ? [e.message as AgentMessage] : []));
        // Once with every call in view, then a part without the calls before it (result headers lose their names).
        const tail = messages.slice(cut % (messages.length + 1));
        expect(buildTranscript({ messages })).toEqual(buildTranscript({ messages: structuredClone(messages) }));
        expect(buildTranscript({ messages: tail })).toEqual(buildTranscript({ messages: structuredClone(tail) }));
        expect(buildTranscript({ messages })).toEqual(buildTranscript({ messages: structuredClone(messages) }));
      }),
    );
  });
});
