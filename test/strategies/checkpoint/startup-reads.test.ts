import { describe, expect, it } from "vitest";
import { planCheckpoint, type CheckpointDetails } from "../../../src/strategies/checkpoint/planner.ts";
import { instructionBlocks, mentions } from "../../../src/strategies/checkpoint/startup-reads.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { compactInto, inputFor, UNCAPPED } from "./fixtures.ts";

const AGENTS = { path: "/repo/AGENTS.md", content: "Before coding, read docs/guide.md and `SPEC.md`.\nSee also docs/README.md.\n" };

/** `<startup-read ...>` blocks of a summary: path attribute -> text. */
function retained(summary: string): Map<string, string> {
  const out = new Map<string, string>();
  const pattern = /<startup-read [^>]*path="([^"]*)"[^>]*>\n([\s\S]*?)\n<\/startup-read>/g;
  for (let m = pattern.exec(summary); m; m = pattern.exec(summary)) out.set(m[1], m[2]);
  return out;
}

describe("path mentions", () => {
  it("accepts whole paths and standalone names and rejects substrings of other names", () => {
    expect(mentions("read docs/guide.md first", "docs/guide.md")).toBe(true);
    expect(mentions("read `SPEC.md`.", "SPEC.md")).toBe(true);
    expect(mentions("see @notes.md, then", "notes.md")).toBe(true);
    expect(mentions("see docs/README.md", "README.md")).toBe(false);
    expect(mentions("see README.md.bak", "README.md")).toBe(false);
    expect(mentions("see MYREADME.md", "README.md")).toBe(false);
    expect(mentions("see README.mdx", "README.md")).toBe(false);
    expect(mentions("end of sentence README.md.", "README.md")).toBe(true);
  });

  it("parses project-instruction blocks of the rendered system prompt", () => {
    const prompt = 'intro\n<project_instructions path="/repo/AGENTS.md">\nRead SPEC.md\n</project_instructions>\nrest';
    expect(instructionBlocks(prompt)).toEqual([{ path: "/repo/AGENTS.md", content: "Read SPEC.md" }]);
  });
});

describe("retained startup reads", () => {
  function startup() {
    const b = new LedgerBuilder();
    b.user("hello");
    const guide = b.tool("read", { path: "docs/guide.md" }, "GUIDE TEXT\nline 2");
    b.tool("read", { path: "/repo/SPEC.md", limit: 3 }, "SPEC HEAD\n\n[20 more lines in file. Use offset=4 to continue.]");
    b.tool("read", { path: "README.md" }, "ROOT README");
    b.tool("read", { path: "other.md" }, "OTHER");
    b.tool("read", { path: "docs/guide.md", offset: 1 }, "missing", { isError: true });
    b.custom("ext/note", "custom messages do not close the window");
    b.tool("read", { path: "docs/README.md" }, "DOCS README");
    const u2 = b.user("second message");
    b.tool("read", { path: "docs/guide.md" }, "LATER READ");
    const u3 = b.user("third");
    return { b, guide, u2, u3 };
  }

  it("keeps successful reads named by the instructions, verbatim, with their completeness", () => {
    const { b, u3 } = startup();
    const plan = planCheckpoint(inputFor(b.entries, u3, { contextFiles: [AGENTS] }), UNCAPPED);
    const reads = retained(plan.summary);
    expect([...reads.keys()]).toEqual(["docs/guide.md", "SPEC.md", "docs/README.md"]);
    expect(reads.get("docs/guide.md")).toBe("GUIDE TEXT\nline 2");
    expect(reads.get("SPEC.md")).toContain("[20 more lines in file. Use offset=4 to continue.]");
    expect(plan.summary).toMatch(/<startup-read entry="[^"]+" path="SPEC.md" limit="3" read="partial">/);
    expect(plan.summary).not.toContain("ROOT README");
    expect(plan.summary).not.toContain("OTHER");
    expect(plan.summary).not.toContain("LATER READ");
    const state = (plan.details as CheckpointDetails).startupReads!;
    expect(state.closed).toBe(true);
    // File lists give the startup read its own label, and never call a partial one complete.
    expect(plan.summary).toContain('[read] "SPEC.md" (partial startup read retained)');
  });

  it("falls back to the system prompt's instruction blocks", () => {
    const { b, u3 } = startup();
    const systemPrompt = `x\n<project_instructions path="/repo/AGENTS.md">\n${AGENTS.content}\n</project_instructions>`;
    const plan = planCheckpoint(inputFor(b.entries, u3, { systemPrompt }), UNCAPPED);
    expect([...retained(plan.summary).keys()]).toEqual(["docs/guide.md", "SPEC.md", "docs/README.md"]);
  });

  it("does not duplicate a read still in the tail, and adds it once the cut passes it", () => {
    const { b, guide, u3 } = startup();
    const first = compactInto(b, guide.call, UNCAPPED, { contextFiles: [AGENTS] });
    expect(retained(first.plan.summary).size).toBe(0);
    expect((first.plan.details as CheckpointDetails).startupReads!.reads).toHaveLength(3);
    const second = planCheckpoint(inputFor(b.entries, u3, { contextFiles: [AGENTS] }), UNCAPPED);
    expect([...retained(second.summary).keys()]).toEqual(["docs/guide.md", "SPEC.md", "docs/README.md"]);
  });

  it("carries a closed selection forward unchanged, whatever the instructions say later", () => {
    const { b, u2, u3 } = startup();
    const first = compactInto(b, u2, UNCAPPED, { contextFiles: [AGENTS] });
    const second = planCheckpoint(inputFor(b.entries, u3, { contextFiles: [{ path: "/repo/AGENTS.md", content: "read other.md" }] }), UNCAPPED);
    expect((second.details as CheckpointDetails).startupReads).toEqual((first.plan.details as CheckpointDetails).startupReads);
  });

  it("keeps the window open until the second user message and adds reads that qualify later", () => {
    const b = new LedgerBuilder();
    b.user("one long task");
    b.tool("read", { path: "docs/guide.md" }, "GUIDE");
    const cut = b.assistant("working");
    const first = compactInto(b, cut, UNCAPPED, { contextFiles: [AGENTS] });
    expect((first.plan.details as CheckpointDetails).startupReads).toMatchObject({ closed: false });
    b.tool("read", { path: "SPEC.md" }, "SPEC");
    const cut2 = b.assistant("still working");
    const second = compactInto(b, cut2, UNCAPPED, { contextFiles: [AGENTS] });
    expect([...retained(second.plan.summary).keys()]).toEqual(["docs/guide.md", "SPEC.md"]);
    expect((second.plan.details as CheckpointDetails).startupReads).toMatchObject({ closed: false });
    b.user("second");
    b.tool("read", { path: "docs/README.md" }, "TOO LATE");
    const u = b.user("third");
    const third = planCheckpoint(inputFor(b.entries, u, { contextFiles: [AGENTS] }), UNCAPPED);
    expect([...retained(third.summary).keys()]).toEqual(["docs/guide.md", "SPEC.md"]);
    expect((third.details as CheckpointDetails).startupReads!.closed).toBe(true);
  });

  it("treats an instruction file the agent read as a source and retains it when Pi did not load it", () => {
    const b = new LedgerBuilder();
    b.user("hi");
    b.tool("read", { path: "pkg/AGENTS.md" }, "In this package, follow pkg/STYLE.md.");
    b.tool("read", { path: "pkg/STYLE.md" }, "STYLE RULES");
    const u = b.user("go");
    const plan = planCheckpoint(inputFor(b.entries, u), UNCAPPED);
    expect([...retained(plan.summary).keys()]).toEqual(["pkg/AGENTS.md", "pkg/STYLE.md"]);
  });

  it("excludes omitted and replaced reads, and is off when the setting is off", () => {
    const { b, guide, u3 } = startup();
    b.edit(guide.result, null);
    const plan = planCheckpoint(inputFor(b.entries, u3, { contextFiles: [AGENTS] }), UNCAPPED);
    expect([...retained(plan.summary).keys()]).toEqual(["SPEC.md", "docs/README.md"]);
    const off = planCheckpoint(inputFor(b.entries, u3, { contextFiles: [AGENTS] }), { capPercent: null, startupReads: false });
    expect(retained(off.summary).size).toBe(0);
    expect((off.details as CheckpointDetails).startupReads).toBeUndefined();
  });

  it("is never trimmed by the cap and warns when it alone exceeds the budget", () => {
    const b = new LedgerBuilder();
    b.user("hi");
    b.tool("read", { path: "SPEC.md" }, "S".repeat(8_000));
    b.assistant("prose ".repeat(200));
    const u = b.user("go");
    const plan = planCheckpoint(inputFor(b.entries, u, { contextFiles: [AGENTS], contextWindow: 4_000 }), { capPercent: 25, startupReads: true });
    expect(retained(plan.summary).get("SPEC.md")).toBe("S".repeat(8_000));
    expect((plan.details as CheckpointDetails).warnings?.[0]).toMatch(/kept in full/);
  });
});
