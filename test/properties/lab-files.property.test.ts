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
import { hasRawControl } from "../arbitraries/hostile.ts";
import { ledgerArb, toJsonl } from "../arbitraries/index.ts";

const runs = Math.max(6, Math.round(Number(process.env.FC_RUNS ?? 200) / 25));
const bin = resolve(fileURLToPath(new URL("../../src/lab/bin.ts", import.meta.url)));

type Damage = { kind: "truncate" | "garbage" | "duplicate" | "cycle" | "dangling"; at: number; text: string };
const damageArb: fc.Arbitrary<Damage> = fc.record({
  kind: fc.constantFrom("truncate" as const, "garbage" as const, "duplicate" as const, "cycle" as const, "dangling" as const),
  at: fc.nat(),
  text: fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom("\u001b[2J{ not json", "\u0000", "[]", '{"type":"message"}')),
});

function damage(jsonl: string, d: Damage): string {
  const lines = jsonl.split("\n").filter(Boolean);
  const body = lines.length - 1;
  if (body < 2) return jsonl;
  const i = 1 + (d.at % body);
  switch (d.kind) {
    case "truncate":
      lines[lines.length - 1] = lines[lines.length - 1].slice(0, d.at % lines[lines.length - 1].length);
      break;
    case "garbage":
      lines.splice(i, 0, d.text.replace(/\n/g, " "));
      break;
    case "duplicate":
      lines.splice(i + 1, 0, lines[i]);
      break;
    case "cycle": {
      // An early entry's parent becomes a later one: following parents from the leaf never reaches a root.
      const early = JSON.parse(lines[1]) as { parentId: string | null };
      early.parentId = (JSON.parse(lines[lines.length - 1]) as { id: string }).id;
      lines[1] = JSON.stringify(early);
      break;
    }
    case "dangling": {
      const entry = JSON.parse(lines[i]) as { parentId: string | null };
      entry.parentId = "no-such-parent";
      lines[i] = JSON.stringify(entry);
      break;
    }
  }
  return `${lines.join("\n")}\n`;
}

function run(args: string[], cwd: string) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: "utf8", timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("lab CLI on damaged session files", () => {
  it("show and lab report and exit 0, or exit 2 with one line; no stack trace, no raw control byte", () => {
    fc.assert(
      fc.property(ledgerArb({ minCommands: 3, maxCommands: 20 }), damageArb, (ledger, d) => {
        const dir = mkdtempSync(join(tmpdir(), "lab-damaged-"));
        try {
          const file = join(dir, "damaged.jsonl");
          writeFileSync(file, damage(toJsonl(ledger), d));
          for (const args of [["show", file], ["lab", file, "--strategies", "checkpoint,native", "--report", join(dir, "r.html")]]) {
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
      { numRuns: runs },
    );
  });
});
