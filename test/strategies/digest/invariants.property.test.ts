// The digest strategy against the package invariants on generated ledgers: 1 paired tool results, 5 byte-stable
// prefixes, 6 verbatim fidelity of quoted lines, 7 protection (messages stay, tool output gains nothing), 8 determinism.
// Hostile tool output and arguments stay bounded, quoted and free of raw control characters.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../../src/log/entries.ts";
import { LedgerType, LEDGER_FACTS } from "../../../src/strategies/catalog.ts";
import { printable } from "../../../src/log/display.ts";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import { LiveLedger } from "../../../src/projection/live-ledger.ts";
import { projectBranch } from "../../../src/projection/project.ts";
import { textBlocks, toolCallsOf } from "../../../src/strategies/shared/conversation.ts";
import { MAX_LINE, QUOTE, splitLines } from "../../../src/strategies/digest/lines.ts";
import { planDigest, type DigestDraft } from "../../../src/strategies/digest/plan.ts";
import type { DigestPolicy } from "../../../src/strategies/digest/policy.ts";
import { entryBefore } from "../../../src/strategies/shared/delta.ts";
import { ledgerArb } from "../../arbitraries/index.ts";
import { assertBounded, hasRawControl, hostileStringArb } from "../../arbitraries/hostile.ts";
import { propertyTimeout, runs } from "../../support/fast-check.ts";
import { assertPaired, assistantIndices, batchEnd, pathOf, rewritesHistory } from "../../support/generated-paths.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { draftEntry } from "./fixtures.ts";

function asEntry(draft: DigestDraft, parent: SessionEntry, n: number): SessionEntry {
  return draftEntry(draft, {
    id: `digest-${n}`,
    parentId: parent.id,
    timestamp: new Date(Date.parse(parent.timestamp) + 1).toISOString(),
  });
}

// Histories without tool checkpoints of their own: this test writes the digests.
const ledger = ledgerArb({
  maxCommands: 50,
  weights: { assistant: 20, navigate: 1, compaction: 1, fold: 1, toolCheckpoint: 0 },
});
/**
 * Kept raw tails from none to several steps; every batch is due, so the digest acts whenever it saves tokens. As
 * `/compact` it always acts (generated outputs are short, so an automatic digest often declines to save nothing).
 */
const policyArb: fc.Arbitrary<DigestPolicy & { manual: boolean }> = fc
  .tuple(
    fc.constantFrom(0, 30, 300),
    fc.boolean(),
    fc.option(
      fc.record({ maxRaw: fc.constantFrom(100, 1_000), hotSteps: fc.constantFrom(1, 4), writes: fc.boolean() }),
    ),
  )
  .map(([keepRaw, manual, workingSet]) => ({
    keepRaw,
    batch: 1,
    full: Number.MAX_SAFE_INTEGER,
    minFull: 1,
    manual,
    // The working-set rule: a tail that reaches back for files in use, and edits' (and writes') texts quoted.
    ...(workingSet
      ? {
          maxRaw: workingSet.maxRaw,
          hotSteps: workingSet.hotSteps,
          written: { maxLines: 60, writes: workingSet.writes },
        }
      : {}),
  }));

/** The strings an edit or write call puts in a file. */
function writtenArguments(args: unknown): string[] {
  const object = (args ?? {}) as { newText?: unknown; content?: unknown; edits?: unknown };
  const edits = Array.isArray(object.edits) ? (object.edits as { newText?: unknown }[]).map((e) => e?.newText) : [];
  return [object.newText, object.content, ...edits].filter((t): t is string => typeof t === "string");
}

function plan(
  branch: readonly SessionEntry[],
  limitId: string,
  policy: DigestPolicy & { manual: boolean },
): DigestDraft | undefined {
  const outcome = planDigest({
    branch,
    limitId,
    contextWindow: 128_000,
    usageTokens: null,
    cwd: "/work/project",
    policy,
    ...(policy.manual ? { force: "manual" as const } : {}),
  });
  return outcome.ok ? outcome.draft : undefined;
}

describe("digest invariants on generated ledgers", () => {
  it(
    "the view up to digest k is byte-identical after digest k+1; tool results stay paired; every message stays (1, 5, 7)",
    () => {
      let exercised = 0;
      fc.assert(
        fc.property(ledger, fc.nat(), fc.nat(), policyArb, (generated, pickA, pickB, policy) => {
          const path = pathOf(generated.entries, generated.leafId);
          const turns = assistantIndices(path, 1);
          if (turns.length < 2) return;
          const a = turns[pickA % (turns.length - 1)];
          const endA = batchEnd(path, a);
          const first = plan(path.slice(0, endA + 1), entryBefore(path, path[a].id)!, policy);
          if (!first) return;
          const d1 = asEntry(first, path[endA], 1);
          const laterTurns = turns.filter((i) => i > endA);
          if (!laterTurns.length) return;
          const b = laterTurns[pickB % laterTurns.length];
          const endB = batchEnd(path, b);
          const middle = path.slice(endA + 1, endB + 1);
          if (middle.some(rewritesHistory)) return;
          const before = [...path.slice(0, endA + 1), d1, ...middle];
          const second = plan(before, entryBefore(before, path[b].id)!, policy);
          if (!second) return;
          const after = [...before, asEntry(second, before.at(-1)!, 2)];

          const viewBefore = projectBranch(before, LEDGER_FACTS).messages;
          const viewAfter = projectBranch(after, LEDGER_FACTS).messages;
          const k = viewBefore.findIndex(
            (m) => m.role === "custom" && (m as { customType?: string }).customType === LedgerType.digest,
          );
          if (k < 0) return; // the first digest is outside the context (an earlier compaction boundary)
          exercised++;
          expect(JSON.stringify(viewAfter.slice(0, k + 1))).toBe(JSON.stringify(viewBefore.slice(0, k + 1)));
          expect(second.details.range.afterId).toBe(first.details.range.throughId);
          assertPaired(viewBefore);
          assertPaired(viewAfter);
          // Protection: user messages are never hidden (their <keepContext> needs no special case); tool output gains nothing.
          const users = (view: readonly AgentMessage[]) =>
            view.filter((m) => m.role === "user").map((m) => JSON.stringify(m));
          expect(users(viewAfter)).toEqual(users(viewBefore));
        }),
      );
      expect(exercised).toBeGreaterThan(runs() / 10);
    },
    propertyTimeout(),
  );

  it(
    "a restore right after a digest gives the view from before it, byte for byte, in the projection and the live request (10)",
    () => {
      let exercised = 0;
      fc.assert(
        fc.property(ledger, fc.nat(), policyArb, (generated, pickA, policy) => {
          const path = pathOf(generated.entries, generated.leafId);
          const turns = assistantIndices(path, 1);
          if (!turns.length) return;
          const a = turns[pickA % turns.length];
          const prefix = path.slice(0, batchEnd(path, a) + 1);
          const draft = plan(prefix, entryBefore(prefix, path[a].id)!, policy);
          if (!draft) return;
          const digest = asEntry(draft, prefix.at(-1)!, 1);
          const restore = {
            type: "custom",
            id: "restore-1",
            parentId: digest.id,
            timestamp: digest.timestamp,
            customType: LedgerType.restore,
            data: { v: 1, targetId: digest.id, act: "digest" },
          } as SessionEntry;
          const restored = [...prefix, digest, restore];
          const before = JSON.stringify(projectBranch(prefix, LEDGER_FACTS).messages);
          expect(JSON.stringify(projectBranch([...prefix, digest], LEDGER_FACTS).messages)).not.toBe(before);
          expect(JSON.stringify(projectBranch(restored, LEDGER_FACTS).messages)).toBe(before);
          const byId = new Map(restored.map((e) => [e.id, e]));
          const live = new LiveLedger(LEDGER_FACTS);
          live.sync(restore.id, (id) => byId.get(id));
          const request = structuredClone(buildSessionProjection(restored, restore.id, byId).messages);
          expect(JSON.stringify(live.requestContext(request) ?? request)).toBe(before);
          exercised++;
        }),
      );
      expect(exercised).toBeGreaterThan(runs() / 10);
    },
    propertyTimeout(),
  );

  it(
    "every quoted line is a verbatim line, or a verbatim start of one, of the covered output or assistant text (6)",
    () => {
      fc.assert(
        fc.property(ledger, policyArb, (generated, policy) => {
          const path = pathOf(generated.entries, generated.leafId);
          const leaf = path.at(-1);
          if (!leaf) return;
          const draft = plan(path, leaf.id, policy);
          if (!draft) return;
          // What the model saw of each entry (context edits applied) is what a digest may quote.
          const source = new Set<string>();
          for (const message of projectBranch(path, LEDGER_FACTS).messages) {
            const text = textBlocks((message as { content?: unknown }).content).join("\n");
            for (const line of [...splitLines(text), ...splitLines(text.trim())]) source.add(printable(line));
            // What the agent wrote into files (an edit's new texts, a write's content) is quoted from its call.
            for (const call of toolCallsOf(message))
              for (const written of writtenArguments(call.arguments))
                for (const line of splitLines(written)) source.add(printable(line));
          }
          for (const line of draft.content.split("\n")) {
            if (!line.startsWith(QUOTE) || line === `${QUOTE}… [+${line.match(/\d+/)?.[0]} lines]`) continue;
            const body = line.slice(QUOTE.length);
            const cut = /^(.*) \[…\d+ chars\]$/s.exec(body);
            if (cut) {
              expect(cut[1].length).toBeLessThanOrEqual(MAX_LINE);
              expect(
                [...source].some((s) => s.startsWith(cut[1]) && s.length > cut[1].length),
                body,
              ).toBe(true);
            } else expect(source.has(body), body).toBe(true);
          }
        }),
      );
    },
    propertyTimeout(),
  );

  it(
    "the same branch gives byte-identical digests (8)",
    () => {
      fc.assert(
        fc.property(ledger, policyArb, (generated, policy) => {
          const path = pathOf(generated.entries, generated.leafId);
          const leaf = path.at(-1);
          if (!leaf) return;
          const one = planDigest({
            branch: path,
            limitId: leaf.id,
            contextWindow: 128_000,
            usageTokens: null,
            cwd: "/w",
            policy,
            ...(policy.manual ? { force: "manual" as const } : {}),
          });
          const two = planDigest({
            branch: structuredClone(path),
            limitId: leaf.id,
            contextWindow: 128_000,
            usageTokens: null,
            cwd: "/w",
            policy,
            ...(policy.manual ? { force: "manual" as const } : {}),
          });
          expect(JSON.stringify(two)).toBe(JSON.stringify(one));
        }),
      );
    },
    propertyTimeout(),
  );
});

describe("digest of hostile tool traffic", () => {
  it(
    "stays bounded, quoted and free of raw control characters whatever the outputs and arguments hold",
    async () => {
      await assertBounded(
        fc.property(
          fc.array(
            fc.tuple(
              fc.constantFrom("read", "bash", "grep", "mystery"),
              hostileStringArb,
              hostileStringArb,
              fc.boolean(),
            ),
            { minLength: 1, maxLength: 6 },
          ),
          (steps) => {
            const b = new LedgerBuilder();
            b.user("go");
            for (const [name, arg, output, isError] of steps)
              b.tool(name, { path: arg, command: arg, pattern: arg }, output, { isError, text: arg });
            const outcome = planDigest({
              branch: b.entries,
              limitId: b.leaf!,
              contextWindow: 128_000,
              usageTokens: null,
              cwd: "/w",
              force: "manual",
            });
            expect(outcome.ok).toBe(true);
            if (!outcome.ok) return;
            const text = outcome.draft.content;
            expect(hasRawControl(text)).toBe(false);
            // Per step: a call line with at most a few capped values, the assistant's first lines, a bounded selection.
            expect(text.length).toBeLessThan(2_000 + steps.length * 40 * (MAX_LINE + 40));
            for (const line of text.split("\n").slice(1))
              expect(
                /^(## |- | {2}defines: | {2}mentions: )/.test(line) || line.startsWith(QUOTE),
                line.slice(0, 200),
              ).toBe(true);
          },
        ),
        { numRuns: runs(1 / 4, 20) },
      );
    },
    propertyTimeout(),
  );
});
