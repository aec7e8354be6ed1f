import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { buildSessionProjection, SessionManager, type SessionEntry } from "@earendil-works/pi-coding-agent";
import type { RangeDetails, RestoreData } from "../../src/log/entries.ts";
import { isCheckpointMarker, isToolCheckpoint, LedgerType, type FoldDetails } from "../../src/strategies/catalog.ts";
import { ledgerArb, toJsonl, visibleFoldTargets, type GeneratedLedger } from "./index.ts";
import { propertyTimeout } from "../support/fast-check.ts";

const dir = mkdtempSync(join(tmpdir(), "ctx-ledger-arb-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function pathTo(byId: Map<string, SessionEntry>, leafId: string | null): SessionEntry[] {
  const path: SessionEntry[] = [];
  for (let e = leafId ? byId.get(leafId) : undefined; e; e = e.parentId ? byId.get(e.parentId) : undefined)
    path.push(e);
  return path.reverse();
}

function toolCallIds(entry: SessionEntry): string[] {
  if (entry.type !== "message" || entry.message.role !== "assistant") return [];
  return entry.message.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : []));
}

/** Structural validity a generated ledger must have; throws with a reason otherwise. */
function checkValid(ledger: GeneratedLedger): void {
  const byId = new Map<string, SessionEntry>();
  ledger.entries.forEach((entry, i) => {
    expect(byId.has(entry.id), `duplicate id ${entry.id}`).toBe(false);
    if (entry.parentId !== null) expect(byId.has(entry.parentId), `parent of ${entry.id} precedes it`).toBe(true);
    byId.set(entry.id, entry);
    // Every tool call is answered, in order, by the entries right after its assistant message.
    toolCallIds(entry).forEach((callId, k) => {
      const result = ledger.entries[i + 1 + k];
      expect(result?.type === "message" && result.message.role === "toolResult" && result.message.toolCallId).toBe(
        callId,
      );
      expect(result.parentId).toBe(k === 0 ? entry.id : ledger.entries[i + k].id);
    });
  });
  if (ledger.leafId !== null) expect(byId.has(ledger.leafId)).toBe(true);

  for (const entry of ledger.entries) {
    const path = pathTo(byId, entry.id);
    if (entry.type === "compaction") {
      const kept = entry.firstKeptEntryId;
      expect(kept === entry.id || path.slice(0, -1).some((e) => e.id === kept), "firstKeptEntryId on the path").toBe(
        true,
      );
    }
    if (entry.type === "label" || entry.type === "context_edit") expect(byId.has(entry.targetId)).toBe(true);
    if (entry.type === "custom" && entry.customType === LedgerType.restore) {
      const data = entry.data as RestoreData;
      const act = path.find((e) => e.id === data.targetId);
      expect(act, "a restore targets an act earlier on its path").toBeDefined();
      expect(
        act!.type === "compaction" ? "compaction" : act!.type === "custom_message" ? act!.customType : act!.type,
      ).toBe(
        data.act === "compaction"
          ? "compaction"
          : data.act === "preserve"
            ? LedgerType.preserve
            : data.act === "digest"
              ? LedgerType.digest
              : LedgerType.fold,
      );
    }
    if (entry.type === "custom_message" && entry.customType === LedgerType.fold) {
      const { range, requestEntryId, target } = entry.details as FoldDetails;
      const ids = path.map((e) => e.id);
      const request = ids.indexOf(requestEntryId);
      expect(request).toBeGreaterThanOrEqual(0);
      expect(range.throughId).toBe(entry.parentId);
      expect(target).toBe(range.afterId ?? "root");
      if (range.afterId !== null) {
        const before = path.slice(0, request);
        expect(
          visibleFoldTargets(before).map((e) => e.id),
          "target visible and strictly before the request",
        ).toContain(range.afterId);
        const upTo = before.slice(0, before.findIndex((e) => e.id === range.afterId) + 1);
        const lastAssistant = upTo.reverse().find((e) => e.type === "message" && e.message.role === "assistant");
        expect(range.keepToolResultsOf).toBe(lastAssistant?.id);
      } else {
        expect(range.keepToolResultsOf).toBeUndefined();
      }
    }
  }
}

describe("ledgerArb", () => {
  it(
    "generates structurally valid ledgers whose steps replay to the same entries and leaf",
    () => {
      fc.assert(
        fc.property(ledgerArb(), (ledger) => {
          checkValid(ledger);
          const entries: SessionEntry[] = [];
          let leaf: string | null = null;
          for (const step of ledger.steps) {
            if (step.kind === "append") {
              expect(step.entry.parentId).toBe(leaf);
              entries.push(step.entry);
              leaf = step.entry.id;
            } else leaf = step.leafId;
          }
          expect(entries).toEqual(ledger.entries);
          expect(leaf).toBe(ledger.leafId);
        }),
      );
    },
    propertyTimeout(),
  );

  it(
    "serializes to JSONL that Pi's SessionManager opens unchanged, with Pi's own projection",
    () => {
      let n = 0;
      fc.assert(
        fc.property(ledgerArb(), (ledger) => {
          const file = join(dir, `s${n++}.jsonl`);
          const text = toJsonl(ledger);
          writeFileSync(file, text);
          const sm = SessionManager.open(file, dir);
          expect(readFileSync(file, "utf8")).toBe(text); // opening neither migrates nor repairs a v3 file
          expect(sm.getHeader()).toEqual(ledger.header);
          expect(toJsonl({ header: sm.getHeader()!, entries: sm.getEntries() })).toBe(text);
          expect(sm.getLeafId()).toBe(ledger.entries.at(-1)?.id ?? null);
          if (ledger.leafId === null) sm.resetLeaf();
          else sm.branch(ledger.leafId);
          expect(sm.buildSessionProjection().messages).toEqual(
            buildSessionProjection(JSON.parse(JSON.stringify(ledger.entries)), ledger.leafId).messages,
          );
        }),
      );
    },
    propertyTimeout(),
  );

  it("is deterministic for a fast-check seed", () => {
    const a = fc.sample(ledgerArb(), { seed: 42, numRuns: 5 });
    const b = fc.sample(ledgerArb(), { seed: 42, numRuns: 5 });
    expect(a.map(toJsonl)).toEqual(b.map(toJsonl));
  });

  it(
    "with folds off, writes no ledger facts",
    () => {
      fc.assert(
        fc.property(ledgerArb({ folds: false }), (ledger) => {
          expect(
            ledger.entries.some(
              (e) => (e.type === "custom_message" || e.type === "custom") && e.customType.startsWith("context-ledger/"),
            ),
          ).toBe(false);
        }),
      );
    },
    propertyTimeout(),
  );

  it("covers every kind of entry the issue lists", () => {
    const seen = new Map<string, number>();
    const count = (key: string) => seen.set(key, (seen.get(key) ?? 0) + 1);
    for (const ledger of fc.sample(ledgerArb(), { seed: 7, numRuns: 300 })) {
      if (ledger.steps.some((s) => s.kind === "move")) count("navigation");
      if (ledger.leafId !== (ledger.entries.at(-1)?.id ?? null)) count("leaf-not-last");
      for (const e of ledger.entries) {
        count(e.type);
        if (e.type === "message") {
          const m = e.message;
          count(`message:${m.role}`);
          if (m.role === "assistant") {
            const calls = m.content.filter((b) => b.type === "toolCall").length;
            if (calls === 1) count("single-call");
            if (calls > 1) count("parallel-calls");
            if (m.content.some((b) => b.type === "thinking")) count("thinking");
            if (m.content.some((b) => b.type === "text") && calls === 0) count("assistant-text");
          }
          if (m.role === "toolResult") {
            if (m.isError) count("result-error");
            else if (m.content.some((b) => b.type === "image")) count("result-image");
            else count("result-ok");
          }
          if (m.role === "bashExecution" && m.excludeFromContext) count("bash-excluded");
        }
        if (e.type === "custom_message" && e.customType === LedgerType.fold) {
          const range = (e.details as FoldDetails).range;
          count(range.afterId === null ? "fold-root" : "fold-target");
          if (range.keepToolResultsOf) count("fold-keeps-results");
        }
        if (e.type === "compaction" && isCheckpointMarker(e))
          count(`${(e.details as { strategy: string }).strategy}-marker`);
        else if (e.type === "compaction")
          count(e.firstKeptEntryId === e.id ? "compaction-retain-none" : "compaction-kept");
        if (e.type === "compaction" && !isCheckpointMarker(e)) {
          count(`compaction-${(e.details as { strategy?: string } | undefined)?.strategy ?? "native"}`);
          // Native compaction right after a tool checkpoint: preserve's overflow route.
          const parent = ledger.entries.find((p) => p.id === e.parentId);
          if (parent && isToolCheckpoint(parent) && !(e.details as { strategy?: string } | undefined)?.strategy)
            count(`native-after-${parent.customType}`);
        }
        if (e.type === "custom_message" && isToolCheckpoint(e))
          count(`${e.customType}${(e.details as RangeDetails).range.afterId === null ? "" : "-chained"}`);
        if (e.type === "custom_message" && e.customType === LedgerType.recap) count("recap");
        if (e.type === "context_edit") count(e.replacement === null ? "edit-omit" : "edit-replace");
        if (e.type === "custom" && e.customType === LedgerType.restore) {
          const data = e.data as RestoreData;
          count(
            `restore-${data.act}${data.throughId !== undefined || data.firstKeptEntryId !== undefined ? "-newest" : ""}`,
          );
        }
      }
    }
    const required = [
      "message:user",
      "assistant-text",
      "thinking",
      "single-call",
      "parallel-calls",
      "result-ok",
      "result-error",
      "result-image",
      "message:bashExecution",
      "bash-excluded",
      "custom_message",
      "custom",
      "label",
      "compaction-kept",
      "compaction-retain-none",
      "navigation",
      "leaf-not-last",
      "branch_summary",
      "model_change",
      "thinking_level_change",
      "message:system",
      "session_info",
      "usage",
      "edit-omit",
      "edit-replace",
      "fold-root",
      "fold-target",
      "fold-keeps-results",
      "restore-fold",
      "restore-fold-newest",
      "restore-compaction",
      "restore-compaction-newest",
      "preserve-marker",
      "digest-marker",
      "compaction-native",
      "compaction-checkpoint",
      "compaction-planned",
      "recap",
      "context-ledger/preserve",
      "context-ledger/preserve-chained",
      "context-ledger/digest",
      "native-after-context-ledger/preserve",
      "restore-preserve",
      "restore-preserve-newest",
      "restore-digest",
    ];
    const missing = required.filter((key) => !seen.get(key));
    expect(missing).toEqual([]);
  });
});
