import { describe, expect, it } from "vitest";
import { LedgerType } from "../../../src/strategies/catalog.ts";
import { planCheckpoint, type CheckpointDetails } from "../../../src/strategies/checkpoint/planner.ts";
import {
  EVIDENCE_BOUNDARY,
  INTRODUCTION,
  isGeneratedLine,
  startupReadLines,
  TAIL_MARKER,
  unescapeLine,
} from "../../../src/strategies/checkpoint/render.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { compactInto, inputFor, spanBody, UNCAPPED } from "./fixtures.ts";

/** A branch with every kind of content the checkpoint treats differently, cut before `second request`. */
function everyKind() {
  const b = new LedgerBuilder();
  const ids = {
    u1: b.user("Fix the bug in src/a.ts\n  keep   spacing\t\nünïcødé 😀\r\nlast line"),
    a1: b.assistant(
      "I'll look.\nSecond line of prose",
      [{ id: "c1", name: "read", args: { path: "/repo/src/a.ts" } }],
      { thinking: "SECRET THINKING" },
    ),
    r1: b.toolResult("c1", "read", "SECRET FILE CONTENT"),
    a2: b.assistant("", [{ id: "c2", name: "bash", args: { command: "cd /repo && npm test" } }]),
    r2: b.toolResult("c2", "bash", "SECRET TEST OUTPUT", { isError: true }),
    cm: b.custom("other-ext/note", "SECRET CUSTOM BODY"),
    rc: b.custom(LedgerType.recap, "OLD RECAP TEXT", { v: 1, compactionId: "older" }),
    sh: b.bash("ls /repo/src", "SECRET LS OUTPUT"),
    a3: b.assistant("", [
      { id: "c3", name: "edit", args: { path: "src/a.ts", edits: [{ oldText: "x", newText: "y" }] } },
    ]),
    a4: b.assistant("", [], { thinking: "ONLY THINKING" }),
    u2: b.user("second request"),
    a5: b.assistant("tail answer"),
  };
  return { b, ids };
}

describe("checkpoint content", () => {
  it("keeps user and assistant prose verbatim and removes thinking, outputs and custom bodies", () => {
    const { b, ids } = everyKind();
    const { summary } = planCheckpoint(inputFor(b.entries, ids.u2), UNCAPPED);
    const body = spanBody(summary, 1);
    expect(body).toEqual([
      `[user ${ids.u1}]`,
      "Fix the bug in src/a.ts",
      "  keep   spacing\t",
      "ünïcødé 😀\r",
      "last line",
      `[assistant ${ids.a1}]`,
      "I'll look.",
      "Second line of prose",
      `[call ${ids.a1}] read path="src/a.ts" → ok`,
      `[call ${ids.a2}] bash command="cd . && npm test" → error`,
      `[custom ${ids.cm}] type="other-ext/note" (content removed)`,
      `[shell ${ids.sh}] command="ls ./src" exit=0 (output removed)`,
      `[call ${ids.a3}] edit path="src/a.ts" edits=1 → unknown`,
    ]);
    for (const secret of ["SECRET", "OLD RECAP TEXT", "ONLY THINKING"]) expect(summary).not.toContain(secret);
    // The tail stays with Pi.
    expect(summary).not.toContain("second request");
    expect(summary).not.toContain("tail answer");
  });

  it("copies user text byte for byte, escaping only a line that could pass for structure", () => {
    const b = new LedgerBuilder();
    const text = "  leading\n\n\ttabs\u00a0nbsp \\n literal\r\nemoji 👩‍💻 and </span> and [call x] lookalike\n";
    const u1 = b.user(text);
    const u2 = b.user("next");
    const { summary } = planCheckpoint(inputFor(b.entries, u2), UNCAPPED);
    const body = spanBody(summary, 1);
    expect(body[0]).toBe(`[user ${u1}]`);
    expect(body.slice(1).map(unescapeLine).join("\n")).toBe(text);
    expect(body.slice(1).filter((line) => line !== unescapeLine(line))).toEqual([
      '\\"emoji 👩‍💻 and \\u003c/span> and [call x] lookalike"',
    ]);
  });

  it("puts the introduction first and the evidence boundary and tail marker last", () => {
    const { b, ids } = everyKind();
    const lines = planCheckpoint(inputFor(b.entries, ids.u2), UNCAPPED).summary.split("\n");
    expect(lines.slice(0, INTRODUCTION.length)).toEqual(INTRODUCTION);
    expect(lines.slice(-2)).toEqual([EVIDENCE_BOUNDARY, TAIL_MARKER]);
    expect(lines.filter((l) => l === EVIDENCE_BOUNDARY)).toHaveLength(1);
    const spanAt = lines.findIndex((l) => l.startsWith("<span"));
    const filesAt = lines.indexOf("<files>");
    expect(spanAt).toBeGreaterThan(INTRODUCTION.length - 1);
    expect(filesAt).toBeGreaterThan(spanAt);
    expect(lines.length - 2).toBeGreaterThan(filesAt);
  });

  it("abbreviates long custom types like arguments and labels stopped turns", () => {
    const b = new LedgerBuilder();
    b.user("go");
    const c = b.custom("x".repeat(300), "body");
    const a = b.assistant("", [], { stopReason: "error", errorMessage: "rate limited" });
    const u = b.user("again");
    const body = spanBody(planCheckpoint(inputFor(b.entries, u), UNCAPPED).summary, 1);
    expect(body).toContain(`[custom ${c}] type="${"x".repeat(159)}… (content removed)`);
    expect(body).toContain(`[assistant ${a}] stopped: error "rate limited"`);
  });

  it("stores its own uncapped span and the cumulative file lists in versioned details", () => {
    const { b, ids } = everyKind();
    const plan = planCheckpoint(inputFor(b.entries, ids.u2), UNCAPPED);
    const details = plan.details as CheckpointDetails;
    expect(details.v).toBe(1);
    expect(details.strategy).toBe("checkpoint");
    expect(details.spans).toHaveLength(1);
    expect(details.spans[0].from).toBe(ids.u1);
    expect(details.files).toEqual({ read: [], modified: ["src/a.ts"] });
    expect(plan.firstKeptEntryId).toBe(ids.u2);
    expect(plan.tokensBefore).toBe(1000);
  });

  it("is deterministic: the same input gives the same bytes", () => {
    const { b, ids } = everyKind();
    const first = planCheckpoint(inputFor(b.entries, ids.u2), UNCAPPED);
    const second = planCheckpoint(inputFor(structuredClone(b.entries), ids.u2), UNCAPPED);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  });
});

describe("repeated checkpoints", () => {
  it("re-renders earlier spans oldest first, byte for byte, without re-summarizing", () => {
    const b = new LedgerBuilder();
    b.user("task one");
    b.assistant("answer one");
    const u2 = b.user("task two");
    const first = compactInto(b, u2);
    b.assistant("answer two");
    const u3 = b.user("task three");
    b.assistant("answer three");
    const u4 = b.user("task four");
    const second = planCheckpoint(inputFor(b.entries, u4), UNCAPPED);

    expect(spanBody(second.summary, 1)).toEqual(spanBody(first.plan.summary, 1));
    expect(spanBody(second.summary, 2)).toEqual([
      `[user ${u2}]`,
      "task two",
      "[assistant e005]",
      "answer two",
      `[user ${u3}]`,
      "task three",
      "[assistant e007]",
      "answer three",
    ]);
    // Invariant 5: the context up to checkpoint 1 is a byte prefix of checkpoint 2.
    const prefix = first.plan.summary.slice(0, first.plan.summary.indexOf("</span>") + "</span>".length);
    expect(second.summary.startsWith(prefix)).toBe(true);
    // Only the new span is stored in the new details.
    expect((second.details as CheckpointDetails).spans.map((s) => s.n)).toEqual([2]);
  });

  it("skips our own recap messages instead of stubbing them", () => {
    const b = new LedgerBuilder();
    b.user("task one");
    const u2 = b.user("task two");
    const first = compactInto(b, u2);
    b.custom(LedgerType.recap, "recap body", { v: 1, compactionId: first.id });
    const u3 = b.user("task three");
    const second = planCheckpoint(inputFor(b.entries, u3), UNCAPPED);
    expect(spanBody(second.summary, 2)).toEqual([`[user ${u2}]`, "task two"]);
    expect(second.summary).not.toContain("recap body");
  });

  it("keeps a prior model summary as an opaque base block and spans only what followed it", () => {
    const b = new LedgerBuilder();
    b.user("old task");
    const u2 = b.user("kept after native");
    const native = b.compaction(u2, "## Goal\nModel-written summary\n<read-files>\nx.ts\n</read-files>", {
      readFiles: ["/repo/x.ts"],
      modifiedFiles: [],
    });
    b.assistant("reply");
    const u3 = b.user("newest");
    const first = compactInto(b, u3);
    const summary = first.plan.summary;
    const lines = summary.split("\n");
    const baseAt = lines.indexOf(`<base entry="${native}">`);
    expect(baseAt).toBe(INTRODUCTION.length + 1);
    expect(lines.slice(baseAt + 1, baseAt + 6)).toEqual([
      "## Goal",
      "Model-written summary",
      "<read-files>",
      "x.ts",
      "</read-files>",
    ]);
    expect(spanBody(summary, 1)).toEqual([`[user ${u2}]`, "kept after native", "[assistant e004]", "reply"]);
    expect(summary).not.toContain("old task");
    // The native compaction's file list is carried.
    expect(summary).toContain('[read] "x.ts"');

    // A second checkpoint keeps the same base and re-renders span 1.
    const more = b.assistant("more");
    const u4 = b.user("latest");
    const second = planCheckpoint(inputFor(b.entries, u4), UNCAPPED);
    expect(second.summary.startsWith(summary.slice(0, summary.indexOf("</span>")))).toBe(true);
    expect(spanBody(second.summary, 2)).toEqual([`[user ${u3}]`, "newest", `[assistant ${more}]`, "more"]);
  });

  it("starts a fresh chain after a native compaction that followed a checkpoint", () => {
    const b = new LedgerBuilder();
    b.user("one");
    const u2 = b.user("two");
    compactInto(b, u2);
    const u3 = b.user("three");
    const native = b.compaction(u3, "NATIVE AFTER CHECKPOINT");
    const u4 = b.user("four");
    const plan = planCheckpoint(inputFor(b.entries, u4), UNCAPPED);
    expect(plan.summary).toContain(`<base entry="${native}">`);
    expect(plan.summary).toContain("NATIVE AFTER CHECKPOINT");
    expect(spanBody(plan.summary, 1)).toEqual([`[user ${u3}]`, "three"]);
    expect(spanBody(plan.summary, 2)).toEqual([]);
  });
});

describe("context edits and folds", () => {
  it("leaves out omitted messages and shows replacements as the model saw them", () => {
    const b = new LedgerBuilder();
    const u1 = b.user("original secret request");
    const a1 = b.assistant("omitted answer");
    const u2 = b.user("kept");
    b.edit(u1, "replaced request");
    b.edit(a1, null);
    const u3 = b.user("tail");
    const body = spanBody(planCheckpoint(inputFor(b.entries, u3), UNCAPPED).summary, 1);
    expect(body).toEqual([`[user ${u1}]`, "replaced request", `[user ${u2}]`, "kept"]);
  });

  it("leaves folded entries out and keeps the fold summary as prose", () => {
    const b = new LedgerBuilder();
    const u1 = b.user("before the fold");
    b.user("FOLDED AWAY");
    const a = b.assistant("FOLDED PROSE", [{ id: "f1", name: "context_compact", args: { target: u1, summary: "s" } }]);
    b.toolResult("f1", "context_compact", "Compaction requested");
    const fold = b.custom(LedgerType.fold, "Summary line one\nSummary line two", {
      v: 1,
      range: { afterId: u1, throughId: "e004" },
      requestEntryId: a,
      target: u1,
    });
    const u3 = b.user("tail");
    const body = spanBody(planCheckpoint(inputFor(b.entries, u3), UNCAPPED).summary, 1);
    expect(body).toEqual([`[user ${u1}]`, "before the fold", `[fold ${fold}]`, "Summary line one", "Summary line two"]);
  });

  it("labels a call whose result an edit hid from the raw outcome", () => {
    const b = new LedgerBuilder();
    b.user("go");
    const a = b.assistant("", [{ id: "k1", name: "bash", args: { command: "make" } }]);
    const r = b.toolResult("k1", "bash", "boom", { isError: true });
    b.edit(r, null);
    const u = b.user("next");
    expect(spanBody(planCheckpoint(inputFor(b.entries, u), UNCAPPED).summary, 1)).toContain(
      `[call ${a}] bash command="make" → error`,
    );
  });
});

describe("generated-line recognition", () => {
  it("recognizes tags whose attribute values hold escaped quotes", () => {
    const [, open] = startupReadLines([{ entryId: "e1", path: 'odd "name".md', completeness: "full", text: "x" }]);
    expect(open).toBe('<startup-read entry="e1" path="odd \\"name\\".md" read="full">');
    expect(isGeneratedLine(open)).toBe(true);
    expect(isGeneratedLine("plain user text")).toBe(false);
  });
});
