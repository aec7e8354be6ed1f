// The lab loads only the parts of Pi it uses: Pi's package root pulls in all of Pi (terminal UI, every provider),
// which cost each lab process and each worker about two CPU seconds before the first entry was read. The few root
// exports the lab calls come from their own modules (src/lab/pi-internals.ts), with the same results.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const session = resolve(repo, "../shared/sessions/large-session.jsonl");

/** Run the CLI with a module hook that reports every load of Pi's package root on stderr. */
function runWatched(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const hook = join(mkdtempSync(join(tmpdir(), "lab-pi-root-")), "hook.mjs");
  writeFileSync(
    hook,
    `import { registerHooks } from "node:module";
registerHooks({
  load(url, context, next) {
    if (/pi-coding-agent\\/dist\\/index\\.js$/.test(url)) process.stderr.write("LOADED PI ROOT\\n");
    return next(url, context);
  },
});
`,
  );
  const run = spawnSync(process.execPath, ["--import", hook, join(repo, "src/lab/bin.ts"), ...args], {
    cwd: repo,
    encoding: "utf8",
    timeout: 240_000,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("the lab and Pi's package root", () => {
  it("replays a session through every row without loading Pi's package root", () => {
    const run = runWatched(["lab", session, "--jobs", "1", "--no-report", "--quiet"]);
    expect(run.status, run.stderr).toBe(0);
    // The replay ran its native rows, which call Pi's compaction and serializer.
    expect(run.stdout).toMatch(/native/i);
    expect(run.stderr).not.toContain("LOADED PI ROOT");
  }, 300_000);

  it("`show` reads a session, with Pi's migration, without loading it either", () => {
    const run = runWatched(["show", session]);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toContain("LOADED PI ROOT");
  }, 120_000);
});
