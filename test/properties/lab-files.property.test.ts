// Damaged session files given to the lab CLI as a user would (`show <file>`, `lab <file>`), spawned like the real
// command: truncations, spliced garbage, duplicate ids, parent cycles, dangling parents. The CLI reports diagnostics
// and exits 0, or exits 2 with one line; it never prints a stack trace or a raw control byte.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { damageSessionFile, fileDamageArb, hasRawControl } from "../arbitraries/hostile.ts";
import { ledgerArb, toJsonl } from "../arbitraries/index.ts";
import { runs } from "../support/fast-check.ts";

// Every run spawns the lab CLI twice (`show` and `lab`): a 25th of the global count, at least 6.
const RUNS = runs(1 / 25, 6);
const bin = resolve(fileURLToPath(new URL("../../src/lab/bin.ts", import.meta.url)));

function run(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: "utf8", timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("lab CLI on damaged session files", () => {
  it("show and lab report and exit 0, or exit 2 with one line; no stack trace, no raw control byte", () => {
    fc.assert(
      fc.property(ledgerArb({ minCommands: 3, maxCommands: 20 }), fileDamageArb(), (ledger, d) => {
        const dir = mkdtempSync(join(tmpdir(), "lab-damaged-"));
        try {
          const file = join(dir, "damaged.jsonl");
          writeFileSync(file, damageSessionFile(toJsonl(ledger), d));
          for (const args of [
            ["show", file],
            ["lab", file, "--strategies", "checkpoint,native", "--report", join(dir, "r.html")],
          ]) {
            const r = run(args, dir);
            expect([0, 2], `${args[0]} exit code; stderr: ${r.stderr.slice(0, 300)}`).toContain(r.code);
            if (r.code === 2) expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
            expect(r.stderr).not.toMatch(/\n\s+at \S/);
            expect(hasRawControl(r.stdout), `${args[0]} stdout`).toBe(false);
            expect(hasRawControl(r.stderr), `${args[0]} stderr`).toBe(false);
          }
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: RUNS },
    );
    // Two real CLI processes per run (Node start-up and Pi's modules each time): minutes on two busy cores.
  }, 240_000);
});
