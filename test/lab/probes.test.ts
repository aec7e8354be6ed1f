import { describe, expect, it } from "vitest";
import {
  constraintSentences,
  errorSignature,
  extractProbes,
  resultLines,
  viewRetention,
  viewText,
} from "../../src/lab/probes.ts";
import { visibleMessages } from "../../src/lab/row.ts";
import { Ledger } from "./fixtures.ts";

function fixture() {
  const l = new Ledger();
  l.user("Fix the parser. Don't add new dependencies. Thanks!");
  l.call("export const x = 1;", { path: "src/parser.ts" });
  l.call("Successfully replaced 1 block(s) in src/parser.ts.", { path: "src/parser.ts", edits: [] }, "edit");
  l.call(
    " FAIL  test/parser.test.ts > parses\nTypeError: Cannot read properties of undefined (reading 'id')\n ❯ src/parser.ts:12:3\n      Tests  1 failed | 9 passed (10)\nCommand exited with code 1",
    { command: "npm test -- test/parser.test.ts" },
    "bash",
    true,
  );
  l.user("No, keep the old error messages instead.");
  l.call("      Tests  10 passed (10)", { command: "npm test" }, "bash");
  l.bash("git status", "On branch main");
  l.say("Done.");
  return l;
}

describe("probe extraction", () => {
  it("finds constraints, paths, error signatures, result lines and commands, once each, in order", () => {
    const l = fixture();
    const probes = extractProbes(l.entries);
    expect(probes.map((p) => [p.kind, p.text])).toEqual([
      ["constraint", "Don't add new dependencies."],
      ["path", "src/parser.ts"],
      ["command", "npm test -- test/parser.test.ts"],
      ["error", "FAIL  test/parser.test.ts > parses"],
      ["result", "Tests  1 failed | 9 passed (10)"],
      ["result", "Command exited with code 1"],
      ["constraint", "No, keep the old error messages instead."],
      ["command", "npm test"],
      ["result", "Tests  10 passed (10)"],
      ["command", "git status"],
    ]);
    // Attribution: each probe names the entry it came from.
    const error = probes.find((p) => p.kind === "error")!;
    expect(l.entries[error.index].id).toBe(error.entryId);
    expect(l.entries[error.index].type).toBe("message");
  });

  it("is deterministic", () => {
    expect(extractProbes(fixture().entries)).toEqual(extractProbes(fixture().entries));
  });

  it("helpers: sentences need a cue word, errors prefer error-like lines, results match counts", () => {
    expect(constraintSentences("Please look at it. You must never touch dist/ by hand.")).toEqual([
      "You must never touch dist/ by hand.",
    ]);
    expect(errorSignature("\n\nsomething\nError: boom at x\nCommand exited with code 1")).toBe("Error: boom at x");
    expect(errorSignature("plain failure text")).toBe("plain failure text");
    expect(resultLines("a\n 12 passed, 1 skipped\nok")).toEqual(["12 passed, 1 skipped"]);
  });
});

describe("retention against a view", () => {
  it("counts a probe present when its source message is in the view or its text occurs elsewhere", () => {
    const l = fixture();
    const probes = extractProbes(l.entries);
    const byId = new Map(l.entries.map((e) => [e.id, e]));
    const sourceOf = (p: { entryId: string }) => visibleMessages(byId.get(p.entryId)!);
    const all = l.entries.flatMap(visibleMessages);
    expect(viewRetention(probes, all, sourceOf).share).toBe(1);
    // Keep only the last two messages: the bash execution and the final answer.
    const tail = all.slice(-2);
    const r = viewRetention(probes, tail, sourceOf);
    expect(r.missing.map((p) => p.text)).not.toContain("git status");
    expect(r.kept).toBe(1);
    expect(viewText(tail)).toContain("On branch main");
  });
});
