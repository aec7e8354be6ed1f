// The "fold (notice policy)" row: budget notices from the host's own rule drive a scripted agent that folds finished
// requests at the next user message. Window 10,000 and reserve 1,000 give a threshold of 9,000 and a notice level of
// 7,200; the notice itself is about 100 tokens.
import { describe, expect, it } from "vitest";
import type { ContextAction, Row, SessionSettings } from "../../src/lab/row.ts";
import { labRow } from "../../src/lab/rows/registry.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { chars, Ledger } from "./fixtures.ts";

const settings: SessionSettings = {
  cwd: "",
  window: 10_000,
  reserve: 1_000,
  keepRecent: 1_500,
  maskKeep: 1,
  clearing: { trigger: 150, keep: 1, clearAtLeast: 0 },
  prune: { protect: 50, minimum: 20 },
};

/** Feed entries the way the replay does (a request before each assistant message); note what came before each. */
async function drive(row: Row, entries: readonly SessionEntry[]) {
  const acts: { action: ContextAction; before: SessionEntry }[] = [];
  const tokens: number[] = [];
  let previous: SessionEntry | undefined;
  for (const entry of entries) {
    if (entry.type === "message" && entry.message.role === "assistant") {
      const action = await row.beforeRequest();
      if (action) acts.push({ action, before: previous! });
      tokens.push(row.view.markRequest().prompt);
    }
    row.append(entry);
    previous = entry;
  }
  return { acts, tokens };
}

const isNotice = (m: unknown) =>
  (m as { role?: string; customType?: string }).role === "custom" &&
  (m as { customType?: string }).customType === "context-ledger/notice";

/** `count` tasks of ~1,220 tokens: usage crosses 7,200 inside a task, and the next user message comes before 9,000. */
function tasks(count: number): Ledger {
  const l = new Ledger();
  for (let task = 0; task < count; task++) {
    l.user(`task ${task} ${chars(20)}`);
    l.call(chars(4_800));
    l.say(`finished task ${task}`);
  }
  return l;
}

describe("fold (notice policy) row", () => {
  it("is told once usage passes 0.8 of the threshold, folds at the next user message, and never reaches the threshold", async () => {
    const row = labRow("fold-notice", settings);
    const { acts, tokens } = await drive(row, tasks(12).entries);
    expect(acts.length).toBeGreaterThan(0);
    for (const { action, before } of acts) {
      expect(action.kind).toBe("fold");
      // The fold went in as the user's new request arrived: the entry before the request is that user message.
      expect(before.type === "message" && before.message.role).toBe("user");
    }
    expect(Math.max(...tokens)).toBeLessThan(9_000);
    // Notices are hidden messages in the ledger; the ones a fold answered left the view with the folded work.
    const notices = row.ledger!().filter(
      (e) => e.type === "custom_message" && e.customType === "context-ledger/notice" && e.display === false,
    );
    expect(notices.length).toBe(acts.length + row.view.messages.filter(isNotice).length);
  });

  it("each fold takes the work since the previous one: no entry is folded twice", async () => {
    const row = labRow("fold-notice", settings);
    const { acts } = await drive(row, tasks(40).entries);
    const ledger = row.ledger!();
    const folds = ledger.filter((e) => e.type === "custom_message" && e.customType === "context-ledger/fold");
    expect(folds.length).toBe(acts.length);
    expect(folds.length).toBeGreaterThan(2);
    folds.forEach((fold, k) => {
      const range = (fold as { details: { range: { afterId: string | null; throughId: string } } }).details.range;
      expect(range.afterId).toBe(k === 0 ? null : folds[k - 1].id);
      const from = range.afterId === null ? 0 : ledger.findIndex((e) => e.id === range.afterId) + 1;
      const through = ledger.findIndex((e) => e.id === range.throughId);
      const steps = ledger
        .slice(from, through + 1)
        .filter((e) => e.type === "message" && e.message.role === "assistant").length;
      expect((fold as { content: string }).content).toContain(`[folded: ${steps} assistant steps`);
    });
  });

  it("without a task boundary before the threshold, the checkpoint compaction is the safety net", async () => {
    const l = new Ledger();
    l.user(`one long task ${chars(20)}`);
    for (let i = 0; i < 12; i++) l.call(chars(4_000));
    l.say("done");
    const { acts, tokens } = await drive(labRow("fold-notice", settings), l.entries);
    expect(acts.map((a) => a.action.kind)).toContain("compaction");
    expect(acts.some((a) => a.action.kind === "fold")).toBe(false);
    expect(tokens.filter((t) => t > 10_000)).toEqual([]);
  });
});
