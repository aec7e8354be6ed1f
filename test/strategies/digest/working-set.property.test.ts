// Given steps that read, edit and write files, when the digest sizes its raw tail for the working set, then the newest
// read of each file in use stays raw (within the cap), and a digest quotes what edits put in files.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { planDigest, type DigestDraft } from "../../../src/strategies/digest/plan.ts";
import { digestPolicy, digestSettings, type DigestPolicy } from "../../../src/strategies/digest/policy.ts";
import { stepFiles, tailStart, type WorkStep } from "../../../src/strategies/digest/working-set.ts";
import { entryBefore } from "../../../src/strategies/shared/delta.ts";
import { projectBranch } from "../../../src/projection/project.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";
import { appendDigest, SMALL } from "./fixtures.ts";
import { LEDGER_FACTS } from "../../../src/strategies/catalog.ts";

const step = (tokens: number, touched: string[] = [], sources: string[] = []): WorkStep => ({
  tokens,
  touched,
  sources,
});

describe("which files a step touches and holds", () => {
  it("counts read, edit and write as touches; a successful read's output and a write's content as the file's text", () => {
    const b = new LedgerBuilder();
    b.assistant("", [
      { id: "r", name: "read", args: { path: "src/a.ts" } },
      { id: "e", name: "edit", args: { path: "/repo/src/b.ts", edits: [{ oldText: "x", newText: "y" }] } },
      { id: "w", name: "write", args: { path: "src/c.ts", content: "c" } },
      { id: "f", name: "read", args: { path: "src/missing.ts" } },
      { id: "g", name: "grep", args: { pattern: "x", path: "src/d.ts" } },
    ]);
    b.toolResult("r", "read", "a");
    b.toolResult("e", "edit", "ok");
    b.toolResult("w", "write", "ok");
    b.toolResult("f", "read", "ENOENT", true);
    b.toolResult("g", "grep", "hit");
    const messages = b.entries.map((e) => (e as { message: AgentMessage }).message);
    expect(stepFiles(messages, "/repo")).toEqual({
      touched: ["/repo/src/a.ts", "/repo/src/b.ts", "/repo/src/c.ts", "/repo/src/missing.ts"],
      sources: ["/repo/src/a.ts", "/repo/src/c.ts"],
    });
  });
});

describe("how far back the raw tail reaches", () => {
  const rule = { keepRaw: 100, maxRaw: 1_000, hotSteps: 2 };

  it("keeps only the usual tail when the cap is no larger", () => {
    const steps = [step(300, ["/a"], ["/a"]), step(50), step(60)];
    expect(tailStart(steps, ["/a"], { ...rule, maxRaw: 100 })).toBe(1);
  });

  it("reaches back to the newest read of a file the current step touches", () => {
    const steps = [step(200, ["/a"], ["/a"]), step(300, ["/a"], ["/a"]), step(50), step(60)];
    expect(tailStart(steps, ["/a"], rule)).toBe(1);
  });

  it("reaches back for a file a recent step touched, not for one touched only before the recent steps", () => {
    const steps = [step(200, ["/cold"], ["/cold"]), step(200, ["/hot"], ["/hot"]), step(50, ["/hot"]), step(60)];
    expect(tailStart(steps, [], rule)).toBe(1);
    expect(tailStart(steps, [], { ...rule, hotSteps: 4 })).toBe(0);
  });

  it("drops the oldest reads first when not all fit the cap, and keeps nothing older than the oldest read it keeps", () => {
    const steps = [step(600, ["/a"], ["/a"]), step(100), step(300, ["/b"], ["/b"]), step(50), step(60)];
    // /a's read would bring the tail to 1,110 tokens: above the cap, so only /b's read is reached.
    expect(tailStart(steps, ["/a", "/b"], rule)).toBe(2);
  });
});

/** Unrelated steps, a read of a.ts, more unrelated steps, then the current step edits a.ts. */
function editAfterDetour(): { b: LedgerBuilder; read: string; current: string } {
  const b = new LedgerBuilder();
  b.user("Fix the clamp in a.ts.");
  for (let k = 10; k < 13; k++) {
    b.assistant("", [{ id: `c${k}`, name: "bash", args: { command: `npm run early-${k}` } }]);
    b.toolResult(`c${k}`, "bash", Array.from({ length: 20 }, (_, i) => `early line ${i} of step ${k}`).join("\n"));
  }
  b.assistant("", [{ id: "c1", name: "read", args: { path: "src/a.ts" } }]);
  const read = b.toolResult(
    "c1",
    "read",
    Array.from({ length: 30 }, (_, i) => `export const lineNumber${i} = ${i};`).join("\n"),
  );
  for (let k = 2; k < 8; k++) {
    b.assistant("", [{ id: `c${k}`, name: "bash", args: { command: `npm run step-${k}` } }]);
    b.toolResult(`c${k}`, "bash", Array.from({ length: 20 }, (_, i) => `log line ${i} of step ${k}`).join("\n"));
  }
  const current = b.assistant("", [
    {
      id: "c9",
      name: "edit",
      args: {
        path: "src/a.ts",
        edits: [{ oldText: "export const lineNumber3 = 3;", newText: "export const lineNumber3 = 33;" }],
      },
    },
  ]);
  b.toolResult("c9", "edit", "Successfully replaced text in src/a.ts.");
  return { b, read, current };
}

function draftOf(b: LedgerBuilder, current: string, policy: DigestPolicy): DigestDraft {
  const outcome = planDigest({
    branch: b.entries,
    limitId: entryBefore(b.entries, current)!,
    contextWindow: 128_000,
    usageTokens: null,
    cwd: "/repo",
    policy,
  });
  if (!outcome.ok) throw new Error(outcome.reason);
  return outcome.draft;
}

describe("a digest that keeps the working set", () => {
  it("leaves the read of the file the current step edits raw, where the fixed tail digests it", () => {
    const { b, read, current } = editAfterDetour();
    const fixed = draftOf(b, current, SMALL);
    expect(fixed.details.range.throughId).not.toBe(entryBefore(b.entries, read));
    const working = draftOf(b, current, { ...SMALL, maxRaw: 10_000, hotSteps: 4 });
    // The range ends before the read, so its output stays in view verbatim.
    expect(working.details.range.throughId).toBe(entryBefore(b.entries, entryBefore(b.entries, read)!));
    appendDigest(b, working);
    const view = JSON.stringify(projectBranch(b.entries, LEDGER_FACTS).messages);
    expect(view).toContain("export const lineNumber3 = 3;");
  });

  it("quotes what an edit put in the file, line by line, unless a later read shows the file", () => {
    const b = new LedgerBuilder();
    b.user("Rename the constant.");
    b.assistant("", [
      {
        id: "e1",
        name: "edit",
        args: {
          path: "src/a.ts",
          edits: [{ oldText: "const a = 1;", newText: "const renamedValue = 1;\nconst other = 2;" }],
        },
      },
    ]);
    b.toolResult("e1", "edit", "Successfully replaced text in src/a.ts.");
    b.assistant("", [
      { id: "e2", name: "edit", args: { path: "src/b.ts", oldText: "let b = 1;", newText: "let bValue = 1;" } },
    ]);
    b.toolResult("e2", "edit", "Successfully replaced text in src/b.ts.");
    b.assistant("", [{ id: "r3", name: "read", args: { path: "src/b.ts" } }]);
    b.toolResult("r3", "read", "let bValue = 1;");
    for (let k = 4; k < 8; k++) {
      b.assistant("", [{ id: `c${k}`, name: "bash", args: { command: `npm run step-${k}` } }]);
      b.toolResult(`c${k}`, "bash", Array.from({ length: 20 }, (_, i) => `log line ${i} of step ${k}`).join("\n"));
    }
    const current = b.assistant("", [{ id: "c9", name: "bash", args: { command: "git diff" } }]);
    const policy = { ...SMALL, written: { maxLines: 60, writes: false } };
    const lines = draftOf(b, current, policy).content.split("\n");
    expect(lines).toContain("  | const renamedValue = 1;");
    expect(lines).toContain("  | const other = 2;");
    // b.ts was read after its edit: the read holds the current text, the edit is a reference.
    expect(lines.some((l) => l.includes("edit ok") && l.includes("superseded by") && l.endsWith("src/b.ts"))).toBe(
      true,
    );
    const superseded = lines.findIndex((l) => l.includes("edit ok") && l.endsWith("src/b.ts"));
    expect(lines[superseded + 1]).not.toBe("  text:");
    // A text of a few huge lines is indexed, not quoted: the digest stays bounded.
    const huge = new LedgerBuilder();
    huge.user("Paste the fixture.");
    huge.assistant("", [
      {
        id: "h1",
        name: "edit",
        args: { path: "src/h.ts", oldText: "x = 1;", newText: `const hugeFixture = "${"z".repeat(50_000)}";` },
      },
    ]);
    huge.toolResult("h1", "edit", "Successfully replaced text in src/h.ts.");
    huge.assistant("", [{ id: "h2", name: "bash", args: { command: "npm test" } }]);
    huge.toolResult("h2", "bash", Array.from({ length: 20 }, (_, i) => `log line ${i}`).join("\n"));
    const hugeCurrent = huge.assistant("", [{ id: "h3", name: "bash", args: { command: "git diff" } }]);
    const hugeDigest = draftOf(huge, hugeCurrent, { ...policy, keepRaw: 0 }).content;
    expect(hugeDigest.length).toBeLessThan(2_000);
    expect(hugeDigest).toContain("mentions: hugeFixture");
    // Without the option, edits are named, never quoted.
    expect(draftOf(b, current, SMALL).content).not.toContain("  | const renamedValue = 1;");
  });
});

describe("contextLedger.digest.workingSet", () => {
  it("is off by default and switches the larger, reaching tail on: 7.5% kept, 12% batches, reach to 30%", () => {
    expect(digestSettings.defaults).toEqual({ workingSet: false });
    expect(digestPolicy(128_000).maxRaw).toBeUndefined();
    expect(digestPolicy(128_000, { workingSet: true })).toEqual({
      keepRaw: 9_600,
      batch: 15_360,
      full: 102_400,
      minFull: 1_000,
      maxRaw: 38_400,
      hotSteps: 24,
      written: { maxLines: 60, writes: false },
    });
  });
});

describe("the tail split on generated steps", () => {
  const stepArb = fc.record({
    tokens: fc.integer({ min: 1, max: 400 }),
    touched: fc.subarray(["/a", "/b", "/c", "/d"]),
    sources: fc.subarray(["/a", "/b", "/c", "/d"]),
  });
  const ruleArb = fc.record({
    keepRaw: fc.integer({ min: 0, max: 800 }),
    maxRaw: fc.integer({ min: 0, max: 3_000 }),
    hotSteps: fc.integer({ min: 0, max: 10 }),
  });

  it("keeps at least the usual tail, stays within the cap beyond it, and keeps the newest source of a hot file whenever it fits", () => {
    fc.assert(
      fc.property(
        fc.array(stepArb, { maxLength: 30 }),
        fc.subarray(["/a", "/b", "/c", "/d"]),
        ruleArb,
        (steps, current, rule) => {
          const cut = tailStart(steps, current, rule);
          const fixed = tailStart(steps, current, { ...rule, maxRaw: 0 });
          const kept = (from: number) => steps.slice(from).reduce((n, s) => n + s.tokens, 0);
          expect(cut).toBeGreaterThanOrEqual(0);
          expect(cut).toBeLessThanOrEqual(fixed);
          if (cut < fixed) expect(kept(cut)).toBeLessThanOrEqual(rule.maxRaw);
          const hot = new Set([
            ...current,
            ...steps.slice(Math.max(0, steps.length - rule.hotSteps)).flatMap((s) => s.touched),
          ]);
          for (const path of hot) {
            const newest = steps.findLastIndex((s) => s.sources.includes(path));
            if (newest >= 0 && kept(newest) <= rule.maxRaw) expect(cut).toBeLessThanOrEqual(newest);
          }
        },
      ),
    );
  });
});
