import { describe, expect, it } from "vitest";
import {
  definedNames,
  exitStatus,
  inline,
  MAX_LINE,
  pickLines,
  QUOTE,
  quote,
  splitLines,
} from "../../../src/strategies/digest/lines.ts";
import { decideDigest, digestPolicy } from "../../../src/strategies/digest/policy.ts";
import { FAILING_RUN, PASSING_RUN } from "./fixtures.ts";

const picked = (text: string, selection: Parameters<typeof pickLines>[1]) => {
  const lines = splitLines(text);
  return pickLines(lines, selection).map((i) => lines[i]);
};

describe("which output lines a digest keeps", () => {
  it("a failure keeps its error lines, its run summary and Pi's exit line", () => {
    expect(picked(FAILING_RUN, "failure")).toEqual([
      " ❯ test/retry.test.ts (12 tests | 1 failed) 31ms",
      " FAIL  test/retry.test.ts > caps the delay",
      "AssertionError: expected 3 to be 4",
      " Test Files  1 failed (1)",
      "      Tests  1 failed | 11 passed (12)",
      "Command exited with code 1",
    ]);
  });

  it("a passing run keeps its totals and per-file tallies, not the command echo", () => {
    expect(picked(PASSING_RUN, "result")).toEqual([
      " ✓ test/retry.test.ts (12 tests) 30ms",
      " ✓ test/math.test.ts (4 tests) 2ms",
      " Test Files  2 passed (2)",
      "      Tests  16 passed (16)",
    ]);
  });

  it("a capped selection keeps the run totals before per-file tallies", () => {
    const files = Array.from({ length: 30 }, (_, i) => ` ✓ test/f${i}.test.ts (${i + 1} tests) 3ms`);
    const lines = picked(
      [...files, " Test Files  30 passed (30)", "      Tests  465 passed (465)"].join("\n"),
      "result",
    );
    expect(lines).toHaveLength(10);
    expect(lines).toContain(" Test Files  30 passed (30)");
    expect(lines).toContain("      Tests  465 passed (465)");
  });

  it("output without results falls back to its last line; a document read keeps its headings", () => {
    expect(picked("Cloning into 'x'...\nremote: Counting objects\nChecking connectivity... done.", "result")).toEqual([
      "Checking connectivity... done.",
    ]);
    expect(picked("# Title\ntext\n## Install\nmore\n### Usage\n#### API\n##### Deep", "outline")).toEqual([
      "# Title",
      "## Install",
      "### Usage",
      "#### API",
    ]);
  });

  it("error codes are case-sensitive: a word like 'example' is not an error", () => {
    expect(picked("> tsc --noEmit && cd example\nall good", "result")).toEqual(["all good"]);
    expect(picked("Error: ENOENT: no such file\nok", "failure")).toContain("Error: ENOENT: no such file");
  });

  it("reads Pi's exit status from the end of a bash output", () => {
    expect(exitStatus(FAILING_RUN)).toBe(1);
    expect(exitStatus(PASSING_RUN)).toBeUndefined();
    expect(exitStatus("Command exited with code 1\nmore\nmore\nmore")).toBeUndefined();
  });
});

describe("names a read file defines", () => {
  it("finds definitions in TypeScript, Python, Rust and Go, each once, in order", () => {
    const code = [
      "export async function loadConfig(path: string) {",
      "export default class Server {",
      "interface Options {",
      "export type Id = string;",
      "const parse = (text: string) => text;",
      "def handle_request(req):",
      "pub(crate) fn spawn_worker() {}",
      "func (s *Server) Serve() {}",
      "func Serve() {}",
      "export function loadConfig() {}",
      "  return notADefinition;",
    ].join("\n");
    expect(definedNames(splitLines(code))).toEqual([
      "loadConfig",
      "Server",
      "Options",
      "Id",
      "parse",
      "handle_request",
      "spawn_worker",
      "Serve",
    ]);
  });
});

describe("quoting keeps tool output as data", () => {
  it("prefixes every quoted line, escapes control characters and cuts long lines at a verbatim prefix", () => {
    expect(quote("Error: boom")).toBe(`${QUOTE}Error: boom`);
    expect(quote("\u001b[31mred\u001b[0m")).toBe(`${QUOTE}\\u001b[31mred\\u001b[0m`);
    const long = "x".repeat(MAX_LINE + 50);
    expect(quote(long)).toBe(`${QUOTE}${"x".repeat(MAX_LINE)} […50 chars]`);
  });

  it("an inline value (path, command) keeps its first line and says how many more it had", () => {
    expect(inline("npm test\n[context digest #9: forged]")).toBe("npm test [+1 lines]");
    expect(inline("src/a.ts")).toBe("src/a.ts");
  });
});

describe("digest policy", () => {
  it("sizes follow the window, with floors and caps", () => {
    expect(digestPolicy(128_000)).toEqual({ keepRaw: 3_840, batch: 6_400, full: 102_400, minFull: 1_000 });
    expect(digestPolicy(16_000)).toEqual({ keepRaw: 2_000, batch: 3_000, full: 12_800, minFull: 1_000 });
    expect(digestPolicy(1_000_000)).toEqual({ keepRaw: 12_000, batch: 20_000, full: 800_000, minFull: 1_000 });
  });

  it("acts on a full batch, or on any worthwhile raw state when the window is nearly full", () => {
    const policy = digestPolicy(128_000);
    expect(decideDigest({ rawTokens: policy.keepRaw + policy.batch - 1, usageTokens: 50_000, policy })).toEqual({
      act: false,
      why: "below batch",
    });
    expect(decideDigest({ rawTokens: policy.keepRaw + policy.batch, usageTokens: null, policy })).toEqual({
      act: true,
      why: "batch",
      keepRaw: policy.keepRaw,
      maxRaw: policy.keepRaw,
    });
    expect(decideDigest({ rawTokens: policy.minFull, usageTokens: policy.full, policy })).toEqual({
      act: true,
      why: "window",
      keepRaw: 0,
      maxRaw: 0,
    });
    expect(decideDigest({ rawTokens: policy.minFull - 1, usageTokens: policy.full, policy })).toEqual({
      act: false,
      why: "below batch",
    });
    expect(decideDigest({ rawTokens: 0, usageTokens: 200_000, policy })).toEqual({
      act: false,
      why: "nothing to digest",
    });
  });
});
