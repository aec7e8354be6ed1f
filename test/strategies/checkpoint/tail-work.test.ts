// A compaction's file evidence and its plan check read the entries from the kept one on, not the branch before it:
// the lab plans hundreds of compactions on a long session, and a scan of the whole branch at each one made its cost
// grow with the square of the session.
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../../src/log/entries.ts";
import { entryMessages, type ProjectedEntry } from "../../../src/projection/project.ts";
import { validatePlan } from "../../../src/strategies/shared/compaction-effects.ts";
import { annotateFiles } from "../../../src/strategies/shared/file-evidence.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { CWD } from "./fixtures.ts";

/** `branch` behind a proxy that counts the entries read before `before`. */
function counting(branch: readonly SessionEntry[], before: number) {
  const reads = { early: 0 };
  const proxy = new Proxy(branch as SessionEntry[], {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key) && Number(key) < before) reads.early++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { proxy, reads };
}

/** A long history of reads and edits, then a tail with a read, an edit and a write. */
function longBranch(steps: number) {
  const b = new LedgerBuilder();
  b.user("start");
  for (let i = 0; i < steps; i++) {
    b.tool("read", { path: `src/f${i % 40}.ts` }, `content ${i}`);
    b.tool(
      "edit",
      { path: `src/f${i % 40}.ts`, edits: [{ oldText: "a", newText: "b" }] },
      "Successfully replaced text",
    );
  }
  const kept = b.user("continue");
  b.tool("read", { path: "src/f1.ts" }, "content of f1");
  b.tool("edit", { path: "src/f2.ts", edits: [{ oldText: "a", newText: "b" }] }, "Successfully replaced text");
  b.tool("write", { path: "src/new.ts", content: "export {};" }, "Wrote src/new.ts");
  const branch = b.entries;
  return { branch, rawTailStart: branch.findIndex((e) => e.id === kept), kept };
}

describe("work from the kept entry on", () => {
  it("the tail's file evidence reads no entry before the kept one, and labels as before", () => {
    const { branch, rawTailStart } = longBranch(2000);
    const entries: ProjectedEntry[] = branch
      .slice(rawTailStart)
      .map((sourceEntry) => ({ sourceEntry, messages: entryMessages(sourceEntry) }));
    const input = {
      entries,
      tailStart: 0,
      rawTailStart,
      replaced: new Set<string>(),
      cwd: CWD,
      lists: { read: ["src/f1.ts"], modified: ["src/f2.ts", "src/new.ts"] },
      startup: new Map(),
      ambiguous: new Set<string>(),
    };
    const expected = annotateFiles({ ...input, branch });
    const { proxy, reads } = counting(branch, rawTailStart);
    expect(annotateFiles({ ...input, branch: proxy })).toEqual(expected);
    expect(expected.read[0].annotation).toBe("full read in tail");
    expect(reads.early).toBe(0);
  });

  it("the plan check finds a kept entry near the leaf without reading the branch before it", () => {
    const { branch, rawTailStart, kept } = longBranch(2000);
    const { proxy, reads } = counting(branch, rawTailStart);
    const plan = { summary: "s", firstKeptEntryId: kept, details: { v: 1, strategy: "checkpoint" } };
    expect(validatePlan(plan as never, proxy, "checkpoint")).toBeUndefined();
    expect(reads.early).toBe(0);
    expect(validatePlan({ ...plan, firstKeptEntryId: "nowhere" } as never, branch, "checkpoint")).toBe(
      "the strategy kept an entry that is not on the branch",
    );
  });
});
