// Invariant 3: the ledger state folded from scratch equals the live, incrementally maintained state after
// every append and every /tree move; and the live request filter gives exactly the pure projection.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { buildSessionProjection, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchTo, indexById } from "../../src/log/branch.ts";
import { reduceBranch } from "../../src/projection/ledger-state.ts";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import { projectBranch } from "../../src/projection/project.ts";
import { LedgerType, LEDGER_FACTS } from "../../src/strategies/catalog.ts";
import { buildLedger, ledgerArb, type GeneratedLedger } from "../arbitraries/index.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";
import { loadRealSessions } from "./real-sessions.ts";
import { propertyTimeout } from "../support/fast-check.ts";

/** What Pi hands the `context` hook: its own projection, cloned (identity is lost on the way). */
function piRequest(entries: SessionEntry[], leafId: string | null, byId: Map<string, SessionEntry>): AgentMessage[] {
  return structuredClone(buildSessionProjection(entries, leafId, byId).messages);
}

/** Live filtering of Pi's request at the ledger's leaf, next to the pure projection it must equal. */
function liveVersusPure(ledger: GeneratedLedger): { live: AgentMessage[]; pure: AgentMessage[] } {
  const byId = indexById(ledger.entries);
  const live = new LiveLedger(LEDGER_FACTS);
  for (const step of ledger.steps)
    live.sync(step.kind === "append" ? step.entry.id : step.leafId, (id) => byId.get(id));
  const request = piRequest(ledger.entries, ledger.leafId, byId);
  return {
    live: live.requestContext(request) ?? request,
    pure: projectBranch(branchTo(ledger.entries, ledger.leafId, byId), LEDGER_FACTS).messages,
  };
}

/**
 * Shrunk from FC_RUNS=2000 (seed -1132866105): two assistant messages with the same timestamp and the same
 * content; a context edit changes the first; a fold targets the first, so it hides the second. The live
 * matcher paired the unedited second message with the first entry (exact content match, first candidate
 * wins) and the edited first message with the second entry, so it kept the wrong one.
 */
const editedTwinAssistants = buildLedger(
  { idPrefix: "000", start: Date.UTC(2025, 0, 1), sessionId: "00000000-0000-7000-8000-000000000000" },
  [
    { kind: "assistant", dt: 1, calls: [], ending: "stop" },
    { kind: "assistant", dt: 0, calls: [], ending: "stop" },
    { kind: "contextEdit", dt: 1, pick: 0, omit: false, text: "read" },
    { kind: "fold", dt: 1, pick: 0, toRoot: false, summary: "read read read" },
  ],
);

/**
 * Shrunk from FC_RUNS=3000 (seed -1836413533): two user messages in the same millisecond, both edited to
 * the same text; a fold targets the first. Neither request message equals its raw entry any more, so the
 * matcher left both unmatched and kept both: the folded second message leaked into the request.
 */
const editedTwinUsers = buildLedger(
  { idPrefix: "000", start: Date.UTC(2025, 0, 1), sessionId: "00000000-0000-7000-8000-000000000000" },
  [
    { kind: "user", dt: 1, text: "", asString: false },
    { kind: "user", dt: 0, text: "read", asString: false },
    { kind: "contextEdit", dt: 1, pick: 0, omit: false, text: "read" },
    { kind: "contextEdit", dt: 1, pick: 1, omit: false, text: "read" },
    { kind: "fold", dt: 1, pick: 0, toRoot: false, summary: "read read read" },
  ],
);

describe("replay equals live (invariant 3)", () => {
  // Both regressions were matcher bugs (src/projection/message-match.ts), fixed by pairing in path order
  // against edited content.
  it("regression: a context edit on one of two identical same-millisecond messages", () => {
    const { live, pure } = liveVersusPure(editedTwinAssistants);
    expect(pure.map((m) => (m.role === "assistant" ? JSON.stringify(m.content) : m.role))).toEqual([
      "system",
      '[{"type":"text","text":"read"}]',
      "custom",
    ]);
    expect(live).toEqual(pure);
  });

  it("regression: context edits make two same-millisecond messages identical", () => {
    const { live, pure } = liveVersusPure(editedTwinUsers);
    expect(pure.map((m) => m.role)).toEqual(["system", "user", "custom"]);
    expect(live).toEqual(pure);
  });

  it(
    "live state and live filtering match a from-scratch fold after every append and /tree move",
    () => {
      fc.assert(
        fc.property(ledgerArb(), (ledger) => {
          const live = new LiveLedger(LEDGER_FACTS);
          const entries: SessionEntry[] = [];
          const byId = new Map<string, SessionEntry>();
          let leafId: string | null = null;
          for (const step of ledger.steps) {
            if (step.kind === "append") {
              entries.push(step.entry);
              byId.set(step.entry.id, step.entry);
              leafId = step.entry.id;
            } else leafId = step.leafId;
            live.sync(leafId, (id) => byId.get(id));

            const branch = branchTo(entries, leafId, byId);
            expect(live.entries.map((e) => e.id)).toEqual(branch.map((e) => e.id));
            expect(live.state).toEqual(reduceBranch(branch, LEDGER_FACTS));

            // The request the `context` hook gets (no system messages), then Pi's whole projection: both are the view.
            const pure = projectBranch(branch, LEDGER_FACTS).messages;
            const request = piRequest(entries, leafId, byId);
            const conversation = request.filter((m) => m.role !== "system");
            expect(live.requestContext(conversation, "conversation") ?? conversation).toEqual(
              pure.filter((m) => m.role !== "system"),
            );
            expect(live.requestContext(request) ?? request).toEqual(pure);
            expect(live.view().map((e) => e.sourceEntry.id)).toEqual(
              projectBranch(branch, LEDGER_FACTS).entries.map((e) => e.sourceEntry.id),
            );
          }
          // A fresh ledger synced once to the final leaf (a reload) agrees with the one that lived through it all.
          const reloaded = new LiveLedger(LEDGER_FACTS);
          reloaded.sync(ledger.leafId, (id) => byId.get(id));
          expect(reloaded.state).toEqual(live.state);
          const request = piRequest(entries, ledger.leafId, byId);
          expect(reloaded.requestContext(structuredClone(request)) ?? request).toEqual(
            live.requestContext(structuredClone(request)) ?? request,
          );
        }),
      );
    },
    propertyTimeout(),
  );

  describe.each(loadRealSessions())("real session $name", ({ entries }) => {
    const byId = indexById(entries);

    it("live state after appending every entry equals the from-scratch fold", () => {
      const live = new LiveLedger(LEDGER_FACTS);
      for (const entry of entries) live.sync(entry.id, (id) => byId.get(id));
      expect(live.state).toEqual(reduceBranch(branchTo(entries, entries[entries.length - 1].id, byId), LEDGER_FACTS));
    });

    it(
      "live state after a jump to any earlier leaf equals the from-scratch fold",
      () => {
        const live = new LiveLedger(LEDGER_FACTS);
        live.sync(entries[entries.length - 1].id, (id) => byId.get(id));
        fc.assert(
          fc.property(fc.nat({ max: entries.length - 1 }), (i) => {
            live.sync(entries[i].id, (id) => byId.get(id));
            expect(live.state).toEqual(reduceBranch(branchTo(entries, entries[i].id, byId), LEDGER_FACTS));
          }),
        );
      },
      propertyTimeout(),
    );
  });
});

/** Roles and custom types, for order assertions. */
const shape = (messages: AgentMessage[]) =>
  messages.map((m) => (m.role === "custom" ? `custom:${(m as { customType: string }).customType}` : m.role));

/**
 * Issue 10's counterexample: preserve checkpoint #1 written at `turn_end` covers the older batch only; then the
 * window overflows and Pi compacts natively, keeping from the current batch. Pi sends the summary first, then the
 * kept batch, then the checkpoint (its own file position: its range end was summarized, so there is nothing to
 * anchor it after). The live request used to move the checkpoint in front of the summary.
 */
function checkpointThenNativeCompaction(): LedgerBuilder {
  const b = new LedgerBuilder();
  b.user("Find the bug.");
  const older = b.tool("read", { path: "a.ts" }, "A".repeat(400));
  const current = b.tool("read", { path: "b.ts" }, "B".repeat(400));
  b.custom(LedgerType.preserve, "checkpoint #1: read a.ts", {
    v: 1,
    checkpoint: 1,
    range: { afterId: null, throughId: older.result, keepDialogue: true },
  });
  b.compaction(current.call, "native summary of the start");
  b.user("go on");
  return b;
}

describe("replay equals live: named regressions", () => {
  it("regression: a native compaction after a preserve checkpoint keeps the summary first (issue 10)", () => {
    const b = checkpointThenNativeCompaction();
    const byId = b.byId();
    const live = new LiveLedger(LEDGER_FACTS);
    live.sync(b.leaf, (id) => byId.get(id));
    const pure = projectBranch(b.entries, LEDGER_FACTS).messages;
    expect(shape(pure)).toEqual([
      "compactionSummary",
      "assistant",
      "toolResult",
      "custom:context-ledger/preserve",
      "user",
    ]);
    // What Pi itself sends for this branch, before any extension: the same order.
    expect(shape(buildSessionProjection(b.entries, b.leaf, byId).messages).filter((r) => r !== "system")).toEqual(
      shape(pure),
    );
    const request = piRequest(b.entries, b.leaf, byId);
    expect(live.requestContext(structuredClone(request)) ?? request).toEqual(pure);
    const conversation = request.filter((m) => m.role !== "system");
    expect(live.requestContext(conversation, "conversation") ?? conversation).toEqual(
      pure.filter((m) => m.role !== "system"),
    );
  });
});

describe("replay equals live: memoized request matching", () => {
  /**
   * Found by the property above (seed -1147800588): two same-millisecond assistant messages, a fold that keeps
   * the first and hides the second, then a context edit that omits the first. The request memo reused position
   * 0's decision (keep) for the second message, which now sat at position 0 with the same role and timestamp.
   */
  it("regression: a context edit that removes a same-millisecond twin does not reuse the stale decision", () => {
    const at = (ms: number) => new Date(Date.UTC(2025, 0, 1) + ms).toISOString();
    const usage = {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    };
    const assistant = (id: string, parentId: string, content: unknown[], stopReason: string) =>
      ({
        type: "message",
        id,
        parentId,
        timestamp: at(1),
        message: {
          role: "assistant",
          content,
          api: "a",
          provider: "p",
          model: "m",
          usage,
          stopReason,
          timestamp: Date.UTC(2025, 0, 1) + 1,
        },
      }) as unknown as SessionEntry;
    const result = (id: string, parentId: string, callId: string, ms: number) =>
      ({
        type: "message",
        id,
        parentId,
        timestamp: at(ms),
        message: {
          role: "toolResult",
          toolCallId: callId,
          toolName: "read",
          content: [{ type: "text", text: `out ${id}` }],
          isError: false,
          timestamp: Date.UTC(2025, 0, 1) + ms,
        },
      }) as unknown as SessionEntry;
    const entries: SessionEntry[] = [
      {
        type: "message",
        id: "u",
        parentId: null,
        timestamp: at(0),
        message: { role: "user", content: "go", timestamp: Date.UTC(2025, 0, 1) },
      } as unknown as SessionEntry,
      assistant("a3", "u", [{ type: "text", text: "" }], "stop"),
      assistant(
        "a4",
        "a3",
        [
          { type: "toolCall", id: "c1", name: "read", arguments: {} },
          { type: "toolCall", id: "c2", name: "context_compact", arguments: {} },
        ],
        "toolUse",
      ),
      result("r5", "a4", "c1", 2),
      result("r6", "r5", "c2", 3),
      {
        type: "custom_message",
        id: "f7",
        parentId: "r6",
        timestamp: at(4),
        customType: "context-ledger/fold",
        content: "sum",
        display: true,
        details: {
          v: 1,
          range: { afterId: "a3", throughId: "r6", keepToolResultsOf: "a3" },
          requestEntryId: "a4",
          target: "a3",
        },
      } as SessionEntry,
      {
        type: "context_edit",
        id: "e8",
        parentId: "f7",
        timestamp: at(5),
        targetId: "a3",
        replacement: null,
      } as SessionEntry,
    ];
    const byId = indexById(entries);
    const live = new LiveLedger(LEDGER_FACTS);
    for (let i = 0; i < entries.length; i++) {
      const leaf = entries[i].id;
      live.sync(leaf, (id) => byId.get(id));
      const request = piRequest(entries.slice(0, i + 1), leaf, byId);
      expect(live.requestContext(request) ?? request).toEqual(
        projectBranch(branchTo(entries, leaf, byId), LEDGER_FACTS).messages,
      );
    }
  });
});
