// Digest memoizes the names it finds per message for the whole session. In the lab the long texts they come from
// move to the spill file, so a name that is a slice of its text (V8 makes one of every cut of 13 characters or more)
// would keep the whole text in memory. A child process finds names in a long output, drops the output and looks for
// it in a heap snapshot.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const repo = join(import.meta.dirname, "../../..");

/** Runs `mentionedNames` over a long text in a fresh process; returns the names and whether the text is still held. */
function probe(): { names: string[]; textHeld: boolean } {
  const lines = join(repo, "src/strategies/digest/lines.ts");
  const script = `
    const { mentionedNames } = await import(${JSON.stringify(lines)});
    const { getHeapSnapshot } = await import("node:v8");
    // Built at run time, so no literal holds it; the snapshot is searched for the marker and the line after it,
    // which only the text holds (the snapshot escapes its newline).
    const marker = ["held", "text", String(process.pid), "7f3a"].join("=");
    const build = () => "read src/lab/needed.ts and packages/core/src/session-manager.ts\\n" + marker + "\\n" +
      Array.from({ length: 400 }, (_, i) => "line " + i + " mentions buildSessionContext and src/app/module" + (i % 40) + ".ts").join("\\n");
    // The text lives only in a frame that has returned: a suspended module frame could keep it in a register.
    const names = (() => mentionedNames(build()))();
    // A regular expression's last match keeps its subject (RegExp.input): point it at another string.
    /a/.test("a");
    let snapshot = "";
    for await (const chunk of getHeapSnapshot()) snapshot += chunk;
    process.stdout.write(JSON.stringify({ names, textHeld: snapshot.includes(marker + "\\\\nline 0 mentions") }));
  `;
  // Interpreter only: a background compile job holds the context of the function it compiles, text and all, for a
  // while, which made the probe flaky.
  const flags = ["--no-opt", "--no-maglev", "--no-sparkplug"];
  const run = spawnSync(process.execPath, [...flags, "--input-type=module", "-e", script], {
    cwd: repo,
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

describe("digest names", () => {
  it("the names found in a text are strings of their own: the text can go once they are kept", () => {
    const { names, textHeld } = probe();
    // The text has names worth keeping (long enough to be slices, had they not been copied).
    expect(names).toContain("packages/core/src/session-manager.ts");
    expect(names).toContain("buildSessionContext");
    expect(textHeld).toBe(false);
  });
});
