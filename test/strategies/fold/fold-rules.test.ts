import { describe, expect, it } from "vitest";
import { LiveLedger } from "../../../src/projection/live-ledger.ts";
import { renderFoldText } from "../../../src/strategies/fold/fold-message.ts";
import {
  ALREADY_COMPACTED,
  checkName,
  resolveTarget,
  validateTarget,
  type FoldView,
} from "../../../src/strategies/fold/targets.ts";
import { NOT_A_TARGET, renderTimeline } from "../../../src/strategies/fold/timeline.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { LEDGER_FACTS } from "../../../src/strategies/catalog.ts";

function view(b: LedgerBuilder, elsewhere: Record<string, string[]> = {}): FoldView {
  const live = new LiveLedger(LEDGER_FACTS);
  live.sync(b.leaf, (id) => b.byId().get(id));
  const labels: Record<string, string> = {};
  for (const [id, label] of Object.entries(live.state.labels)) if (live.indexOf(id) >= 0) labels[id] = label;
  return {
    path: live.entries,
    indexOf: (id) => live.indexOf(id),
    isHidden: (id) => live.isHidden(id),
    labels,
    exists: (id) => b.byId().has(id),
    labelledElsewhere: (n) => elsewhere[n] ?? [],
    revokedBy: (id) => live.state.revoked[id],
  };
}

describe("fold target rules", () => {
  it("labels resolve before entry ids, newest on the path first, then other branches", () => {
    const b = new LedgerBuilder();
    const u1 = b.user("one");
    const u2 = b.user("two");
    b.label(u1, "e001"); // a name that looks like an entry id still names its checkpoint
    b.label(u2, "dup");
    const u3 = b.user("three");
    b.label(u3, "dup");
    expect(resolveTarget("e001", view(b))).toEqual({ id: u1, label: "e001" });
    expect(resolveTarget("dup", view(b))).toEqual({ id: u3, label: "dup" });
    expect(resolveTarget("far", view(b, { far: ["x9"] }))).toEqual({ id: "x9", label: "far" });
  });

  it("rejects invented, off-branch, too-late and already-compacted targets with distinct messages", () => {
    const b = new LedgerBuilder();
    const u = b.user("start");
    const a = b.assistant("work");
    const offBranch = b.user("branch A");
    b.moveTo(a);
    const a2 = b.assistant("more");
    b.fold({ afterId: u, throughId: a2 }, "S");
    const req = b.assistant("", [{ id: "c", name: "context_compact" }]);
    const v = view(b);
    expect(validateTarget("current", req, v)).toMatchObject({ ok: false, error: expect.stringMatching(/not found/) });
    expect(validateTarget(offBranch, req, v)).toMatchObject({
      ok: false,
      error: expect.stringMatching(/not on the current branch/),
    });
    expect(validateTarget(req, req, v)).toMatchObject({ ok: false, error: expect.stringMatching(/must come before/) });
    expect(validateTarget(a, req, v)).toMatchObject({ ok: false, error: expect.stringContaining(ALREADY_COMPACTED) });
    expect(validateTarget(u, req, v)).toEqual({ ok: true, afterId: u });
    expect(validateTarget("root", req, v)).toEqual({ ok: true, afterId: null });
  });

  it("entries before a native compaction's kept range are out of context", () => {
    const b = new LedgerBuilder();
    const old = b.user("old");
    const kept = b.user("kept");
    b.compaction(kept);
    const req = b.assistant("", [{ id: "c", name: "context_compact" }]);
    expect(validateTarget(old, req, view(b))).toMatchObject({
      ok: false,
      error: expect.stringContaining(ALREADY_COMPACTED),
    });
    expect(validateTarget(kept, req, view(b)).ok).toBe(true);
  });

  it("name rules: non-empty, not root, not an entry id, not taken, not pending", () => {
    const b = new LedgerBuilder();
    const u = b.user("x");
    b.label(u, "taken");
    const v = view(b);
    expect(checkName("", v)).toMatch(/empty/);
    expect(checkName("root", v)).toMatch(/reserved/);
    expect(checkName(u, v)).toMatch(/entry id/);
    expect(checkName("taken", v)).toMatch(/already exists/);
    expect(checkName("pending", v, new Set(["pending"]))).toMatch(/already exists/);
    expect(checkName("fresh", v)).toBeUndefined();
  });
});

describe("timeline", () => {
  it("marks folded and pre-compaction entries, never root, and shows labels", () => {
    const b = new LedgerBuilder();
    const old = b.user("before compaction");
    const kept = b.user("kept one");
    b.compaction(kept);
    const a = b.assistant("answer");
    b.label(kept, "cp");
    const folded = b.user("folded later");
    b.fold({ afterId: a, throughId: folded }, "S");
    const text = renderTimeline(view(b));
    const line = (id: string) => text.split("\n").find((l) => l.startsWith(id))!;
    expect(text.split("\n")[0]).toMatch(/^root/);
    expect(text.split("\n")[0]).not.toContain(NOT_A_TARGET);
    expect(line(old)).toContain(NOT_A_TARGET);
    expect(line(folded)).toContain(NOT_A_TARGET);
    expect(line(kept)).toContain('label "cp"');
    expect(line(kept)).not.toContain(NOT_A_TARGET);
    expect(line(a)).not.toContain(NOT_A_TARGET);
  });
});

describe("timeline after restores", () => {
  it("marks revoked acts, and restored history is a target again", () => {
    const b = new LedgerBuilder();
    const old = b.user("before compaction");
    const kept = b.user("kept one");
    const c = b.compaction(kept);
    const a = b.assistant("answer");
    const fold = b.fold({ afterId: kept, throughId: a }, "S");
    const r1 = b.restore(fold, "fold");
    const r2 = b.restore(c, "compaction");
    const req = b.assistant("", [{ id: "c", name: "context_compact" }]);
    const text = renderTimeline(view(b));
    const line = (id: string) => text.split("\n").find((l) => l.startsWith(id))!;
    expect(line(fold)).toContain(`revoked by restore ${r1}`);
    expect(line(c)).toContain(`revoked by restore ${r2}`);
    expect(line(old)).not.toContain(NOT_A_TARGET);
    expect(line(a)).not.toContain(NOT_A_TARGET);
    expect(validateTarget(old, req, view(b))).toEqual({ ok: true, afterId: old });
    expect(validateTarget(fold, req, view(b))).toMatchObject({
      ok: false,
      error: expect.stringContaining(ALREADY_COMPACTED),
    });
  });
});

describe("fold message", () => {
  it("carries sibling outputs with tool name and arguments, errors included, but not context_* outputs or script source", () => {
    const text = renderFoldText("SUMMARY", [
      {
        toolName: "bash",
        args: { command: "npm test" },
        result: { role: "toolResult", content: [{ type: "text", text: "3 failed" }], isError: true } as never,
      },
      {
        toolName: "context_grep",
        args: { pattern: "x" },
        result: { role: "toolResult", content: [{ type: "text", text: "PRE-FOLD STATE" }] } as never,
      },
      {
        toolName: "codemode",
        args: { code: "SECRET SOURCE" },
        result: { role: "toolResult", content: [{ type: "text", text: "script out" }] } as never,
      },
    ]);
    expect(text).toContain("SUMMARY");
    expect(text).toContain('bash {"command":"npm test"} (error)');
    expect(text).toContain("3 failed");
    expect(text).toContain("script out");
    expect(text).not.toContain("PRE-FOLD STATE");
    expect(text).not.toContain("SECRET SOURCE");
  });
});
