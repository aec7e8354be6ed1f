// Every walk over parent links ends on a link that is no id, on a missing entry and on a cycle, and visits no entry
// twice: a damaged session file (an id-less last line, a parent loop) must never make a walk run away.
import { describe, expect, it } from "vitest";
import { ActivePath, branchTo, walkParents } from "../../src/log/branch.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { attemptWindow } from "../../src/recall/attempts.ts";
import { createTranscript, syncTranscript } from "../../src/recall/transcript.ts";

const user = (id: unknown, parentId: unknown, text = "hi") =>
  ({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:00.000Z",
    message: { role: "user", content: text, timestamp: 0 },
  }) as unknown as SessionEntry;

/** Pi's lookup: a Map keyed by whatever `id` each line had, so an id-less line sits under `undefined`. */
function piLookup(entries: readonly SessionEntry[]): (id: string) => SessionEntry | undefined {
  const byId = new Map<unknown, SessionEntry>();
  for (const e of entries) byId.set((e as { id: unknown }).id, e);
  return (id) => byId.get(id);
}

/** Shapes of damage a walk meets: an id-less entry that Pi indexes under `undefined`, a self loop, a longer cycle. */
const damaged: [string, SessionEntry[], unknown][] = [
  ["an id-less leaf found under undefined", [user("a", null), user(undefined, undefined)], undefined],
  ["a child of an id-less entry", [user("a", null), user(undefined, undefined), user("b", undefined)], "b"],
  ["a numeric parent", [user("a", null), user("b", 42)], "b"],
  ["a self loop", [user("a", "a")], "a"],
  ["a three-entry cycle", [user("a", "c"), user("b", "a"), user("c", "b")], "c"],
];

describe("parent walks on damaged links (item 1)", () => {
  for (const [name, entries, leaf] of damaged) {
    it(`${name}: every walk ends, each entry at most once`, () => {
      const get = piLookup(entries);
      const visited: SessionEntry[] = [];
      walkParents(leaf, get, (e) => void visited.push(e));
      expect(new Set(visited).size).toBe(visited.length);
      expect(visited.length).toBeLessThanOrEqual(entries.length);

      const index = createTranscript();
      syncTranscript(index, leaf as string, get);
      expect(index.path.length).toBeLessThanOrEqual(entries.length);
      expect(attemptWindow(leaf as string, get, "call-1").length).toBeLessThanOrEqual(entries.length);
      const path = new ActivePath();
      path.moveTo(leaf as string, get);
      expect(path.entries.length).toBeLessThanOrEqual(entries.length);
      expect(branchTo(entries, leaf as string).length).toBeLessThanOrEqual(entries.length);
    });
  }

  it("a walk stops where the visitor says, and at a root", () => {
    const entries = [user("a", null), user("b", "a"), user("c", "b")];
    const seen: string[] = [];
    walkParents("c", piLookup(entries), (e) => {
      seen.push(e.id);
      return e.id !== "b";
    });
    expect(seen).toEqual(["c", "b"]);
    const all: string[] = [];
    walkParents("c", piLookup(entries), (e) => void all.push(e.id));
    expect(all).toEqual(["c", "b", "a"]);
  });
});
