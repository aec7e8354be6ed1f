// After a native compaction the model sees only the steps Pi kept and those after them, yet the working-set digest
// bounded its raw tail by every tool step since its last digest, the hidden ones included. On many tiny steps that
// bound stayed above a batch for good, so the digest looked due at every boundary, and each look selected over the
// whole branch only to find the visible tail short of a batch: the lab's 10 MB session of tiny steps spent 22 of its
// 40 CPU s there. What lies before the view's start is never digested, so neither the bound nor the selection reads it.
import { describe, expect, it } from "vitest";
import { LEDGER_FACTS } from "../../../src/strategies/catalog.ts";
import { projectBranch } from "../../../src/projection/project.ts";
import { workingSetDigestAt } from "../../../src/strategies/digest/lab.ts";
import { branchLookup, selectDelta } from "../../../src/strategies/shared/delta.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { countedBranch } from "../../support/counted-branch.ts";

const CWD = "/home/dev/p";
const WINDOW = 128_000;

/** One tiny step: a user turn, three `bash` calls with a few short lines each, a one-line answer. */
function step(b: LedgerBuilder, n: number): { user: string; answer: string } {
  const user = b.user(`check item ${n} in src/mod${n % 40}.ts`);
  for (let k = 0; k < 3; k++) {
    const lines = Array.from({ length: 6 }, (_, j) => `${j + 1}: const item${n}_${k}_${j} = ${n * 7 + j};`);
    b.tool("bash", { command: `grep -n item${n} src/mod${(n + k) % 40}.ts` }, lines.join("\n"));
  }
  return { user, answer: b.assistant(`Item ${n} is fine.`) };
}

/** 1,200 tiny steps, then Pi's compaction keeping the last four of them: a long session as it is after compacting. */
function compactedSession(): { b: LedgerBuilder; kept: string } {
  const b = new LedgerBuilder({ pad: 6 });
  const users: string[] = [];
  for (let n = 0; n < 1_200; n++) users.push(step(b, n).user);
  b.compaction(users[1_196]);
  return { b, kept: users[1_196] };
}

describe("the working-set digest after a native compaction", () => {
  it("reads each entry a bounded number of times over many boundaries, and still digests the visible tail", () => {
    const { b } = compactedSession();
    const { branch, reads } = countedBranch(b.entries);
    let carry: unknown;
    let digests = 0;
    let views = 0;
    for (let n = 1_200; n < 1_600; n++) {
      const act = workingSetDigestAt({
        branch,
        stepEntryId: step(b, n).answer,
        stopReason: "stop",
        // Well under 80% of the window, as after a compaction: the batch decides, not the window.
        usageTokens: 40_000,
        contextWindow: WINDOW,
        cwd: CWD,
        view: () => {
          views++;
          return projectBranch(b.entries, LEDGER_FACTS).entries;
        },
        carry,
      });
      if (act.ok) {
        digests++;
        b.custom(act.fact.customType, act.fact.content as string, act.fact.details);
        carry = undefined;
      } else carry = act.carry;
    }
    // 12,800 entries and 400 boundaries: selecting over the whole branch at each read about 6.4 million entries.
    expect(reads()).toBeLessThanOrEqual(10 * b.entries.length);
    // The visible tail still makes batches, and the view is asked for only when one may be due.
    expect(digests).toBeGreaterThan(0);
    expect(views).toBeLessThanOrEqual(2 * digests);
  });

  it("selects over what the view shows, not over the steps the compaction hid", () => {
    const { b, kept } = compactedSession();
    const { branch, reads } = countedBranch(b.entries);
    step(b, 1_200);
    const limitId = b.entries[b.entries.length - 2].id;
    const view = projectBranch(b.entries, LEDGER_FACTS).entries;
    branchLookup(branch); // the index every planner keeps: one pass over the branch, made once
    const before = reads();
    const delta = selectDelta(branch, limitId, view)!;
    // Five steps are in view (four kept, one new): their 35 technical entries, not the branch's 9,600.
    expect(reads() - before).toBeLessThanOrEqual(5 * 8 + 2);
    expect(delta.units.length).toBe(5 * 3);
    // The first unit is the first call Pi kept, right after the kept user message.
    expect(delta.units[0].entryIds[0]).toBe(b.entries[b.entries.findIndex((e) => e.id === kept) + 1].id);
  });
});
