// The lab re-starts itself with a heap sized to its input, so the collector works before memory grows far
// past what the replay holds.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { childFlags, heapEnv, inputBytes } from "../../src/lab/heap.ts";
import type { LabResult } from "../../src/lab/results.ts";
import { readingSession, sessionJsonl } from "./fixtures.ts";

describe("heap sized to the input", () => {
  it("counts the session files a command line names, and sizes old space from them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lab-heap-"));
    mkdirSync(join(dir, "nested"));
    writeFileSync(join(dir, "a.jsonl"), "x".repeat(1000));
    writeFileSync(join(dir, "nested", "b.jsonl"), "x".repeat(500));
    writeFileSync(join(dir, "notes.txt"), "x".repeat(9999));
    const agent = join(dir, "nested");
    expect(await inputBytes([dir, "--window", "64k", "/nonexistent"], agent)).toBe(1500);
    expect(await inputBytes(["--sessions"], agent)).toBe(500);
    expect(childFlags(0)).toEqual([
      "--max-old-space-size=256",
      "--max-semi-space-size=4",
      "--heap-growing-percent=30",
      "--invocation-count-for-turbofan=10000",
      "--expose-gc",
    ]);
    expect(childFlags(100_000_001)).toEqual([
      "--max-old-space-size=660",
      "--max-semi-space-size=4",
      "--heap-growing-percent=30",
      "--invocation-count-for-turbofan=10000",
      "--expose-gc",
    ]);
  });

  it("a run whose replayers take every core does without V8's background threads", () => {
    // Two replayers on two cores: the collectors' and compilers' threads would only take turns with them.
    expect(childFlags(0, 0, { replayers: 2, cores: 2 })).toEqual([...childFlags(0), "--single-threaded"]);
    expect(childFlags(0, 0, { replayers: 3, cores: 2 })).toContain("--single-threaded");
    // A serial run, or one that leaves cores free, keeps them: they run beside the replay.
    expect(childFlags(0, 0, { replayers: 1, cores: 1 })).not.toContain("--single-threaded");
    expect(childFlags(0, 0, { replayers: 1, cores: 2 })).not.toContain("--single-threaded");
    expect(childFlags(0, 0, { replayers: 2, cores: 8 })).not.toContain("--single-threaded");
  });

  it("this Node accepts every flag the lab starts its child with", () => {
    // V8 renames and retires flags between Node releases; an unknown one would stop every lab run at its start.
    const r = spawnSync(
      process.execPath,
      [...childFlags(50_000_000, 20_000_000, { replayers: 2, cores: 2 }), "-e", "0"],
      {
        encoding: "utf8",
      },
    );
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("the child runs with one malloc arena unless the user chose otherwise", () => {
    expect(heapEnv({ PATH: "/bin" })).toEqual({ PATH: "/bin", MALLOC_ARENA_MAX: "1" });
    expect(heapEnv({ MALLOC_ARENA_MAX: "4" }).MALLOC_ARENA_MAX).toBe("4");
  });

  it("the CLI's lab runs under that heap limit", () => {
    const dir = mkdtempSync(join(tmpdir(), "lab-heap-"));
    const file = join(dir, "s.jsonl");
    writeFileSync(file, sessionJsonl(readingSession("/p", 3).entries, "/p"));
    const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
    const json = join(dir, "out.json");
    const r = spawnSync(
      process.execPath,
      [join(repo, "src/lab/bin.ts"), "lab", file, "--json", json, "--no-report", "--quiet"],
      { encoding: "utf8", env: { ...process.env, PI_CONTEXT_LEDGER_LAB_CHILD: "" } },
    );
    expect(r.status).toBe(0);
    const run = (JSON.parse(readFileSync(json, "utf8")) as LabResult).run!;
    // V8 adds its young generation to the old-space limit it reports.
    expect(run.heapLimitBytes! / 2 ** 20).toBeGreaterThanOrEqual(257);
    expect(run.heapLimitBytes! / 2 ** 20).toBeLessThan(300);
  });
});
