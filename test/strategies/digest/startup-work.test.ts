// A session of one long task never closes its startup interval (the first user message up to the second), so every
// digest covers steps inside it and asks which of them are startup reads. That question used to scan the whole
// interval, and the whole branch for context edits, at every digest: a one-task session of thousands of reads made the
// digest rows, in the lab and on the host's turn_end, grow with the square of the session (10.5 MB of such reads spent
// 1.4 of its 11.7 CPU s there, 5.9 million entries read over 624 digests). The answer for a digest's targets needs only
// the targets' own steps and what an index, kept as the branch grows, says about the interval.
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../../src/log/entries.ts";
import { startupReadIds } from "../../../src/strategies/digest/plan.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { countedBranch } from "../../support/counted-branch.ts";

const CWD = "/home/dev/p";

/** One task of `steps` reads of distinct files; `instructionRead` makes the agent read AGENTS.md first. */
function oneTask(steps: number, instructionRead: boolean): SessionEntry[] {
  const b = new LedgerBuilder({ pad: 6 });
  b.user("audit every module for unused exports");
  if (instructionRead) {
    b.assistant("", [{ id: "agents", name: "read", args: { path: "AGENTS.md" } }]);
    b.toolResult("agents", "read", "Start with src/m7/f7.ts and src/m9/f9.ts.");
  }
  for (let i = 0; i < steps; i++) {
    b.assistant("", [{ id: `r${i}`, name: "read", args: { path: `src/m${i}/f${i}.ts` } }]);
    b.toolResult(`r${i}`, "read", `export const v${i} = ${i};`);
  }
  return b.entries;
}

/**
 * Grow a counted branch entry by entry and ask for the startup reads of each new `every` entries, as digests do: in
 * whole steps (a call and its result), the user message at 0 leaving each step's result at an even index.
 */
function digestsOver(
  entries: readonly SessionEntry[],
  every: number,
  contextFiles: { path: string; content: string }[],
) {
  const { branch, reads } = countedBranch();
  const found = new Set<string>();
  for (let i = 0; i < entries.length; i++) {
    branch.push(entries[i]);
    if (i === 0 || i % every !== 0) continue;
    const targets = new Set(entries.slice(i + 1 - every, i + 1).map((e) => e.id));
    const input = { branch, limitId: entries[i].id, contextWindow: 128_000, usageTokens: null, cwd: CWD, contextFiles };
    for (const id of startupReadIds(input, targets)) found.add(id);
  }
  return { reads: reads(), found };
}

const resultOf = (entries: readonly SessionEntry[], callId: string) =>
  entries.find((e) => e.type === "message" && (e.message as { toolCallId?: string }).toolCallId === callId)?.id;

describe("startup reads asked at every digest of one long task", () => {
  it("read each entry of the branch a bounded number of times, with or without instructions from Pi", () => {
    const entries = oneTask(3_000, false);
    const agents = [{ path: `${CWD}/AGENTS.md`, content: "Read src/m7/f7.ts before anything else." }];
    for (const contextFiles of [[], agents]) {
      const { reads, found } = digestsOver(entries, 40, contextFiles);
      // 150 digests over 6,000 entries: a scan of the interval at each would read about 450,000 entries.
      expect(reads).toBeLessThanOrEqual(8 * entries.length);
      expect([...found]).toEqual(contextFiles.length ? [resultOf(entries, "r7")] : []);
    }
  });

  it("still find the reads an instruction file the agent read names, anywhere in the interval", () => {
    const entries = oneTask(400, true);
    const { found } = digestsOver(entries, 40, []);
    expect([...found].sort()).toEqual(
      [resultOf(entries, "agents"), resultOf(entries, "r7"), resultOf(entries, "r9")].sort(),
    );
  });
});
