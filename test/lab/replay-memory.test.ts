// What the replay lets go of, so a long session is not held twice: the entries a caller hands over, and each entry
// once the recall index has rendered it. The figures must not change.
import { describe, expect, it } from "vitest";
import { DEFAULT_PRICES } from "../../src/lab/metrics.ts";
import { branchIndex } from "../../src/lab/recoverability.ts";
import { replayBranch, replaySession } from "../../src/lab/replay.ts";
import { defaultSettings } from "../../src/lab/row.ts";
import { selectRows } from "../../src/lab/rows/registry.ts";
import { generateSession } from "../../src/lab/sample/generate.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { buildTranscript } from "../../src/recall/transcript.ts";
import { namesHeld } from "../../src/strategies/digest/plan.ts";
import { canonicalNamesHeld } from "../../src/strategies/digest/render.ts";
import { plannedMemosHeld } from "../../src/strategies/planned/planner.ts";

/** Message fields of `entries` that read through a getter (moved to the spill file). */
function spilledFields(entries: readonly SessionEntry[]): number {
  let count = 0;
  const check = (record: object) => {
    for (const descriptor of Object.values(Object.getOwnPropertyDescriptors(record))) if (descriptor.get) count++;
  };
  for (const entry of entries) {
    if (entry.type !== "message") continue;
    check(entry.message);
    const content = (entry.message as { content?: unknown }).content;
    if (Array.isArray(content)) for (const block of content) if (block && typeof block === "object") check(block);
  }
  return count;
}

function sampleEntries(): SessionEntry[] {
  return generateSession(4242, 0, { tasks: 12 }).entries.filter((e): e is SessionEntry => e.type !== "session");
}

describe("replay memory", () => {
  it("the recall index rendered entry by entry is the index buildTranscript builds, and it clears each slot it rendered", () => {
    const { branch } = replayBranch(sampleEntries());
    const expected = buildTranscript(branch);
    const slots: (SessionEntry | undefined)[] = branch.slice();
    const index = branchIndex(slots);
    expect(index).toEqual(expected);
    expect(slots.every((slot) => slot === undefined)).toBe(true);
  });

  it("a session handed over is emptied and its long texts spilled, with the same figures for every row as one kept by its caller", async () => {
    const options = {
      settings: defaultSettings(40_000),
      rows: selectRows(undefined).factories,
      prices: DEFAULT_PRICES,
    };
    const kept = sampleEntries();
    const given = sampleEntries();
    const givenObjects = given.slice();
    const withoutHandOver = await replaySession({ name: "s", cwd: "/home/dev/src/app", entries: kept }, options);
    const withHandOver = await replaySession(
      { name: "s", cwd: "/home/dev/src/app", entries: given, handOver: true },
      options,
    );
    expect(kept.length).toBeGreaterThan(0);
    expect(given).toHaveLength(0);
    // The replay rewrote only what it was given: long texts of the handed-over messages read through getters.
    expect(spilledFields(givenObjects)).toBeGreaterThan(0);
    expect(spilledFields(kept)).toBe(0);
    const figures = (result: unknown) =>
      JSON.parse(JSON.stringify(result, (key, value) => (key === "latencyMs" ? undefined : value)));
    expect(figures(withHandOver)).toEqual(figures(withoutHandOver));
    // The digest rows read names into the process's table; a replayed session leaves none of them behind, so a
    // folder's earlier sessions do not stay in memory while the next ones replay.
    expect(namesHeld()).toBe(0);
    expect(canonicalNamesHeld()).toBe(0);
    // Nor do planned's memos: its views copy the branch (every entry of the session), its readings and transcripts
    // hold the session's messages.
    expect(plannedMemosHeld()).toBe(0);
    // The rows of ours acted, so the recall index was built and searched.
    expect(
      withHandOver.rows
        .filter((row) => row.info.family === "ours")
        .every((row) => row.compactions > 0 && row.recoverability !== undefined),
    ).toBe(true);
  });
});
