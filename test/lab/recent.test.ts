// `--sessions --last N` and `--since <date>`: the most recently changed sessions, for "which setting for what I
// do now". Kept in the walk's order, so the same files give the same JSON.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { inputSize } from "../../src/lab/heap.ts";
import { newestSessions } from "../../src/lab/inputs.ts";
import { recentOptions } from "../../src/lab/recent.ts";
import { readingSession, sessionJsonl } from "./fixtures.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));

function folder(): { dir: string; files: string[] } {
  const dir = mkdtempSync(join(tmpdir(), "lab-recent-"));
  const files = ["a.jsonl", "b.jsonl", "c.jsonl"].map((name, i) => {
    const file = join(dir, name);
    writeFileSync(file, sessionJsonl(readingSession("/p", 2).entries, "/p"));
    // b is the newest, then a, then c.
    const day = [Date.UTC(2026, 10, 10), Date.UTC(2026, 10, 20), Date.UTC(2026, 10, 1)][i] / 1000;
    utimesSync(file, day, day);
    return file;
  });
  return { dir, files };
}

describe("recent sessions", () => {
  it("--last keeps the n most recently changed, --since those changed since a date, in the walk's order", async () => {
    const { files } = folder();
    expect(await newestSessions(files, recentOptions("2", undefined)!)).toEqual([files[0], files[1]]);
    expect(await newestSessions(files, recentOptions(undefined, "2026-11-05")!)).toEqual([files[0], files[1]]);
    expect(await newestSessions(files, recentOptions("1", "2026-11-05")!)).toEqual([files[1]]);
    expect(await newestSessions(files, recentOptions(undefined, "2026-12-01")!)).toEqual([]);
  });

  it("bad values are input errors", () => {
    expect(() => recentOptions("0", undefined)).toThrow(/bad --last "0"/);
    expect(() => recentOptions("two", undefined)).toThrow(/bad --last/);
    expect(() => recentOptions(undefined, "yesterday-ish")).toThrow(/bad --since/);
    expect(recentOptions(undefined, undefined)).toBeUndefined();
  });

  it("the CLI's parent sizes the child for the picked sessions only, so it counts their replayers right", async () => {
    const { dir, files } = folder();
    // a.jsonl grows so the largest file picked tells which were counted.
    writeFileSync(files[0], sessionJsonl(readingSession("/p", 6).entries, "/p"));
    utimesSync(files[0], Date.UTC(2026, 10, 10) / 1000, Date.UTC(2026, 10, 10) / 1000);
    const sizes = files.map((f) => statSync(f).size);
    expect(await inputSize([dir], "")).toEqual({ bytes: sizes[0] + sizes[1] + sizes[2], largest: sizes[0], files: 3 });
    expect(await inputSize([dir, "--since", "2026-11-15"], "")).toEqual({
      bytes: sizes[1],
      largest: sizes[1],
      files: 1,
    });
    expect(await inputSize([dir, "--last", "2"], "")).toEqual({
      bytes: sizes[0] + sizes[1],
      largest: sizes[0],
      files: 2,
    });
    expect(await inputSize([dir, "--last", "1", "--since", "2026-11-05"], "")).toEqual({
      bytes: sizes[1],
      largest: sizes[1],
      files: 1,
    });
    expect(await inputSize([dir, "--since", "2027-01-01"], "")).toEqual({ bytes: 0, largest: 0, files: 0 });
    // A value the lab will refuse counts every file: the child says what is wrong before it replays anything.
    expect((await inputSize([dir, "--since", "soon"], "")).files).toBe(3);
  });

  it("the CLI replays only the picked sessions of --sessions", () => {
    const { dir } = folder();
    const agentDir = mkdtempSync(join(tmpdir(), "lab-recent-agent-"));
    mkdirSync(join(agentDir, "sessions"));
    const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir };
    // The agent's sessions folder is the test folder (a link the user names is followed; links inside are not).
    const run = (args: string[]) =>
      spawnSync(
        process.execPath,
        [join(repo, "src/lab/bin.ts"), "lab", ...args, "--no-report", "--quiet", "--strategies", "checkpoint"],
        { cwd: dir, encoding: "utf8", env, timeout: 120_000 },
      );
    const r = run([dir, "--last", "1"]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("■ b.jsonl");
    expect(r.stdout).not.toMatch(/■ [ac]\.jsonl/);
    const none = run([dir, "--since", "2027-01-01"]);
    expect(none.status).toBe(2);
    expect(none.stderr.trim()).toBe("lab: no session file changed since 2027-01-01");
  });
});
