// The CLI end to end, as a user runs it: real session files from ../shared/sessions, bad input, `show`,
// `machines`. Spawned with the same Node that runs the tests.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { LabResult } from "../../src/lab/results.ts";
import { Ledger } from "./fixtures.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const shared = resolve(repo, "../shared/sessions");
const bin = join(repo, "src/lab/bin.ts");

function run(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    cwd: repo,
    encoding: "utf8",
    env: { ...process.env, ...env },
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const tmp = () => mkdtempSync(join(tmpdir(), "lab-cli-"));

describe("lab on the real sessions", () => {
  const dir = tmp();
  const json = join(dir, "out.json");
  const { code, stdout, stderr } = run(["lab", shared, "--json", json, "--no-report"]);

  it("exits 0 and prints a table per session and the totals", () => {
    expect(stderr).toMatch(/\[1\/2\] /);
    expect(code, stderr.slice(-2000)).toBe(0);
    expect(stdout).toContain("■ before-compaction.jsonl");
    expect(stdout).toContain("■ large-session.jsonl");
    expect(stdout).toContain("■ all 2 sessions");
    for (const label of [
      "checkpoint",
      "fold (policy)",
      "no compaction",
      "truncate oldest",
      "masking (last 10)",
      "tool-result clearing",
      "OpenCode prune",
      "Pi native (sim.)",
    ])
      expect(stdout).toContain(label);
  });

  it("writes every figure as JSON", () => {
    const result = JSON.parse(readFileSync(json, "utf8")) as LabResult;
    expect(result.sessions.map((s) => s.name)).toEqual(["before-compaction.jsonl", "large-session.jsonl"]);
    const before = result.sessions[0];
    // The file's own two compactions are set aside; every row replays the raw history.
    expect(before.originalCompactions).toBe(2);
    expect(before.requests).toBeGreaterThan(400);
    expect(before.probes.total).toBeGreaterThan(100);
    const byId = Object.fromEntries(before.rows.map((r) => [r.info.id, r]));
    // Without compaction the session outgrows a 128k window; every compacting row stays inside it.
    expect(byId.none.overWindow).toBeGreaterThan(0);
    expect(byId.native.overWindow).toBe(0);
    expect(byId.native.peakTokens).toBeLessThanOrEqual(result.settings.window);
    expect(byId.native.compactions).toBeGreaterThan(0);
    expect(byId.none.retention.share).toBe(1);
    expect(byId.native.retention.share).toBeLessThan(1);
    // The ledger keeps what the view dropped.
    expect(byId.native.recoverability?.share).toBe(1);
    expect(byId.fold.recoverability?.share).toBe(1);
    expect(byId.checkpoint.overWindow).toBe(0);
    expect(byId.checkpoint.compactions).toBeGreaterThan(0);
    expect(byId.checkpoint.actions.every((a) => a.latencyMs !== undefined && !a.modelCall)).toBe(true);
    for (const row of before.rows) {
      expect(row.cache.reuse).toBeGreaterThan(0);
      expect(row.cache.reuse).toBeLessThanOrEqual(1);
      expect(row.cost.usd).toBeGreaterThan(0);
    }
    expect(result.totals).toHaveLength(before.rows.length);
  });
});

describe("bad input", () => {
  it("skips malformed lines, reports their numbers, and counts unknown entry types", () => {
    const dir = tmp();
    const l = new Ledger();
    l.user("Please keep the tests deterministic, always.");
    l.call("Tests  3 passed (3)", { command: "npm test" }, "bash");
    l.say("done");
    const lines = [
      JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/tmp" }),
    ];
    lines.push(JSON.stringify(l.entries[0]), "{ not json", JSON.stringify(l.entries[1]));
    lines.push(
      JSON.stringify({ type: "hologram", id: "h1", parentId: l.entries[1].id, timestamp: "2025-01-01T00:00:09.000Z" }),
    );
    lines.push("[1,2]", JSON.stringify({ ...l.entries[2], parentId: "h1" }), JSON.stringify(l.entries[3]));
    const file = join(dir, "bad.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const json = join(dir, "bad.json");
    const { code, stdout } = run(["lab", file, "--json", json, "--no-report", "--quiet"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/skipped 2 malformed line\(s\): line 3: invalid JSON[^;]*; line 6: not a JSON object/);
    expect(stdout).toContain("unknown entry types (ignored): hologram ×1");
    const result = JSON.parse(readFileSync(json, "utf8")) as LabResult;
    expect(result.sessions[0].malformedLines.map((d) => d.line)).toEqual([3, 6]);
    expect(result.sessions[0].unknownTypes).toEqual({ hologram: 1 });
    expect(result.sessions[0].requests).toBe(2);
  });

  it("an empty directory is a clear error with exit 2", () => {
    const { code, stderr } = run(["lab", tmp()]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/no session files \(\*\.jsonl\) in /);
  });

  it("a missing path is a clear error with exit 2", () => {
    const { code, stderr } = run(["lab", "/nonexistent/sessions"]);
    expect(code).toBe(2);
    expect(stderr).toContain("no such file or directory: /nonexistent/sessions");
  });

  it("--sessions reads $PI_CODING_AGENT_DIR/sessions", () => {
    const agent = tmp();
    const { code, stderr } = run(["lab", "--sessions"], { PI_CODING_AGENT_DIR: agent });
    expect(code).toBe(2);
    expect(stderr).toContain(`no such file or directory: ${join(agent, "sessions")}`);
  });

  it("unknown strategies and bad windows are rejected", () => {
    expect(run(["lab", "--strategies", "bogus", "--no-report"]).code).not.toBe(0);
    const small = run(["lab", "--window", "1000", "--no-report"]);
    expect(small.code).toBe(2);
    expect(small.stderr).toContain("too small");
  });
});

describe("show", () => {
  it("prints facts, timeline and visible/hidden counts of a session with a native compaction", () => {
    const { code, stdout } = run(["show", join(shared, "before-compaction.jsonl")]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/facts \(2\):/);
    expect(stdout).toContain("compaction (native)");
    expect(stdout).toMatch(/hidden in the file: \d+ compacted, 0 folded/);
    expect(stdout).toMatch(/timeline \(\d+\):/);
  });

  it("lists malformed lines with their numbers", () => {
    const dir = tmp();
    const l = new Ledger();
    l.user("hello there, this is fine");
    const file = join(dir, "s.jsonl");
    writeFileSync(
      file,
      `${JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/" })}\n{oops\n${JSON.stringify(l.entries[0])}\n`,
    );
    const { code, stdout } = run(["show", file]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/line 2: invalid JSON/);
  });
});

describe("machines", () => {
  it("exports the statecharts as JSON", () => {
    const { code, stdout } = run(["machines"]);
    expect(code).toBe(0);
    const machines = JSON.parse(stdout) as Record<string, { id: string; states: Record<string, unknown> }>;
    expect(machines.compaction.id).toBe("compaction");
    expect(Object.keys(machines.compaction.states)).toEqual(
      expect.arrayContaining(["requested", "planning", "committed"]),
    );
  });
});
