// A simulated ledger's view after each fact (`SimulatedLedger.reproject`, which keeps the ledger state and positions
// as entries arrive and, while the view is the branch in path order, re-projects only from the first entry a fold
// can hide) against the from-scratch computation: the whole branch projected again and the view replaced whole.
// The messages, the token sums and each request's cached prefix must be the same at every point. The same holds for
// the boundary rows' way (`resetToProjection`, after a tool checkpoint: the live view's kept prefix is not handed over
// again), and for a row that sets its view that way after every fact, as the notice-policy fold row does.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchTo, indexById } from "../../src/log/branch.ts";
import { projectBranch } from "../../src/projection/project.ts";
import { budgetNoticeDraft, type Threshold } from "../../src/projection/budget.ts";
import { isFoldable } from "../../src/projection/ranges.ts";
import { LEDGER_FACTS, LedgerType } from "../../src/strategies/catalog.ts";
import { SimulatedLedger } from "../../src/lab/rows/ledger-row.ts";
import { View } from "../../src/lab/view.ts";
import { ledgerArb } from "../arbitraries/index.ts";

function branchOf(ledger: { entries: SessionEntry[]; leafId: string | null }): SessionEntry[] {
  return branchTo(ledger.entries, ledger.leafId, indexById(ledger.entries));
}

const sent = (messages: readonly AgentMessage[]) =>
  messages.filter((m) => !(m.role === "bashExecution" && (m as { excludeFromContext?: boolean }).excludeFromContext));

/**
 * What the step after an entry does: nothing, a fold from some earlier entry through the leaf, a plain reprojection,
 * or a tool checkpoint (an anchored keep-dialogue range from the previous one's end) with the view set the boundary
 * rows' way.
 */
type Step =
  | { kind: "none" }
  | { kind: "fold"; after: number }
  | { kind: "reproject" }
  | { kind: "checkpoint" }
  | { kind: "compaction"; kept: number }
  | { kind: "notice" };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: "none" } as Step) },
  { weight: 2, arbitrary: fc.nat().map((after): Step => ({ kind: "fold", after })) },
  { weight: 1, arbitrary: fc.constant({ kind: "reproject" } as Step) },
  { weight: 2, arbitrary: fc.constant({ kind: "checkpoint" } as Step) },
  // A compaction keeping from some entry on, and a budget notice (a fact the ledger state ignores), as the
  // notice-policy fold row writes them.
  { weight: 1, arbitrary: fc.nat().map((kept): Step => ({ kind: "compaction", kept })) },
  { weight: 2, arbitrary: fc.constant({ kind: "notice" } as Step) },
);

/** `live`: every fact's view is set from the live projection (`resetToProjection`), not by `reproject`. */
function replayAndCheck(source: readonly SessionEntry[], steps: readonly Step[], live: boolean): void {
  const ledger = new SimulatedLedger("t-");
  const reference = new View();
  let checkpoints = 0;
  let lastThrough: string | null = null;
  source.forEach((entry, i) => {
    ledger.appendSource(entry);
    for (const m of sent(projectBranch([ledger.branch[ledger.branch.length - 1]], LEDGER_FACTS).messages))
      reference.push(m);
    const step = steps[i % steps.length];
    if (step.kind === "none") return;
    if (step.kind === "fold") {
      const branch = ledger.branch;
      // A fold after an entry before the leaf (or from the root) through the leaf, as the lab's fold rows write.
      const at = (step.after % (branch.length + 1)) - 1;
      const afterId = at < 0 ? null : branch[at].id;
      const covered = branch.slice(at + 1);
      if (!covered.length || !covered.some(isFoldable)) return;
      const throughId = branch[branch.length - 1].id;
      ledger.appendFact({
        type: "custom_message",
        customType: LedgerType.fold,
        content: `[folded ${covered.length}]`,
        display: true,
        details: { v: 1, range: { afterId, throughId }, requestEntryId: throughId, target: afterId ?? "root" },
      });
    }
    if (step.kind === "compaction") {
      const branch = ledger.branch;
      ledger.appendFact({
        type: "compaction",
        summary: `[compacted before ${step.kept % branch.length}]`,
        firstKeptEntryId: branch[step.kept % branch.length].id,
        tokensBefore: 1000,
      });
    }
    if (step.kind === "notice") {
      const { type, ...notice } = budgetNoticeDraft(90_000, { tokens: 100_000 } as Threshold, 0.8, true);
      ledger.appendFact({ type, ...notice });
    }
    if (step.kind === "checkpoint") {
      const throughId = ledger.branch[ledger.branch.length - 1].id;
      if (throughId === lastThrough) return;
      ledger.appendFact({
        type: "custom_message",
        customType: LedgerType.preserve,
        content: `[checkpoint ${checkpoints + 1}]`,
        display: true,
        details: {
          v: 1,
          strategy: "preserve",
          checkpoint: ++checkpoints,
          range: { afterId: lastThrough, throughId, keepDialogue: true },
        },
      });
      lastThrough = throughId;
      ledger.resetToProjection();
    } else if (live) ledger.resetToProjection();
    else ledger.reproject();
    reference.replaceAll(sent(projectBranch(ledger.branch.slice(), LEDGER_FACTS).messages));
    expect(JSON.stringify(ledger.view.messages)).toBe(JSON.stringify(reference.messages));
    expect(ledger.view.tokens).toBe(reference.tokens);
    expect(ledger.view.markRequest()).toEqual(reference.markRequest());
  });
}

describe("a simulated ledger's view after a fact", () => {
  it("equals the whole branch projected again, with the same sums and cached prefix, whatever the branch holds", () => {
    fc.assert(
      fc.property(
        ledgerArb(),
        fc.array(stepArb, { minLength: 1, maxLength: 10 }),
        fc.boolean(),
        (ledger, steps, live) => {
          replayAndCheck(branchOf(ledger), steps, live);
        },
      ),
    );
  });

  it("equals it over plain conversations folded again and again (the incremental path)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("user", "assistant", "toolResult", "bash"), { minLength: 1, maxLength: 40 }),
        fc.array(stepArb, { minLength: 1, maxLength: 10 }),
        fc.boolean(),
        (roles, steps, live) => {
          const entries = roles.map((role, i): SessionEntry => {
            const base = { id: `e${i}`, parentId: i ? `e${i - 1}` : null, timestamp: "2026-01-01T00:00:00.000Z" };
            const message =
              role === "bash"
                ? { role: "bashExecution", command: "ls", output: "x", exitCode: 0, excludeFromContext: i % 2 === 0 }
                : role === "toolResult"
                  ? {
                      role,
                      toolCallId: `c${i}`,
                      toolName: "read",
                      content: [{ type: "text", text: `out ${i}` }],
                      isError: false,
                    }
                  : role === "assistant"
                    ? {
                        role,
                        content: [{ type: "text", text: `a ${i}` }],
                        stopReason: "stop",
                        provider: "p",
                        model: "m",
                      }
                    : { role, content: `u ${i}` };
            return { ...base, type: "message", message: { ...message, timestamp: i } } as unknown as SessionEntry;
          });
          replayAndCheck(entries, steps, live);
        },
      ),
    );
  });
});
