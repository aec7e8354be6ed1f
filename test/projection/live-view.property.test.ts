// The live ledger's view, kept up to date across facts (extended entry by entry, re-projected from the first entry a
// new rule reaches), against one built from scratch: after any sequence of appends, facts and /tree moves, with the
// view read at some steps only, everything the view answers equals what a fresh ledger synced once to the same leaf
// answers, and what `projectBranch` gives.
import { afterEach, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { buildSessionProjection, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchTo } from "../../src/log/branch.ts";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import { projectBranch, SharedMessages } from "../../src/projection/project.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";
import { buildLedger, type GeneratedLedger, ledgerArb, type ToolCallSpec } from "../arbitraries/index.ts";
import { propertyTimeout } from "../support/fast-check.ts";

/** Everything a caller can read off a live ledger's view at its leaf. */
function observe(live: LiveLedger, piRequest: AgentMessage[] | undefined) {
  const entries = live.entries;
  return {
    view: live.view(),
    hidden: entries.map((e) => live.isHidden(e.id)),
    pinned: entries.map((e) => live.isPinned(e.id)),
    pinnedIndexes: live.pinnedIndexes(),
    tokens: live.estimateViewTokens(),
    // The request mapping reads `rank`, `override` and `active` off the view (undefined: the request is the view).
    request: piRequest ? live.requestContext(structuredClone(piRequest)) : undefined,
    conversation: piRequest
      ? live.requestContext(structuredClone(piRequest.filter((m) => m.role !== "system")), "conversation")
      : undefined,
  };
}

/** Weights that make range facts frequent, so views are often re-projected after a rule. */
const RULE_HEAVY = { fold: 6, toolCheckpoint: 6, label: 3 };

/** A read whose result the checkpoints cover. */
const CALL: ToolCallSpec = {
  name: "read",
  args: { path: "src/a.ts" },
  outcome: "ok",
  output: "line one\nline two",
  image: "",
};

/** Count how often the live ledger re-projects from a kept prefix instead of rebuilding. */
function countAdvances(): { taken: number } {
  const counter = { taken: 0 };
  const proto = LiveLedger.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const original = proto.advance;
  vi.spyOn(proto, "advance").mockImplementation(function (this: unknown, ...args: unknown[]) {
    const out = original.apply(this, args);
    if (out) counter.taken++;
    return out;
  });
  return counter;
}

function check(ledger: GeneratedLedger, reads: boolean[], source: "fresh" | "shared", stateEvery?: number): void {
  const options = source === "shared" ? { source: new SharedMessages(), requests: false } : {};
  // Only the ledger under test keeps a state every few entries: a /tree move back then folds again from one.
  const live = new LiveLedger(LEDGER_FACTS, { ...options, stateEvery });
  const entries: SessionEntry[] = [];
  const byId = new Map<string, SessionEntry>();
  let leafId: string | null = null;
  ledger.steps.forEach((step, k) => {
    if (step.kind === "append") {
      entries.push(step.entry);
      byId.set(step.entry.id, step.entry);
      leafId = step.entry.id;
    } else leafId = step.leafId;
    live.sync(leafId, (id) => byId.get(id));
    // Reading the view at some steps only: several entries and facts then arrive between two reads.
    if (!reads[k % reads.length] && k !== ledger.steps.length - 1) return;
    const request =
      source === "fresh" ? structuredClone(buildSessionProjection(entries, leafId, byId).messages) : undefined;
    const fresh = new LiveLedger(LEDGER_FACTS, options);
    fresh.sync(leafId, (id) => byId.get(id));
    const got = observe(live, request);
    expect(got).toEqual(observe(fresh, request));
    expect(got.view).toEqual(projectBranch(branchTo(entries, leafId, byId), LEDGER_FACTS).entries);
  });
}

describe("the live view across facts", () => {
  afterEach(() => vi.restoreAllMocks());

  it.each(["fresh", "shared"] as const)(
    "equals a view built from scratch after every read (%s messages)",
    (source) => {
      const advances = countAdvances();
      fc.assert(
        fc.property(
          ledgerArb({ weights: RULE_HEAVY, maxCommands: 60 }),
          fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
          fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
          (ledger, reads, stateEvery) => check(ledger, reads, source, stateEvery),
        ),
      );
      // The property is about the incremental path: it must have been taken.
      expect(advances.taken).toBeGreaterThan(0);
    },
    propertyTimeout(),
  );

  it("re-projects only from the rule a tool checkpoint adds, and keeps what lies before it", () => {
    // Given a session with an anchored tool checkpoint, then more work and a second checkpoint over it.
    const ledger = buildLedger(
      { idPrefix: "00a", start: Date.UTC(2025, 0, 1), sessionId: "00000000-0000-7000-8000-00000000000a" },
      [
        { kind: "user", dt: 1, text: "start", asString: true },
        { kind: "assistant", dt: 1, calls: [CALL, CALL], ending: "stop" },
        { kind: "assistant", dt: 1, text: "read both", calls: [], ending: "stop" },
        { kind: "toolCheckpoint", dt: 1, strategy: "preserve", pick: 3, summary: "first batch", overflow: false },
        { kind: "user", dt: 1, text: "more", asString: true },
        { kind: "assistant", dt: 1, calls: [CALL], ending: "stop" },
        { kind: "assistant", dt: 1, text: "read it", calls: [], ending: "stop" },
        { kind: "toolCheckpoint", dt: 1, strategy: "preserve", pick: 3, summary: "second batch", overflow: false },
        { kind: "user", dt: 1, text: "done", asString: true },
      ],
    );
    const advances = countAdvances();
    check(ledger, [true], "fresh");
    check(ledger, [true], "shared");
    expect(advances.taken).toBeGreaterThan(0);

    // When the second checkpoint joins, the projections of the entries before the first one's range are kept.
    const byId = new Map(ledger.entries.map((e) => [e.id, e]));
    const checkpoints = ledger.entries.filter((e) => e.type === "custom_message");
    const second = ledger.entries.indexOf(checkpoints[1]);
    const live = new LiveLedger(LEDGER_FACTS);
    live.sync(ledger.entries[second - 1].id, (id) => byId.get(id));
    const before = live.view().slice();
    live.sync(checkpoints[1].id, (id) => byId.get(id));
    const after = live.view();
    const user = after.findIndex((e) => e.sourceEntry.type === "message" && e.sourceEntry.message.role === "user");
    expect(user).toBeGreaterThanOrEqual(0);
    for (let i = 0; i <= user; i++) expect(after[i]).toBe(before[i]);
    expect(after).toEqual(projectBranch(live.entries, LEDGER_FACTS).entries);
  });
});
