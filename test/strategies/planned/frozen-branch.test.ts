// A frozen branch cannot change, so the planned planner's memos hold it as it is instead of a copy, and know it at
// once when it comes back. The lab hands every compaction one frozen copy of its row's branch: its scripted model
// reads the compaction's input, then the planner does, and each copy or element-by-element comparison of a 45,000-entry
// branch, at every one of a long session's compactions, made the replay's cost grow with the session's square.
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
// Pi does not export its preparation step; the test uses it to get a real boundary.
import { prepareCompaction } from "../../../node_modules/@earendil-works/pi-coding-agent/dist/core/compaction/compaction.js";
import { LEDGER_FACTS } from "../../../src/strategies/catalog.ts";
import { compactionInput } from "../../../src/strategies/contract.ts";
import { DEFAULT_PLANNED_OPTIONS, planPlanned } from "../../../src/strategies/planned/planner.ts";
import { BranchViews } from "../../../src/strategies/planned/view.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";

/** A frozen branch behind a proxy that counts the entries read through it. */
function counted(branch: readonly SessionEntry[]) {
  const reads = { entries: 0 };
  const proxy = new Proxy(Object.freeze(branch.slice()) as SessionEntry[], {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads.entries++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { proxy, reads };
}

function longBranch(steps: number): SessionEntry[] {
  const b = new LedgerBuilder();
  b.user("start the refactor");
  for (let i = 0; i < steps; i++) b.tool("read", { path: `src/f${i % 40}.ts` }, `content ${i} `.repeat(20));
  b.user("now the tests");
  b.tool("bash", { command: "npm test" }, "1 passed");
  return b.entries;
}

describe("a frozen branch is held, not copied", () => {
  it("the branch memo answers a frozen branch it has read without reading an entry", () => {
    const { proxy, reads } = counted(longBranch(2000));
    const views = new BranchViews();
    const state = views.state(proxy, LEDGER_FACTS);
    reads.entries = 0;
    expect(views.state(proxy, LEDGER_FACTS)).toBe(state);
    expect(reads.entries).toBe(0);
  });

  it("a compaction's second reader (the planner after the scripted model) reads no entry of a frozen branch again", async () => {
    const { proxy, reads } = counted(longBranch(2000));
    const prep = prepareCompaction(proxy, { enabled: true, reserveTokens: 16_384, keepRecentTokens: 20_000 });
    expect(prep).toBeDefined();
    const input = compactionInput(prep!, { branch: proxy, contextWindow: 128_000, cwd: "/p" });
    const signal = new AbortController().signal;
    const options = { ...DEFAULT_PLANNED_OPTIONS, planner: "heuristic" as const };
    const first = await planPlanned(input, options, signal);
    reads.entries = 0;
    const second = await planPlanned(input, options, signal);
    expect(second.summary).toBe(first.summary);
    expect(second.firstKeptEntryId).toBe(first.firstKeptEntryId);
    // Only what a plan reads near the leaf, never the branch again.
    expect(reads.entries).toBeLessThan(100);
  });
});
