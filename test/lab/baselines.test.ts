// Each row on a tiny, hand-computed case. Token sizes (ceil(chars / 4)): user text of 40 chars = 10,
// a `read` call of {"path":"a.ts"} = ceil(19 / 4) = 5, a tool output of 400 chars = 100, "done" = 1.
import { describe, expect, it } from "vitest";
import { toolResultClearing } from "../../src/lab/baselines/clearing.ts";
import { observationMasking } from "../../src/lab/baselines/masking.ts";
import { noCompaction } from "../../src/lab/baselines/none.ts";
import { opencodePrune } from "../../src/lab/baselines/prune.ts";
import { truncateOldest } from "../../src/lab/baselines/truncate.ts";
import type { RequestTokens } from "../../src/lab/metrics.ts";
import type { ContextAction, Row, SessionSettings } from "../../src/lab/row.ts";
import { labRow } from "../../src/lab/rows/registry.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { chars, Ledger } from "./fixtures.ts";

const settings = (over: Partial<SessionSettings> = {}): SessionSettings => ({
  cwd: "",
  window: 1000,
  reserve: 100,
  keepRecent: 150,
  maskKeep: 1,
  clearing: { trigger: 150, keep: 1, clearAtLeast: 0 },
  prune: { protect: 50, minimum: 20 },
  ...over,
});

/** Feed entries to a row the way the replay does: a request before each assistant message. */
async function drive(
  row: Row,
  entries: readonly SessionEntry[],
): Promise<{ requests: RequestTokens[]; actions: (ContextAction | undefined)[] }> {
  const requests: RequestTokens[] = [];
  const actions: (ContextAction | undefined)[] = [];
  for (const entry of entries) {
    if (entry.type === "message" && entry.message.role === "assistant") {
      actions.push(await row.beforeRequest());
      requests.push(row.view.markRequest());
    }
    row.append(entry);
  }
  return { requests, actions };
}

/** U(10) A(5) R(100) A(5) R(100) A"done"(1) */
function twoReads(): Ledger {
  const l = new Ledger();
  l.user(chars(40));
  l.call(chars(400));
  l.call(chars(400));
  l.say("done");
  return l;
}

describe("no compaction", () => {
  it("grows with every entry and keeps the whole prefix cached", async () => {
    const { requests } = await drive(noCompaction(settings()), twoReads().entries);
    expect(requests).toEqual([
      { prompt: 10, cached: 0 },
      { prompt: 115, cached: 10 },
      { prompt: 220, cached: 115 },
    ]);
  });
});

describe("truncate oldest", () => {
  it("drops whole old turns until the context fits under window - reserve", async () => {
    const l = new Ledger();
    l.user(chars(40));
    l.call(chars(400));
    l.user(chars(40));
    l.call(chars(400));
    l.say("done");
    // threshold 120: before the second call the context is 10+5+100+10 = 125, so the first turn goes.
    const { requests, actions } = await drive(truncateOldest(settings({ window: 220, reserve: 100 })), l.entries);
    expect(requests).toEqual([
      { prompt: 10, cached: 0 },
      { prompt: 10, cached: 0 },
      { prompt: 115, cached: 10 },
    ]);
    expect(actions.map((a) => a?.kind)).toEqual([undefined, "truncation", undefined]);
    expect(actions[1]?.tokensBefore).toBe(125);
  });
});

describe("observation masking", () => {
  it("keeps only the last M tool outputs, breaking the cache at the masked one", async () => {
    // "[Old tool output omitted: 1 lines]" is 34 chars = 9 tokens.
    const { requests, actions } = await drive(observationMasking(settings({ maskKeep: 1 })), twoReads().entries);
    expect(requests[2]).toEqual({ prompt: 10 + 5 + 9 + 5 + 100, cached: 15 });
    expect(actions[2]?.kind).toBe("masking");
  });
});

describe("Anthropic-style tool-result clearing", () => {
  it("clears all but the last `keep` results once the full history passes the trigger", async () => {
    // "[Tool result cleared to save context]" is 37 chars = 10 tokens; full history 220 > trigger 150.
    const { requests, actions } = await drive(toolResultClearing(settings()), twoReads().entries);
    expect(requests[1]).toEqual({ prompt: 115, cached: 10 });
    expect(requests[2]).toEqual({ prompt: 10 + 5 + 10 + 5 + 100, cached: 15 });
    expect(actions[2]?.kind).toBe("clearing");
  });

  it("does nothing when the saving would be below clear_at_least", async () => {
    const { requests, actions } = await drive(
      toolResultClearing(settings({ clearing: { trigger: 150, keep: 1, clearAtLeast: 200 } })),
      twoReads().entries,
    );
    expect(requests[2]).toEqual({ prompt: 220, cached: 115 });
    expect(actions.every((a) => a === undefined)).toBe(true);
  });

  it("does nothing below the trigger", async () => {
    const { actions } = await drive(
      toolResultClearing(settings({ clearing: { trigger: 1000, keep: 1, clearAtLeast: 0 } })),
      twoReads().entries,
    );
    expect(actions.every((a) => a === undefined)).toBe(true);
  });
});

describe("OpenCode-style prune", () => {
  it("protects the last two user turns and prunes older outputs past the protected budget", async () => {
    const l = new Ledger();
    l.user(chars(40));
    l.call(chars(400));
    l.say("done");
    l.user(chars(40));
    l.call(chars(400));
    l.say("done");
    l.user(chars(40));
    l.say("done");
    // At the third user turn: walking back, turns 3 and 2 are protected; R1 (100) exceeds protect 50 and
    // saves 100 > 20, so it becomes "[Old tool result content cleared]" (33 chars = 9 tokens).
    const { requests, actions } = await drive(opencodePrune(settings()), l.entries);
    const last = requests[requests.length - 1];
    expect(last.prompt).toBe(10 + 5 + 9 + 1 + 10 + 5 + 100 + 1 + 10);
    expect(last.cached).toBe(15);
    expect(actions.filter(Boolean).map((a) => a?.kind)).toEqual(["prune"]);
  });

  it("does not prune when the saving is under the minimum", async () => {
    const l = new Ledger();
    l.user(chars(40));
    l.call(chars(400));
    l.say("done");
    l.user(chars(40));
    l.say("done");
    l.user(chars(40));
    l.say("done");
    const { actions } = await drive(opencodePrune(settings({ prune: { protect: 50, minimum: 150 } })), l.entries);
    expect(actions.every((a) => a === undefined)).toBe(true);
  });
});

describe("Pi native (simulated)", () => {
  it("compacts above window - reserve at Pi's own cut point, with a stand-in summary and Pi's file lists", async () => {
    const l = new Ledger();
    l.user(chars(40));
    l.call(chars(800), { path: "src/one.ts" });
    l.say("done");
    l.user(chars(40));
    const second = l.call(chars(800), { path: "src/two.ts" }, "edit");
    l.say("done");
    // Calls of {"path":"src/one.ts"} are ceil(25 / 4) = 7 tokens, outputs of 800 chars 200.
    // Requests: 10, 10+7+200 = 217, +1+10 = 228, +7+200 = 435 > 300: compaction before the last request.
    const row = labRow("native", settings({ window: 400, reserve: 100, keepRecent: 150 }));
    const { actions } = await drive(row, l.entries);
    const action = actions[actions.length - 1];
    expect(action?.kind).toBe("compaction");
    expect(action?.modelCall).toBe(true);
    expect(action?.tokensBefore).toBe(435);
    // Pi keeps from the last assistant call (the split turn's prefix is summarized separately).
    const compaction = row.ledger!().find((e) => e.type === "compaction");
    expect(compaction && compaction.type === "compaction" && compaction.firstKeptEntryId).toBe(second.call.id);
    expect(action?.sideCalls).toHaveLength(2);
    const roles = row.view.messages.map((m) => m.role);
    expect(roles).toEqual(["compactionSummary", "assistant", "toolResult", "assistant"]);
    const summary = (row.view.messages[0] as { summary: string }).summary;
    expect(summary).toContain("<read-files>\nsrc/one.ts\n</read-files>");
    // The edit of src/two.ts is in the kept tail, so Pi does not list it.
    expect(summary).not.toContain("src/two.ts");
    expect(summary).toContain("simulated summary");
  });
});

describe("fold policy", () => {
  it("folds the finished request at the next user message, keeping the user's words", async () => {
    const l = new Ledger();
    const u1 = l.user(chars(40, "u"));
    l.call(chars(400), { path: "src/one.ts" });
    l.say("all done");
    const u2 = l.user(chars(40, "v"));
    l.say("ok");
    const row = labRow("fold", settings());
    const { actions } = await drive(row, l.entries);
    expect(actions.map((a) => a?.kind)).toEqual([undefined, undefined, "fold"]);
    const view = row.view.messages;
    expect(view.map((m) => m.role)).toEqual(["user", "custom", "user", "assistant"]);
    expect(view[0]).toBe((u1 as { message: unknown }).message);
    expect(view[2]).toBe((u2 as { message: unknown }).message);
    const fold = view[1] as { customType: string; content: string; details: { range: { afterId: string } } };
    expect(fold.customType).toBe("context-ledger/fold");
    expect(fold.details.range.afterId).toBe(u1.id);
    expect(fold.content).toContain("Files touched: src/one.ts");
    expect(fold.content).toContain("Outcome: all done");
  });
});
