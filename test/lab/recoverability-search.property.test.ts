// Recoverability's search settles most probes without paging through context_grep (see contextGrepSearch); on any
// branch its answer is the paged search's: found when the probe's entry is among the first pages' matches.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { batchedSearch, contextGrepSearch, indexedSearch, pagedSearch } from "../../src/lab/recoverability.ts";
import type { Probe } from "../../src/lab/probes.ts";
import { buildTranscript } from "../../src/recall/transcript.ts";
import { Branch, toolCall } from "../recall/fixtures.ts";
import { runs } from "../support/fast-check.ts";

/** Few distinct words in mixed case, so texts repeat across entries and lines, as real probes' texts do. */
const wordArb = fc.constantFrom("Alpha", "alpha", "BETA", "beta-2", "src/a.ts", "ERR_X", "Σigma", "ς", "İx", "x");
const lineArb = fc.array(wordArb, { minLength: 0, maxLength: 6 }).map((w) => w.join(" "));
const textArb = fc.array(lineArb, { minLength: 1, maxLength: 8 }).map((l) => l.join("\n"));
/** Some entries are long enough that the indexed search moves their rendering to the spill file. */
const entryArb = fc.record({
  kind: fc.constantFrom("user", "assistant", "tool", "recall"),
  text: fc.tuple(textArb, fc.boolean()).map(([text, long]) => (long ? `${text}\n${"filler Alpha ".repeat(90)}` : text)),
});

describe("recoverability's search", () => {
  it("answers as paging through context_grep does, for every probe text and entry", () => {
    fc.assert(
      fc.property(
        fc.array(entryArb, { minLength: 1, maxLength: 60 }),
        fc.array(fc.tuple(fc.nat(), fc.oneof(wordArb, lineArb)), { minLength: 1, maxLength: 12 }),
        (entries, probes) => {
          const b = new Branch();
          entries.forEach((e, i) => {
            if (e.kind === "user") b.user(e.text);
            else if (e.kind === "assistant") b.assistant(e.text);
            else if (e.kind === "tool") b.toolResult(`c${i}`, "bash", e.text);
            else {
              // A recall tool's call and result: traffic the search skips.
              b.assistant([toolCall("context_grep", { pattern: e.text }, `r${i}`)]);
              b.toolResult(`r${i}`, "context_grep", e.text);
            }
          });
          const index = buildTranscript(b.entries);
          const search = contextGrepSearch(index);
          const asked = probes.map(([at, text]) => ({ text, entryId: b.entries[at % b.entries.length].id }) as Probe);
          // All asked but the last, which the batched search answers on its own.
          const batched = batchedSearch(index, asked.slice(0, -1));
          // The same pass run while the index is built, its texts moved to the spill file as it goes.
          const indexed = indexedSearch(b.entries.slice(), asked.slice(0, -1));
          for (const probe of asked) {
            const paged = pagedSearch(index, probe);
            expect(search(probe)).toBe(paged);
            expect(batched(probe)).toBe(paged);
            expect(indexed(probe)).toBe(paged);
          }
          expect(indexed.scanned).toBe(batched.scanned);
          // One pass over the index at most, however many probes were asked.
          expect(batched.scanned).toBeLessThanOrEqual(index.chars);
        },
      ),
      // Cheap (in-memory branches): one and a half times the global count.
      { numRuns: runs(1.5) },
    );
  });

  it("finds a probe whose entry follows more matching lines than the pages hold only by paging", () => {
    const b = new Branch();
    for (let i = 0; i < 200; i++) b.user(`needle ${i}`);
    const last = b.user("the last needle");
    const index = buildTranscript(b.entries);
    // 200 matching entries before it: 20 pages of 8 reach 160 of them, so the last one is out of reach.
    expect(contextGrepSearch(index)({ text: "needle", entryId: last.id } as Probe)).toBe(false);
    expect(contextGrepSearch(index)({ text: "needle", entryId: b.entries[3].id } as Probe)).toBe(true);
    expect(contextGrepSearch(index)({ text: "absent", entryId: b.entries[3].id } as Probe)).toBe(false);
    const asked = [
      { text: "needle", entryId: last.id },
      { text: "NEEDLE", entryId: b.entries[3].id },
      { text: "absent", entryId: b.entries[3].id },
    ] as Probe[];
    const batched = batchedSearch(index, asked);
    expect(asked.map((p) => batched(p))).toEqual([false, true, false]);
    const indexed = indexedSearch(b.entries.slice(), asked);
    expect(asked.map((p) => indexed(p))).toEqual([false, true, false]);
  });

  it("settles many rare probes in one pass over the index, where one by one each read the index to its entry", () => {
    const b = new Branch();
    for (let i = 0; i < 400; i++) b.user(`line ${i} with word${i}x in it`);
    const index = buildTranscript(b.entries);
    // Each probe's text occurs in its own entry only, near the end of the branch.
    const asked = Array.from(
      { length: 100 },
      (_, k) => ({ text: `word${300 + k}x`, entryId: b.entries[300 + k].id }) as Probe,
    );
    const batched = batchedSearch(index, asked);
    expect(asked.every((p) => batched(p))).toBe(true);
    expect(batched.scanned).toBeLessThanOrEqual(index.chars);
  });
});
