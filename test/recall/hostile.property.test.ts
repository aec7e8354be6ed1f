// Recall tools under hostile arguments: whatever a model passes (megabyte strings, control bytes, broken or
// backtracking regexes, forged cursors), each call returns a bounded page or a short error, in bounded work.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { grepTranscript, listEntries, showEntry, type SearchOutcome } from "../../src/recall/search.ts";
import { DEFAULT_RECALL_LIMITS as L } from "../../src/recall/settings.ts";
import { STEP_WORK } from "../../src/recall/regex.ts";
import { buildTranscript } from "../../src/recall/transcript.ts";
import { anyJsonArb, assertBounded, hostileStringArb, prototypeKeyArb, regexArb } from "../arbitraries/hostile.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { Branch, toolCall } from "./fixtures.ts";

function history() {
  const b = new Branch();
  b.user("build and test");
  b.assistant([toolCall("bash", { command: "npm test" }, "c1")]);
  b.toolResult(
    "c1",
    "bash",
    Array.from({ length: 400 }, (_, i) => `${"a".repeat(i % 90)}Z case ${i}: error TS${i}.${i}.1 (warning)`).join("\n"),
  );
  b.assistant([toolCall("context_grep", { pattern: "error" }, "g1")]);
  b.toolResult("g1", "context_grep", "1 matching line");
  return buildTranscript(b.entries);
}

function bounded<D>(outcome: SearchOutcome<D>): void {
  if (outcome.ok) expect(outcome.text.length).toBeLessThanOrEqual(L.maxChars + 200);
  else expect(outcome.error.length).toBeLessThan(600);
}

describe("recall under hostile arguments (fast-check)", () => {
  const index = history();

  it("every tool answers any string argument with a bounded page or a short error", async () => {
    await assertBounded(
      fc.property(
        hostileStringArb,
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        (value, literal, caseSensitive, includeRecall) => {
          bounded(grepTranscript(index, { pattern: value, literal, caseSensitive, includeRecall }, L));
          bounded(grepTranscript(index, { pattern: "error", cursor: value }, L));
          bounded(showEntry(index, { id: value }, L));
          bounded(showEntry(index, { id: "e3", cursor: value }, L));
          bounded(listEntries(index, { role: value }, L));
          bounded(listEntries(index, { cursor: value }, L));
        },
      ),
    );
  });

  it("a role named like a prototype member is refused as an unknown role (item 8)", async () => {
    await assertBounded(
      fc.property(prototypeKeyArb, fc.constantFrom("", " ", "  "), (name, pad) => {
        const outcome = listEntries(index, { role: `${pad}${name}${pad}` }, L);
        expect(outcome.ok).toBe(false);
        if (!outcome.ok) expect(outcome.error).toMatch(/^unknown role /);
      }),
    );
  });

  it("a summary of any JSON value (object, number, null) renders, lists and greps (item 5)", async () => {
    await assertBounded(
      fc.property(anyJsonArb, fc.constantFrom("compaction", "branch_summary"), (summary, type) => {
        const b = new Branch();
        b.user("before");
        const last = b.entries[b.entries.length - 1];
        const odd = {
          type,
          id: "odd00001",
          parentId: last.id,
          timestamp: "2026-01-01T00:00:00.000Z",
          summary,
          firstKeptEntryId: last.id,
          fromId: last.id,
          tokensBefore: 1,
        } as unknown as SessionEntry;
        const index = buildTranscript([...b.entries, odd]);
        bounded(listEntries(index, {}, L));
        bounded(grepTranscript(index, { pattern: "." }, L));
        bounded(showEntry(index, { id: "odd00001" }, L));
      }),
    );
  });

  it("any regex either is refused with a reason or runs within the work cap", async () => {
    await assertBounded(
      fc.property(regexArb, fc.boolean(), (pattern, caseSensitive) => {
        const outcome = grepTranscript(index, { pattern, caseSensitive }, L);
        bounded(outcome);
        if (outcome.ok) expect(outcome.details.work).toBeLessThanOrEqual(L.maxScanWork + 2 * STEP_WORK + index.chars);
      }),
    );
  });
});
