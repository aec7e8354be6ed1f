// Case-insensitive search folds each rendered entry once, not once per search: the lab checks hundreds of probes
// against one index, and a model greps the same session again and again.
import { describe, expect, it, vi } from "vitest";
import { foldAtEachRead, grepTranscript } from "../../src/recall/search.ts";
import { DEFAULT_RECALL_LIMITS } from "../../src/recall/settings.ts";
import { buildTranscript } from "../../src/recall/transcript.ts";
import { Branch } from "./fixtures.ts";

const folded = vi.hoisted(() => ({ chars: 0 }));
vi.mock("../../src/recall/regex.ts", async (original) => {
  const actual = await original<typeof import("../../src/recall/regex.ts")>();
  return {
    ...actual,
    foldCase: (text: string) => {
      folded.chars += text.length;
      return actual.foldCase(text);
    },
  };
});

describe("case-insensitive search", () => {
  it("folds the index's text once over many searches, and finds the same matches", () => {
    const b = new Branch();
    b.user("Fix the Build on src/Auth.ts");
    b.toolResult("c1", "bash", `${"Line of OUTPUT with Mixed Case\n".repeat(200)}TokenExpired at the end`);
    b.user("Thanks");
    const index = buildTranscript(b.entries);
    const patterns = ["tokenexpired", "AUTH.TS", "mixed case", "thanks", "nowhere to be found"];
    folded.chars = 0;
    const first = patterns.map((pattern) => grepTranscript(index, { pattern, literal: true }, DEFAULT_RECALL_LIMITS));
    const once = folded.chars;
    const again = patterns.map((pattern) => grepTranscript(index, { pattern, literal: true }, DEFAULT_RECALL_LIMITS));
    // The patterns themselves are folded on every call; the entries' text only the first time.
    const patternChars = patterns.reduce((n, p) => n + p.length, 0);
    expect(once).toBeLessThanOrEqual(index.chars + patternChars);
    expect(folded.chars - once).toBe(patternChars);
    expect(again).toEqual(first);
    // "mixed case" is on 200 lines: a full page of them.
    expect(first.map((r) => r.ok && r.details.matches.length)).toEqual([1, 1, DEFAULT_RECALL_LIMITS.maxResults, 1, 0]);
  });

  it("keeps no folded copy of an entry its owner keeps out of memory, and finds the same matches", () => {
    const b = new Branch();
    b.user("Fix the Build on src/Auth.ts");
    b.toolResult("c1", "bash", `${"Line of OUTPUT with Mixed Case\n".repeat(200)}TokenExpired at the end`);
    const memoized = buildTranscript(b.entries);
    const index = buildTranscript(b.entries);
    const long = index.entries[1];
    foldAtEachRead(long);
    const search = (i: typeof index) =>
      grepTranscript(i, { pattern: "tokenexpired", literal: true }, DEFAULT_RECALL_LIMITS);
    folded.chars = 0;
    search(index);
    const first = folded.chars;
    const again = search(index);
    // The long entry is folded at each search, the other one once; the pattern at each call.
    expect(first).toBeGreaterThanOrEqual(long.text.length);
    expect(folded.chars - first).toBe(long.text.length + "tokenexpired".length);
    expect(again).toEqual(search(memoized));
  });
});
