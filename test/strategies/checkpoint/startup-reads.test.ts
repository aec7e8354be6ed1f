import { describe, expect, it } from "vitest";
import { planCheckpoint, type CheckpointDetails } from "../../../src/strategies/checkpoint/planner.ts";
import { instructionBlocks, mentions } from "../../../src/strategies/shared/startup-reads.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { compactInto, inputFor, UNCAPPED } from "./fixtures.ts";

const AGENTS = {
  path: "/repo/AGENTS.md",
  content: "Before coding, read docs/guide.md and `SPEC.md`.\nSee also docs/README.md.\n",
};

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
    b.tool(
      "read",
      { path: "/repo/SPEC.md", limit: 3 },
      "SPEC HEAD\n\n[20 more lines in file. Use offset=4 to continue.]",
    );
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
    const second = planCheckpoint(
      inputFor(b.entries, u3, { contextFiles: [{ path: "/repo/AGENTS.md", content: "read other.md" }] }),
      UNCAPPED,
    );
    expect((second.details as CheckpointDetails).startupReads).toEqual(
      (first.plan.details as CheckpointDetails).startupReads,
    );
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
    const off = planCheckpoint(inputFor(b.entries, u3, { contextFiles: [AGENTS] }), {
      capPercent: null,
      startupReads: false,
    });
    expect(retained(off.summary).size).toBe(0);
    expect((off.details as CheckpointDetails).startupReads).toBeUndefined();
  });

  it("is never trimmed by the cap and warns when it alone exceeds the budget", () => {
    const b = new LedgerBuilder();
    b.user("hi");
    b.tool("read", { path: "SPEC.md" }, "S".repeat(8_000));
    b.assistant("prose ".repeat(200));
    const u = b.user("go");
    const plan = planCheckpoint(inputFor(b.entries, u, { contextFiles: [AGENTS], contextWindow: 4_000 }), {
      capPercent: 25,
      startupReads: true,
    });
    expect(retained(plan.summary).get("SPEC.md")).toBe("S".repeat(8_000));
    expect((plan.details as CheckpointDetails).warnings?.[0]).toMatch(/kept in full/);
  });

  it("recognizes AGENTS.override.md, loaded by Pi or read by the agent", () => {
    const b = new LedgerBuilder();
    b.user("hi");
    b.tool("read", { path: "SPEC.md" }, "SPEC");
    b.tool("read", { path: "pkg/AGENTS.override.md" }, "Here, pkg/RULES.md wins.");
    b.tool("read", { path: "pkg/RULES.md" }, "RULES");
    const u = b.user("go");
    const loaded = { path: "/repo/AGENTS.override.md", content: "Read SPEC.md first." };
    const plan = planCheckpoint(inputFor(b.entries, u, { contextFiles: [loaded] }), UNCAPPED);
    expect([...retained(plan.summary).keys()]).toEqual(["SPEC.md", "pkg/AGENTS.override.md", "pkg/RULES.md"]);
  });

  it("lets a bare file name select every same-named file read at startup", () => {
    const b = new LedgerBuilder();
    b.user("hi");
    b.tool("read", { path: "README.md" }, "ROOT README");
    b.tool("read", { path: "docs/README.md" }, "DOCS README");
    b.tool("read", { path: "docs/README.md.bak" }, "BACKUP");
    const u = b.user("go");
    const plan = planCheckpoint(
      inputFor(b.entries, u, { contextFiles: [{ path: "/repo/AGENTS.md", content: "Always read README.md." }] }),
      UNCAPPED,
    );
    expect([...retained(plan.summary).keys()]).toEqual(["README.md", "docs/README.md"]);
  });

  it("excludes nested reads inside a script, shell reads and non-text reads", () => {
    const b = new LedgerBuilder();
    b.user("hi");
    b.tool("codemode", { code: "await read({ path: 'SPEC.md' })" }, "SPEC VIA SCRIPT", {
      nestedCalls: { calls: [{ name: "read", arguments: { path: "SPEC.md" }, status: "ok" }] },
    });
    b.tool("bash", { command: "cat docs/guide.md" }, "GUIDE VIA SHELL");
    const a = b.assistant("", [{ id: "img", name: "read", args: { path: "docs/README.md" } }]);
    b.append({
      type: "message",
      id: "img-result",
      parentId: a,
      timestamp: "2026-01-01T00:10:00.000Z",
      message: {
        role: "toolResult",
        toolCallId: "img",
        toolName: "read",
        content: [{ type: "image", data: "AAAA", mimeType: "image/png" }],
        isError: false,
        timestamp: 1,
      },
    } as never);
    const u = b.user("go");
    const plan = planCheckpoint(inputFor(b.entries, u, { contextFiles: [AGENTS] }), UNCAPPED);
    expect(retained(plan.summary).size).toBe(0);
    expect((plan.details as CheckpointDetails).startupReads!.reads).toEqual([]);
  });

  it("excludes reads whose pairing is ambiguous: a shared id, a result before its call, a result of another tool", () => {
    const b = new LedgerBuilder();
    b.user("hi");
    b.assistant("", [{ id: "dup", name: "read", args: { path: "docs/guide.md" } }]);
    b.toolResult("dup", "read", "GUIDE ONE");
    b.assistant("", [{ id: "dup", name: "read", args: { path: "docs/guide.md" } }]);
    b.toolResult("dup", "read", "GUIDE TWO");
    b.toolResult("early", "read", "EARLY SPEC");
    b.assistant("", [{ id: "early", name: "read", args: { path: "SPEC.md" } }]);
    b.assistant("", [{ id: "other", name: "read", args: { path: "docs/README.md" } }]);
    b.toolResult("other", "bash", "NOT A READ");
    const u = b.user("go");
    const plan = planCheckpoint(inputFor(b.entries, u, { contextFiles: [AGENTS] }), UNCAPPED);
    expect(retained(plan.summary).size).toBe(0);
  });

  it("starts the selection from the branch after an older checkpoint that stored none", () => {
    const b = new LedgerBuilder();
    b.user("hi");
    b.tool("read", { path: "docs/guide.md" }, "GUIDE TEXT");
    const u2 = b.user("second");
    // A checkpoint written before startup reads were stored: its details have spans and files only, and its
    // prose names a file that was never read.
    const { plan } = compactInto(b, u2, { capPercent: null, startupReads: false }, { contextFiles: [AGENTS] });
    expect((plan.details as CheckpointDetails).startupReads).toBeUndefined();
    b.entries[b.entries.length - 1] = {
      ...b.entries[b.entries.length - 1],
      summary: `${plan.summary}\nRetained: SPEC.md`,
    } as never;
    b.assistant("answer");
    const u3 = b.user("third");
    const next = planCheckpoint(inputFor(b.entries, u3, { contextFiles: [AGENTS] }), UNCAPPED);
    expect([...retained(next.summary).keys()]).toEqual(["docs/guide.md"]);
    expect((next.details as CheckpointDetails).startupReads).toMatchObject({
      closed: true,
      reads: [{ path: "docs/guide.md" }],
    });
  });
});
