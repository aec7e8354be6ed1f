import { describe, expect, it } from "vitest";
import { blocksOf, rankDeletions } from "../../../src/strategies/planned/heuristic.ts";
import { buildTranscript } from "../../../src/strategies/planned/transcript.ts";
import { assistant, call, filler, result, text, thinking, user } from "./fixtures.ts";

const linesOf = (messages: Parameters<typeof buildTranscript>[0]["messages"]) => buildTranscript({ messages });
const covered = (ranges: { from: number; to: number }[]) =>
  ranges.flatMap((r) => Array.from({ length: r.to - r.from + 1 }, (_, i) => r.from + i));

describe("heuristic ranking", () => {
  const messages = [
    user("read the config"),
    assistant(thinking(filler("think", 6)), call("a", "read", { path: "cfg.ts" })),
    result("a", "read", filler("old cfg", 5)),
    assistant(call("b", "bash", { command: "ls -la" })),
    result("b", "bash", filler("entry", 4)),
    assistant(call("c", "read", { path: "cfg.ts" })),
    result("c", "read", filler("new cfg", 5)),
    assistant(call("d", "bash", { command: "npm test" })),
    result("d", "bash", "Tests 3 passed\nDuration 10ms"),
    assistant(call("e", "bash", { command: "npm test" })),
    result("e", "bash", "Tests 4 passed\nDuration 12ms"),
    assistant(call("f", "bash", { command: "ls src" })),
    result("f", "bash", filler("src entry", 3)),
    assistant(text("all good")),
  ];
  const lines = linesOf(messages);
  const ranges = rankDeletions(lines);
  const lineOf = (needle: string) => lines.findIndex((l) => l.text.startsWith(needle)) + 1;
  const rankOf = (needle: string) => ranges.findIndex((r) => r.from <= lineOf(needle) && lineOf(needle) <= r.to);

  it("ranks thinking, repeated output, superseded reads and stale listings before other output", () => {
    const order = [
      rankOf("think 0"),
      rankOf("Tests 3 passed"),
      rankOf("old cfg 0"),
      rankOf("entry 0"),
      rankOf("new cfg 0"),
    ];
    expect(order.every((r) => r >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it("never proposes user text, structure, the newest prose or overlapping lines", () => {
    const all = covered(ranges);
    expect(new Set(all).size).toBe(all.length);
    for (const n of all) expect(lines[n - 1].kind).not.toBe("structure");
    expect(all).not.toContain(lineOf("read the config"));
    expect(all).not.toContain(lineOf("all good"));
  });

  it("keeps the head and tail of a long output", () => {
    const long = linesOf([
      user("go"),
      assistant(call("x", "bash", { command: "build" })),
      result("x", "bash", filler("out", 100)),
    ]);
    const first = rankDeletions(long)[0];
    const start = long.findIndex((l) => l.text.startsWith("out 0"));
    expect(first).toEqual({ from: start + 13, to: start + 88 });
  });

  it("proposes long tool-call arguments", () => {
    const big = linesOf([
      user("write"),
      assistant(call("w", "write", { path: "a", content: "z".repeat(2_000) })),
      result("w", "write", "ok"),
      assistant(text("done")),
    ]);
    const argLine = big.findIndex((l) => l.text.includes("zzzz")) + 1;
    expect(rankDeletions(big)[0]).toEqual({ from: argLine, to: argLine });
  });

  it("groups image placeholders into the block they interrupt", () => {
    const blocks = blocksOf([
      { text: '[tool result: read "p.png"]', kind: "structure" },
      { text: "a", kind: "text" },
      { text: "[image]", kind: "structure" },
      { text: "b", kind: "text" },
    ]);
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toMatchObject({ start: 1, end: 4 });
  });

  it("is deterministic", () => {
    expect(JSON.stringify(rankDeletions(linesOf(structuredClone(messages))))).toBe(JSON.stringify(ranges));
  });
});

describe("heuristic ranking against the kept tail", () => {
  it("drops a listing that Pi keeps verbatim later: two identical 400-line outputs, one goes whole", async () => {
    const { planHeuristic } = await import("../../../src/strategies/planned/planner.ts");
    const { compactionInput } = await import("../../../src/strategies/contract.ts");
    const { branchOf } = await import("./fixtures.ts");
    const listing = Array.from({ length: 400 }, (_, i) => `src/module-${i}/index.ts`).join("\n");
    const messages = [
      user("map the repo"),
      assistant(call("a", "bash", { command: "find src -name '*.ts'" })),
      result("a", "bash", listing),
      assistant(call("b", "read", { path: "notes.md" })),
      result("b", "read", filler("note", 900)),
      assistant(text("noted")),
      user("again, after the pull"),
      assistant(call("c", "bash", { command: "find src -name '*.ts'" })),
      result("c", "bash", listing),
      assistant(text("same files")),
    ];
    // Pi keeps from the second listing's call: the region holds the first listing only.
    const branch = branchOf(messages);
    const input = compactionInput(
      {
        firstKeptEntryId: "e7",
        messagesToSummarize: messages.slice(0, 6),
        turnPrefixMessages: [],
        tokensBefore: 30_000,
      },
      { reason: "manual", branch, contextWindow: 128_000, cwd: "/p" },
    );
    const plan = planHeuristic(input, { retainRatio: 0.5, minRetainedTokens: 0, minSavedTokens: 0 });
    const survivors = plan.summary.split("\n").filter((l) => /^src\/module-\d+\/index\.ts$/.test(l));
    expect(survivors).toEqual([]);
    // The region's own content beyond the duplicate still gets the usual treatment (head and tail of the long read).
    expect(plan.summary).toContain("note 0 ");
  });
});
