// The checkpoint planner keeps what it reads from the whole branch (positions, raw call pairing, latest edits, prior
// compactions and what their details hold) per branch, found again by its entries and brought up to date as it grows; preserve's step-boundary
// decision looks the step up in the delta's kept index and reads the row's live view. These properties drive one
// array the way the host and the lab's rows do (appended at the leaf, cut back and extended by a `/tree` jump), with
// checkpoint and native compactions carrying stored spans and file lists (some of them damaged), and compare every
// answer with the computation from scratch: the whole-branch passes the planner made before, written out here, and
// the same call on copies of the array (as Pi hands each compaction one) and on new entry objects (no index to reuse).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { CompactionEntry, SessionEntry } from "../../../src/log/entries.ts";
import { reduceBranch } from "../../../src/projection/ledger-state.ts";
import { projectBranch } from "../../../src/projection/project.ts";
import { LEDGER_FACTS } from "../../../src/strategies/catalog.ts";
import { checkpointLookup } from "../../../src/strategies/checkpoint/branch-index.ts";
import { PrefixFold } from "../../../src/strategies/shared/branch-fold.ts";
import {
  isCheckpointCompaction,
  planCheckpoint,
  type CheckpointDetails,
} from "../../../src/strategies/checkpoint/planner.ts";
import type { CheckpointSpan, SpanItem } from "../../../src/strategies/checkpoint/spans.ts";
import { checkpointDue, limitBefore } from "../../../src/strategies/preserve/due.ts";
import {
  latestEdits,
  outcomeOf,
  pairCalls,
  rawEntries,
  toolCallsOf,
  type Outcome,
} from "../../../src/strategies/shared/conversation.ts";
import { entryBefore } from "../../../src/strategies/shared/delta.ts";
import { mergeFileLists } from "../../../src/strategies/shared/file-evidence.ts";
import { displayPath } from "../../../src/strategies/shared/paths.ts";
import { ledgerArb, pathArb, type GeneratedLedger } from "../../arbitraries/index.ts";
import { runs } from "../../support/fast-check.ts";
import { replayLivePath as replay } from "../../support/live-path.ts";
import { inputFor } from "./fixtures.ts";

const CWD = "/repo";

/** Details a stored compaction may carry: a checkpoint's spans and files, or Pi's file lists; some damaged. */
const itemArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({
    kind: fc.constantFrom("user", "other"),
    head: fc.string({ maxLength: 12 }),
    body: fc.array(fc.string({ maxLength: 30 }), { maxLength: 3 }),
  }),
  fc.constantFrom(null, { kind: "user", head: 3, body: [] }, { kind: "odd", head: "h", body: ["x"] }),
);
const spanArb: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ n: fc.nat(9), from: fc.constant(null), items: fc.array(itemArb, { maxLength: 3 }) }),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, { n: "1", items: [] }, { n: 2 }) },
);
const pathsArb = fc.array(fc.oneof(pathArb, fc.constant("/repo/src/a.ts"), fc.constant(7)), { maxLength: 3 });
const detailsArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({
    v: fc.constant(1),
    strategy: fc.constant("checkpoint"),
    spans: fc.oneof(
      { weight: 5, arbitrary: fc.array(spanArb, { maxLength: 2 }) },
      { weight: 1, arbitrary: fc.constant("no") },
    ),
    files: fc.record({ read: pathsArb, modified: pathsArb }),
    startupReads: fc.constantFrom(
      undefined,
      { closed: true, reads: [] },
      { closed: false, reads: [{ entryId: "x", path: "a" }] },
    ),
  }),
  fc.record({ readFiles: pathsArb, modifiedFiles: pathsArb }),
  fc.constantFrom(undefined, null, { v: 1, strategy: "planned" }),
);

/** The generated session with its compactions' details replaced by drawn ones (the same entry objects per run). */
function withDetails(ledger: GeneratedLedger, details: readonly unknown[]): GeneratedLedger {
  let k = 0;
  const swap = (entry: SessionEntry): SessionEntry =>
    entry.type === "compaction" ? ({ ...entry, details: details[k++ % details.length] } as SessionEntry) : entry;
  const byId = new Map<string, SessionEntry>();
  const steps = ledger.steps.map((step) => {
    if (step.kind !== "append") return step;
    const entry = swap(step.entry);
    byId.set(entry.id, entry);
    return { ...step, entry };
  });
  return { ...ledger, steps, entries: ledger.entries.map((e) => byId.get(e.id) ?? e) };
}

/** The same entries as new objects: an index found by its entries has nothing to reuse. */
function clone(path: readonly SessionEntry[]): SessionEntry[] {
  return path.map((entry) => structuredClone(entry));
}

/** The planner's whole-branch passes before it kept an index, written out. */
function plain(branch: readonly SessionEntry[], cwd: string) {
  const rawOutcome = new Map<string, Outcome>();
  const ambiguous = new Set<string>();
  for (const paired of pairCalls(rawEntries(branch))) {
    rawOutcome.set(`${paired.entryId}|${paired.call.id}`, outcomeOf(paired));
    if (paired.ambiguous) ambiguous.add(paired.call.id);
  }
  const compactions = branch.filter((entry): entry is CompactionEntry => entry.type === "compaction");
  let baseAt = -1;
  compactions.forEach((entry, i) => {
    if (!isCheckpointCompaction(entry)) baseAt = i;
  });
  const checkpoints = compactions.slice(baseAt + 1).filter(isCheckpointCompaction);
  const spans: CheckpointSpan[] = checkpoints.flatMap((entry) =>
    (entry.details as CheckpointDetails).spans.flatMap((span) => {
      const s = span as Partial<CheckpointSpan> | undefined;
      if (!s || typeof s.n !== "number" || !Array.isArray(s.items)) return [];
      const items = s.items.filter(
        (i: Partial<SpanItem> | null) =>
          !!i &&
          (i.kind === "user" || i.kind === "other") &&
          typeof i.head === "string" &&
          Array.isArray(i.body) &&
          i.body.every((l) => typeof l === "string"),
      );
      return [{ n: s.n, from: s.from ?? null, through: s.through ?? null, items }];
    }),
  );
  const list = (value: unknown) =>
    Array.isArray(value) ? value.filter((p): p is string => typeof p === "string").map((p) => displayPath(p, cwd)) : [];
  const files = mergeFileLists(
    ...compactions.map((entry) => {
      const d = entry.details as
        | { files?: { read?: unknown; modified?: unknown }; readFiles?: unknown; modifiedFiles?: unknown }
        | undefined;
      return d
        ? {
            read: [...list(d.files?.read), ...list(d.readFiles)],
            modified: [...list(d.files?.modified), ...list(d.modifiedFiles)],
          }
        : {};
    }),
  );
  const edits = latestEdits(branch);
  const replaced = new Set([...edits].filter(([, edit]) => edit.replacement !== null).map(([target]) => target));
  return { rawOutcome, ambiguous, compactions, base: compactions[baseAt], checkpoints, spans, files, edits, replaced };
}

const sessionArb = ledgerArb({
  maxCommands: 40,
  weights: { assistant: 8, user: 3, navigate: 1, compaction: 6, contextEdit: 2, fold: 1, restore: 1 },
});

describe("PrefixFold", () => {
  it("gives the fold of the whole array for copies, forks taken in turn, cut-back and replaced arrays", () => {
    const fold = new PrefixFold<string[]>(
      () => [],
      (ids, entry, i) => ids.push(`${i}:${entry.id}`),
    );
    const ids = (path: readonly SessionEntry[]) => path.map((e, i) => `${i}:${e.id}`);
    fc.assert(
      fc.property(sessionArb, (ledger) => {
        const kept: SessionEntry[][] = [];
        replay(ledger, (path, step) => {
          // Each call gets a fresh copy, as a compaction does; older copies (other forks) are asked again in turn.
          const copy = path.slice();
          kept.push(copy);
          expect(fold.of(copy)).toEqual(ids(copy));
          const older = kept[(step * 7) % kept.length];
          expect(fold.of(older)).toEqual(ids(older));
          expect(fold.of(clone(path))).toEqual(ids(path));
        });
      }),
      { numRuns: runs(0.5) },
    );
  });
});

describe("the checkpoint planner's branch index", () => {
  it("gives what whole-branch passes give, on a live path and on a fresh copy of it", () => {
    fc.assert(
      fc.property(sessionArb, fc.array(detailsArb, { minLength: 1, maxLength: 6 }), (generated, details) => {
        const ledger = withDetails(generated, details);
        replay(ledger, (path) => {
          const want = plain(path, CWD);
          for (const lookup of [
            checkpointLookup(path),
            checkpointLookup(path.slice()),
            checkpointLookup(clone(path)),
          ]) {
            expect([...lookup.ambiguous].sort()).toEqual([...want.ambiguous].sort());
            for (const entry of path) {
              if (entry.type !== "message") continue;
              for (const call of toolCallsOf(entry.message))
                expect(lookup.rawOutcome(entry.id, call.id)).toBe(
                  want.ambiguous.has(call.id)
                    ? "unknown"
                    : (want.rawOutcome.get(`${entry.id}|${call.id}`) ?? "unknown"),
                );
            }
            expect(lookup.rawOutcome("no such entry", "no such call")).toBe("unknown");
            expect([...lookup.edits]).toEqual([...want.edits]);
            expect([...lookup.replaced].sort()).toEqual([...want.replaced].sort());
            expect(lookup.compactions.map((c) => c.entry)).toEqual(want.compactions);
            expect(lookup.base?.entry).toEqual(want.base);
            // The ledger state folded fact by fact as the branch grows: the planner projects its view from it.
            expect(lookup.state).toEqual(reduceBranch(path, LEDGER_FACTS));
            for (const entry of path) expect(lookup.indexOf(entry.id)).toBe(path.findIndex((e) => e.id === entry.id));
            expect(lookup.indexOf("no such id")).toBe(-1);
            expect(lookup.unique).toBe(new Set(path.map((e) => e.id)).size === path.length);
            expect(lookup.checkpoints.map((c) => c.entry)).toEqual(want.checkpoints);
            expect(lookup.checkpoints.map((c) => c.startupReads)).toEqual(
              want.checkpoints.map((c) => c.details?.startupReads),
            );
            expect(lookup.chainSpans).toEqual(want.spans);
            expect(mergeFileLists(lookup.priorFiles(CWD))).toEqual(want.files);
            // Another cwd shows the same stored paths its own way.
            expect(mergeFileLists(lookup.priorFiles("/"))).toEqual(plain(path, "/").files);
          }
        });
      }),
      { numRuns: runs(0.25) },
    );
  });

  it("plans on a live path exactly as on a fresh copy, compactions of its own included", () => {
    fc.assert(
      fc.property(sessionArb, fc.nat(), fc.boolean(), (ledger, salt, capped) => {
        const options = { capPercent: capped ? 5 : null, startupReads: true };
        replay(ledger, (path, step) => {
          const users = path.filter((e) => e.type === "message" && e.message.role === "user");
          if (!users.length) return;
          const keep = users[(salt + step) % users.length].id;
          const live = planCheckpoint(inputFor(path, keep, { contextWindow: 8_000 }), options);
          // A copy of the array, as Pi hands each compaction, and new entry objects: nothing to reuse.
          const copy = planCheckpoint(inputFor(path.slice(), keep, { contextWindow: 8_000 }), options);
          const fresh = planCheckpoint(inputFor(clone(path), keep, { contextWindow: 8_000 }), options);
          expect(live).toEqual(fresh);
          expect(copy).toEqual(fresh);
        });
      }),
      { numRuns: runs(0.1) },
    );
  });

  it("stays exact while its own checkpoints join the branch", () => {
    fc.assert(
      fc.property(
        ledgerArb({ maxCommands: 30, weights: { assistant: 12, user: 4, compaction: 0 } }),
        fc.nat(),
        (ledger, salt) => {
          const live: SessionEntry[] = [];
          let n = 0;
          for (const step of ledger.steps) {
            if (step.kind !== "append" || step.entry.type === "compaction") continue;
            live.push(step.entry);
            const users = live.filter((e) => e.type === "message" && e.message.role === "user");
            if (users.length < 2 || (salt + live.length) % 5 !== 0) continue;
            const keep = users[users.length - 1].id;
            const plan = planCheckpoint(inputFor(live, keep, { contextWindow: 8_000 }), {
              capPercent: 10,
              startupReads: true,
            });
            expect(plan).toEqual(
              planCheckpoint(inputFor([...live], keep, { contextWindow: 8_000 }), {
                capPercent: 10,
                startupReads: true,
              }),
            );
            const want = plain(live, CWD);
            expect(checkpointLookup(live).chainSpans).toEqual(want.spans);
            live.push({
              type: "compaction",
              id: `own-${n++}`,
              parentId: live[live.length - 1].id,
              timestamp: "2026-01-01T00:00:00.000Z",
              summary: plan.summary,
              firstKeptEntryId: plan.firstKeptEntryId,
              tokensBefore: plan.tokensBefore,
              details: plan.details,
              fromHook: true,
            } as SessionEntry);
          }
          expect(checkpointLookup(live).chainSpans).toEqual(plain(live, CWD).spans);
        },
      ),
      { numRuns: runs(0.1) },
    );
  });
});

describe("preserve's step-boundary decision", () => {
  it("decides on a live path with the row's view as on a fresh copy projected from scratch", () => {
    fc.assert(
      fc.property(sessionArb, fc.nat(), fc.integer({ min: 0, max: 3_000 }), (ledger, salt, usage) => {
        replay(ledger, (path, step) => {
          if (!path.length) return;
          const stepEntryId = path[(salt + step) % path.length].id;
          const boundary = { stepEntryId, stopReason: "stop", drafts: [], usageTokens: usage, contextWindow: 4_000 };
          const view = () => projectBranch(path, LEDGER_FACTS).entries;
          const live = checkpointDue({ ...boundary, branch: path, view });
          const fresh = checkpointDue({ ...boundary, branch: [...path] });
          const open = (d: typeof live) => (d.due ? { ...d, delta: { ...d.delta, view: d.delta.view } } : d);
          expect(open(live)).toEqual(open(fresh));
          // The limit is the entry a scan from the root finds before the step.
          const limit = entryBefore(path, stepEntryId);
          expect(limitBefore(path, stepEntryId)).toBe(limit);
          expect(limitBefore(path, "no such id")).toBeUndefined();
          if (live.due) expect(live.delta.limitId).toBe(limit);
          else if (!limit) expect(["no boundary", "below threshold", "usage unknown"]).toContain(live.why);
        });
      }),
      { numRuns: runs(0.25) },
    );
  });
});
