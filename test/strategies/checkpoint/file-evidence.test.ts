import { describe, expect, it } from "vitest";
import { classifyRead } from "../../../src/strategies/shared/file-evidence.ts";
import { planCheckpoint } from "../../../src/strategies/checkpoint/planner.ts";
import { FILES_NOTE } from "../../../src/strategies/checkpoint/render.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { inputFor, UNCAPPED } from "./fixtures.ts";

/** Compacted history touching `paths` (reads and edits), then a tail the test fills in. */
function history(reads: string[], edits: string[]) {
  const b = new LedgerBuilder();
  b.user("start");
  for (const path of reads) b.tool("read", { path }, `content of ${path}`);
  for (const path of edits)
    b.tool("edit", { path, edits: [{ oldText: "a", newText: "b" }] }, "Successfully replaced text");
  const tailStart = b.user("continue");
  return { b, tailStart };
}

/** The file-list line of `path` in the checkpoint. */
function lineOf(summary: string, path: string): string | undefined {
  return summary
    .split("\n")
    .find((l) => (l.startsWith("[read] ") || l.startsWith("[modified] ") ? l.includes(`"${path}"`) : false));
}

function plan(b: LedgerBuilder, tailStart: string) {
  return planCheckpoint(inputFor(b.entries, tailStart), UNCAPPED).summary;
}

describe("read completeness", () => {
  it("does not treat offset or limit alone as partial", () => {
    expect(classifyRead({ path: "a" }, "x", undefined, false)).toBe("full");
    expect(classifyRead({ path: "a", offset: 1, limit: 5000 }, "x", undefined, false)).toBe("full");
    expect(classifyRead({ path: "a", offset: 2 }, "x", undefined, false)).toBe("partial");
  });

  it("honours continuation notices and truncation metadata, old and new", () => {
    expect(
      classifyRead(
        { path: "a" },
        "x\n\n[Showing lines 1-2000 of 5000. Use offset=2001 to continue.]",
        undefined,
        false,
      ),
    ).toBe("partial");
    expect(
      classifyRead(
        { path: "a", limit: 10 },
        "x\n\n[40 more lines in file. Use offset=11 to continue.]",
        undefined,
        false,
      ),
    ).toBe("partial");
    expect(
      classifyRead(
        { path: "a" },
        "x\n\n... (12 more lines not shown. Use offset=40 to continue reading)",
        undefined,
        false,
      ),
    ).toBe("partial");
    expect(classifyRead({ path: "a" }, "x", { truncation: { truncated: true } }, false)).toBe("partial");
    expect(classifyRead({ path: "a" }, "Use offset=3 to continue\nis only file text", undefined, false)).toBe("full");
  });

  it("marks replaced output as uncertain", () => {
    expect(classifyRead({ path: "a" }, "x", undefined, true)).toBe("uncertain");
  });
});

describe("file-list annotations", () => {
  it("labels a complete, partial and replaced read in the tail", () => {
    const { b, tailStart } = history(["full.ts", "part.ts", "repl.ts", "none.ts"], []);
    b.tool("read", { path: "full.ts", offset: 1, limit: 9999 }, "all of it");
    b.tool("read", { path: "part.ts" }, "head\n\n[9 more lines in file. Use offset=3 to continue.]");
    const { result } = b.tool("read", { path: "repl.ts" }, "orig");
    b.edit(result, "replacement text");
    const summary = plan(b, tailStart);
    expect(lineOf(summary, "full.ts")).toBe('[read] "full.ts" (full read in tail)');
    expect(lineOf(summary, "part.ts")).toBe('[read] "part.ts" (partial read in tail)');
    expect(lineOf(summary, "repl.ts")).toBe('[read] "repl.ts" (read output in tail)');
    expect(lineOf(summary, "none.ts")).toBe('[read] "none.ts"');
  });

  it("never combines partial pages into a full read, and a later partial does not hide an earlier full one", () => {
    const { b, tailStart } = history(["paged.ts", "both.ts"], []);
    b.tool("read", { path: "paged.ts", limit: 10 }, "p1\n\n[10 more lines in file. Use offset=11 to continue.]");
    b.tool("read", { path: "paged.ts", offset: 11 }, "p2");
    b.tool("read", { path: "both.ts" }, "whole");
    b.tool("read", { path: "both.ts", offset: 5, limit: 2 }, "part");
    const summary = plan(b, tailStart);
    expect(lineOf(summary, "paged.ts")).toBe('[read] "paged.ts" (partial read in tail)');
    expect(lineOf(summary, "both.ts")).toBe('[read] "both.ts" (full read in tail)');
  });

  it("labels a visible write, a read made stale by a later edit, and a modified path with no evidence", () => {
    const { b, tailStart } = history([], ["w.ts", "stale.ts", "blind.ts"]);
    b.tool("write", { path: "/repo/w.ts", content: "new body" }, "Wrote 8 bytes");
    b.tool("read", { path: "stale.ts" }, "before");
    b.tool("edit", { path: "stale.ts", edits: [] }, "ok");
    const summary = plan(b, tailStart);
    expect(lineOf(summary, "w.ts")).toBe('[modified] "w.ts" (write content in tail)');
    expect(lineOf(summary, "stale.ts")).toBe('[modified] "stale.ts" (read in tail, then edited)');
    expect(lineOf(summary, "blind.ts")).toBe('[modified] "blind.ts" (no read-tool output in tail)');
  });

  it("says order uncertain for concurrent same-path siblings", () => {
    const { b, tailStart } = history([], ["sib.ts", "wsib.ts"]);
    b.assistant("", [
      { id: "s1", name: "read", args: { path: "sib.ts" } },
      { id: "s2", name: "edit", args: { path: "sib.ts", edits: [] } },
      { id: "s3", name: "write", args: { path: "wsib.ts", content: "x" } },
      { id: "s4", name: "edit", args: { path: "wsib.ts", edits: [] } },
    ]);
    // Results arrive read-first, which proves nothing about the order the tools ran in.
    b.toolResult("s1", "read", "snapshot");
    b.toolResult("s2", "edit", "ok");
    b.toolResult("s3", "write", "ok");
    b.toolResult("s4", "edit", "ok");
    const summary = plan(b, tailStart);
    expect(lineOf(summary, "sib.ts")).toBe('[modified] "sib.ts" (read in tail; order uncertain)');
    expect(lineOf(summary, "wsib.ts")).toBe('[modified] "wsib.ts" (write in tail; order uncertain)');
  });

  it("counts mutations whose message was omitted and nested calls, but not failed edits", () => {
    const { b, tailStart } = history(["hidden.ts", "nested.ts", "failed.ts"], []);
    b.tool("read", { path: "hidden.ts" }, "v1");
    const omitted = b.tool("edit", { path: "hidden.ts", edits: [] }, "ok");
    b.edit(omitted.call, null);
    b.edit(omitted.result, null);
    b.tool("read", { path: "nested.ts" }, "v1");
    b.assistant("", [{ id: "n1", name: "codemode", args: { script: "..." } }]);
    b.toolResult("n1", "codemode", "done", {
      nestedCalls: {
        complete: true,
        calls: [{ id: "x", name: "write", arguments: { path: "nested.ts" }, status: "ok" }],
      },
    });
    b.tool("read", { path: "failed.ts" }, "v1");
    b.tool("edit", { path: "failed.ts", edits: [] }, "no match", { isError: true });
    const summary = plan(b, tailStart);
    expect(lineOf(summary, "hidden.ts")).toBe('[read] "hidden.ts" (read in tail, then edited)');
    expect(lineOf(summary, "nested.ts")).toBe('[read] "nested.ts" (read in tail, then edited)');
    expect(lineOf(summary, "failed.ts")).toBe('[read] "failed.ts" (full read in tail)');
  });

  it("does not count reads from the compacted prefix or a re-read after the edit as stale", () => {
    const { b, tailStart } = history(["fresh.ts"], []);
    b.tool("edit", { path: "fresh.ts", edits: [] }, "ok");
    b.tool("read", { path: "fresh.ts" }, "after edit");
    expect(lineOf(plan(b, tailStart), "fresh.ts")).toBe('[read] "fresh.ts" (full read in tail)');
  });

  it("states once that labels hold as of this checkpoint", () => {
    const { b, tailStart } = history(["a.ts"], []);
    const summary = plan(b, tailStart);
    expect(summary.split("\n").filter((l) => l === FILES_NOTE)).toHaveLength(1);
    expect(FILES_NOTE).toContain("as of this checkpoint");
  });
});
