// Hostile and mistaken input to the CLI, as a user types it: every problem is one line on stderr with exit
// code 2 and no stack trace, output paths are checked before any replay starts, oversized lines and broken
// session trees are diagnosed, and no raw control byte from a file reaches the terminal.
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadSessionFile } from "../../src/host/session-file.ts";
import { Ledger } from "./fixtures.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const bin = join(repo, "src/lab/bin.ts");
const tmp = () => mkdtempSync(join(tmpdir(), "lab-inputs-"));

function run(args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd: tmp(), encoding: "utf8", timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const header = (cwd = "/home/u/proj") =>
  JSON.stringify({ type: "session", version: 3, id: "s1", timestamp: "2025-01-01T00:00:00.000Z", cwd });

/** A session file of a ledger's entries after a header; returns its path. */
function ledgerFile(dir: string, name: string, l: Ledger): string {
  const file = join(dir, name);
  writeFileSync(file, `${[header(), ...l.entries.map((e) => JSON.stringify(e))].join("\n")}\n`);
  return file;
}

/** A small valid session file; returns its path. */
function sessionFile(dir: string, name = "s.jsonl"): string {
  const l = new Ledger();
  l.user("Please keep the tests deterministic, always.");
  l.call("Tests  3 passed (3)", { command: "npm test" }, "bash");
  l.say("done");
  return ledgerFile(dir, name, l);
}

/** One line on stderr, exit 2, no stack frames, nothing on stdout. */
function expectOneLineError(r: { code: number | null; stdout: string; stderr: string }, message: RegExp): void {
  expect(r.code).toBe(2);
  expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(r.stderr.trimEnd()).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at |Error:|TypeError/);
  expect(r.stdout).toBe("");
}

/** Raw C0/C1 control bytes other than newline (terminal escapes start with ESC, 0x1b, or CSI, 0x9b). */
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe("lab CLI inputs: one line, exit 2", () => {
  it("a bad price", () => {
    expectOneLineError(run(["lab", "--prices", "input=abc", "--no-report"]), /^lab: bad price "input=abc"/);
  });

  it("an unknown strategy", () => {
    expectOneLineError(
      run(["lab", "--strategies", "nope", "--no-report"]),
      /^lab: unknown strategy "nope" \(known: checkpoint,/,
    );
  });

  it("an unknown flag on show", () => {
    expectOneLineError(run(["show", "--bogus", "x.jsonl"]), /^show: unknown option '--bogus'/i);
  });

  it("--json into a missing directory is refused before the run starts", () => {
    const dir = tmp();
    const r = run(["lab", sessionFile(dir), "--json", join(dir, "missing", "out.json"), "--no-report"]);
    expectOneLineError(r, /^lab: cannot write --json .*missing\/out\.json: directory .*missing does not exist$/);
  });

  it("--report into a missing directory is refused before the run starts (the sample never replays)", () => {
    const r = run(["lab", "--report", "/nonexistent-dir/r.html"]);
    expectOneLineError(
      r,
      /^lab: cannot write --report \/nonexistent-dir\/r\.html: directory \/nonexistent-dir does not exist$/,
    );
  });

  it("--json onto a directory is refused", () => {
    const dir = tmp();
    expectOneLineError(
      run(["lab", sessionFile(dir), "--json", dir, "--no-report"]),
      /^lab: cannot write --json .*: it is a directory$/,
    );
  });

  it("a link that loops is named as one, not as a missing file", () => {
    const dir = tmp();
    const self = join(dir, "self.jsonl");
    symlinkSync(self, self);
    expectOneLineError(run(["lab", self, "--no-report"]), /^lab: a symbolic link that loops: .*self\.jsonl$/);
  });

  it("a device or other non-regular file is refused", () => {
    expectOneLineError(run(["lab", "/dev/zero", "--no-report"]), /^lab: not a regular file: \/dev\/zero$/);
    expectOneLineError(run(["show", "/dev/zero"]), /^show: not a regular file: \/dev\/zero$/);
  });
});

// Pi can leave a session file with its header and no message (a session opened and left at once), and a file can
// hold only lines the loader skips. Neither has a request to replay: a table of zeros and a recommendation for it
// would answer a question nobody asked.
describe("session files without a request", () => {
  it("alone: one line naming the file, exit 2", () => {
    const dir = tmp();
    writeFileSync(join(dir, "empty.jsonl"), `${header()}\n`);
    expectOneLineError(
      run(["lab", join(dir, "empty.jsonl"), "--no-report", "--quiet"]),
      /^lab: nothing to replay in empty\.jsonl: it holds no request \(0 entries\)$/,
    );
  });

  it("alone with malformed lines: the count, and where they are listed", () => {
    const dir = tmp();
    const line = JSON.stringify({ type: "message", id: "n1", parentId: null, timestamp: "2025-01-01T00:00:00Z" });
    writeFileSync(
      join(dir, "broken.jsonl"),
      `${header()}\n${JSON.stringify({ ...JSON.parse(line), message: null })}\n`,
    );
    expectOneLineError(
      run(["lab", join(dir, "broken.jsonl"), "--no-report", "--quiet"]),
      /^lab: nothing to replay in broken\.jsonl: it holds no request \(0 entries; 1 malformed line skipped, listed by pi-context-ledger show\)$/,
    );
  });

  it("a folder of them alone: a line for each, and nothing recommended", () => {
    const dir = tmp();
    writeFileSync(join(dir, "a.jsonl"), `${header()}\n`);
    writeFileSync(join(dir, "b.jsonl"), `${header()}\n`);
    const r = run(["lab", dir, "--no-report", "--quiet", "--jobs", "1"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("■ a.jsonl: nothing to replay (0 entries, no request)");
    expect(r.stdout).toContain("■ b.jsonl: nothing to replay (0 entries, no request)");
    expect(r.stdout).toContain("Nothing to recommend: none of these 2 session files holds a request.");
    expect(r.stdout).not.toMatch(/Use |To use it|■ all/);
  });

  it("in a folder: a line for it instead of a table, and the others replayed", () => {
    const dir = tmp();
    writeFileSync(join(dir, "empty.jsonl"), `${header()}\n`);
    sessionFile(dir, "work.jsonl");
    const r = run(["lab", dir, "--no-report", "--jobs", "1"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    const at = lines.findIndex((l) => l.startsWith("■ empty.jsonl"));
    expect(lines[at]).toBe("■ empty.jsonl: nothing to replay (0 entries, no request)");
    expect(lines[at + 1]).toBe("");
    expect(r.stdout).toContain("■ work.jsonl: ");
    // The other session's rows never acted either: its own choice is no close call, it did not matter.
    expect(r.stdout).toContain("  for this session alone: checkpoint (nothing had to act)");
    expect(r.stdout).not.toContain("(a close call)");
  });
});

describe("one session named more than once", () => {
  it("is replayed once, whether named by a folder, a relative path, an absolute path or a link", () => {
    const dir = tmp();
    const file = sessionFile(dir, "a.jsonl");
    sessionFile(dir, "b.jsonl");
    const link = join(tmp(), "link-a.jsonl");
    symlinkSync(file, link);
    const json = join(tmp(), "out.json");
    const r = run([
      "lab",
      dir,
      dir,
      file,
      `${dir}/./a.jsonl`,
      link,
      "--json",
      json,
      "--no-report",
      "--strategies",
      "checkpoint",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const names = (JSON.parse(readFileSync(json, "utf8")) as { sessions: { name: string }[] }).sessions.map(
      (s) => s.name,
    );
    expect(names).toEqual(["a.jsonl", "b.jsonl"]);
  });
});

describe("a session without probes", () => {
  it("shows no share of probes kept, rather than 100% of none", () => {
    const l = new Ledger();
    l.user("hello there");
    l.say("hello");
    const file = ledgerFile(tmp(), "chat.jsonl", l);
    const r = run(["lab", file, "--no-report", "--quiet", "--strategies", "checkpoint,native"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("0 probes");
    const row = r.stdout.split("\n").find((line) => line.startsWith("checkpoint "));
    const cells = row?.trim().split(/\s{2,}/) ?? [];
    const at = r.stdout
      .split("\n")
      .find((line) => line.startsWith("strategy "))
      ?.trim()
      .split(/\s{2,}/)
      .indexOf("probes");
    expect(at).toBeGreaterThan(0);
    expect(cells[at!]).toBe("—");
  });
});

describe("a line longer than V8's maximum string length", () => {
  // A sparse file: the long line costs no disk and reads quickly, and the real limit is the one exercised.
  function hugeLineFile(): string {
    const dir = tmp();
    const l = new Ledger();
    l.user("first message, before the huge line");
    l.say("an answer after it");
    const file = join(dir, "huge.jsonl");
    writeFileSync(file, `${header()}\n${JSON.stringify(l.entries[0])}\n{"type":"message","x":"`);
    // 2^29 - 24 is V8's limit on 64-bit; one line of NUL bytes just over it.
    truncateSync(file, 537_000_000);
    appendFileSync(file, `"}\n${JSON.stringify(l.entries[1])}\n`);
    return file;
  }

  it("is skipped with a diagnostic by the loader, and the lines around it still load", async () => {
    const loaded = await loadSessionFile(hugeLineFile());
    expect(loaded.diagnostics).toEqual([
      {
        line: 3,
        reason: expect.stringMatching(/^line longer than 536870888 bytes \(the longest string JavaScript can hold\)$/),
      },
    ]);
    expect(loaded.entries.map((e) => e.id)).toEqual(["e000", "e001"]);
  });

  it("is a diagnostic in the lab, not an uncaught RangeError", () => {
    const r = run(["lab", hugeLineFile(), "--no-report", "--quiet"]);
    expect(r.stderr).not.toMatch(/RangeError/);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/skipped 1 malformed line\(s\): line 3: line longer than 536870888 bytes/);
  });
});

describe("show on broken session trees", () => {
  const entry = (id: string, parentId: string | null, text: string) =>
    JSON.stringify({
      type: "message",
      id,
      parentId,
      timestamp: "2025-01-01T00:00:01.000Z",
      message: { role: "user", content: [{ type: "text", text }], timestamp: 1 },
    });
  function file(lines: string[]): string {
    const path = join(tmp(), "tree.jsonl");
    writeFileSync(path, `${[header(), ...lines].join("\n")}\n`);
    return path;
  }

  it("diagnoses a parent cycle and never counts a negative number of off-branch entries", () => {
    const r = run(["show", file([entry("a", "c", "one"), entry("b", "a", "two"), entry("c", "b", "three")])]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/parent cycle: .*"c" .*"b" .*"a"/);
    expect(r.stdout).toContain("3 entries (3 on the active branch, 0 on other branches)");
    expect(r.stdout).not.toMatch(/-\d+ on other branches/);
  });

  it("diagnoses a duplicate id that closes a cycle", () => {
    const r = run(["show", file([entry("a", null, "one"), entry("b", "a", "two"), entry("a", "b", "three")])]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/duplicate id "a" \(2 entries; the last one wins\)/);
    expect(r.stdout).toMatch(/parent cycle/);
    expect(r.stdout).not.toMatch(/-\d+ on other branches/);
  });

  it("diagnoses a dangling parent", () => {
    const r = run(["show", file([entry("a", null, "one"), entry("b", "zzz", "two"), entry("c", "b", "three")])]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /dangling parent: entry "b" names parent "zzz", which is not in the file; the active branch starts at "b"/,
    );
    expect(r.stdout).toContain("3 entries (2 on the active branch, 1 on other branches)");
  });

  it("the lab reports the same diagnostics for the session it replays", () => {
    // An answer makes a request to replay (a session of user messages alone has none, and the lab says only that).
    const answer = JSON.stringify({
      type: "message",
      id: "b",
      parentId: "a",
      timestamp: "2025-01-01T00:00:02.000Z",
      message: { role: "assistant", content: [{ type: "text", text: "two" }], stopReason: "stop", timestamp: 2 },
    });
    const r = run(["lab", file([entry("a", "c", "one"), answer, entry("c", "b", "three")]), "--no-report", "--quiet"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/parent cycle/);
  });
});

describe("no raw control bytes reach the terminal", () => {
  it("a malformed line that starts with terminal escapes, in show, show --json and lab", () => {
    const dir = tmp();
    const l = new Ledger();
    l.user("hello \u001b]0;title\u0007 there\u009b31m, this is fine");
    l.say("ok");
    const name = "evil\u001b[31m.jsonl";
    const path = join(dir, name);
    writeFileSync(
      path,
      `${header()}\n\u001b[2J\u001b[H{"clear":\n${l.entries.map((e) => JSON.stringify(e)).join("\n")}\n`,
    );
    for (const args of [
      ["show", path],
      ["show", path, "--json"],
      ["lab", path, "--no-report", "--quiet"],
    ]) {
      const r = run(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(
        args.includes("--json")
          ? /"line": 2,\s+"reason": "invalid JSON \(Unexpected token\)"/
          : /line 2: invalid JSON \(Unexpected token\)/,
      );
      expect(r.stdout).not.toMatch(/\{\\?"clear/); // the diagnostic quotes nothing of the malformed line
      expect(r.stdout).not.toMatch(CONTROL);
      expect(r.stderr).not.toMatch(CONTROL);
    }
  });
});
