// Input a user did not mean as a session, and hostile files around the lab's inputs and outputs: each is refused
// in one line with exit 2 before any replay, or skipped with a diagnostic; no link is followed, nothing outside
// the named outputs is written, and no walk or probe runs forever.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { inputSize } from "../../src/lab/heap.ts";
import { creationFailure } from "../../src/lab/inputs.ts";
import { Ledger } from "./fixtures.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const bin = join(repo, "src/lab/bin.ts");
const tmp = () => mkdtempSync(join(tmpdir(), "lab-hostile-"));

function run(args: string[], cwd = tmp()) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: "utf8", timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const header = JSON.stringify({
  type: "session",
  version: 3,
  id: "s1",
  timestamp: "2025-01-01T00:00:00.000Z",
  cwd: "/home/u/proj",
});

function entries(): string[] {
  const l = new Ledger();
  l.user("Please keep the tests deterministic, always.");
  l.call("Tests  3 passed (3)", { command: "npm test" }, "bash");
  l.say("done");
  return l.entries.map((e) => JSON.stringify(e));
}

function sessionFile(dir: string, name = "s.jsonl", lines = entries()): string {
  const file = join(dir, name);
  writeFileSync(file, `${[header, ...lines].join("\n")}\n`);
  return file;
}

function expectOneLineError(r: { code: number | null; stdout: string; stderr: string }, message: RegExp): void {
  expect(r.stderr.trimEnd().split("\n"), r.stderr).toHaveLength(1);
  expect(r.stderr.trimEnd()).toMatch(message);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe("");
}

const quick = ["--strategies", "checkpoint", "--no-report", "--quiet"];

describe("input that is not a session", () => {
  it("package.json is refused in one line, exit 2", () => {
    expectOneLineError(
      run(["lab", join(repo, "package.json"), ...quick]),
      /^lab: not a Pi session file: .*package\.json \(its first line is not a session header\)$/,
    );
  });

  it("a text file named .jsonl, and an empty one, are refused, also inside a folder", () => {
    const dir = tmp();
    writeFileSync(join(dir, "notes.jsonl"), "just some notes\nand more\n");
    expectOneLineError(run(["lab", join(dir, "notes.jsonl"), ...quick]), /not a Pi session file: .*notes\.jsonl/);
    sessionFile(dir, "a.jsonl");
    expectOneLineError(run(["lab", dir, ...quick]), /not a Pi session file: .*notes\.jsonl/);
    writeFileSync(join(dir, "empty.jsonl"), "");
    expectOneLineError(
      run(["lab", join(dir, "empty.jsonl"), ...quick]),
      /not a Pi session file: .*empty\.jsonl is empty/,
    );
  });
});

describe("links and option values around the inputs", () => {
  it("*.jsonl links to '.' in a sessions folder are not followed, by the heap sizing or the lab", async () => {
    const dir = tmp();
    const file = sessionFile(dir);
    symlinkSync(".", join(dir, "loop1.jsonl"));
    symlinkSync(".", join(dir, "loop2.jsonl"));
    const size = readFileSync(file).length;
    expect(await inputSize([dir], "")).toEqual({ bytes: size, largest: size, files: 1 });
    const r = run(["lab", dir, ...quick]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("■ s.jsonl");
    expect(r.stdout).not.toContain("loop");
  });

  it("option values are not inputs: --dump / and --json's path are not walked", async () => {
    const dir = tmp();
    const file = sessionFile(dir);
    const size = readFileSync(file).length;
    expect(await inputSize(["--dump", "/", "--json", dir, file, "--window", "64k"], "")).toEqual({
      bytes: size,
      largest: size,
      files: 1,
    });
  });
});

describe("output paths checked before the replay", () => {
  it("--dump /proc and /proc/self are refused in one line", () => {
    const file = sessionFile(tmp());
    expectOneLineError(
      run(["lab", file, ...quick, "--dump", "/proc"]),
      /^lab: cannot write --dump \/proc: no file can be created there \(a kernel file system such as \/proc or \/sys\)$/,
    );
    expectOneLineError(
      run(["lab", file, ...quick, "--dump", "/proc/self"]),
      /^lab: cannot write --dump \/proc\/self: it is a symbolic link/,
    );
  });

  it("--json /dev/full, and --json or --report at /proc/self/status, exit 2 before any replay", () => {
    const file = sessionFile(tmp());
    expectOneLineError(
      run(["lab", file, ...quick, "--json", "/dev/full"]),
      /^lab: cannot write --json \/dev\/full: not a regular file$/,
    );
    expectOneLineError(
      run(["lab", file, ...quick, "--json", "/proc/self/status"]),
      /^lab: cannot write --json \/proc\/self\/status: /,
    );
    expectOneLineError(
      run(["lab", file, ...quick, "--json", "/proc/lab.json"]),
      /^lab: cannot write --json \/proc\/lab\.json: no file can be created there \(a kernel file system such as \/proc or \/sys\)$/,
    );
    expectOneLineError(
      run(["lab", file, "--strategies", "checkpoint", "--quiet", "--report", "/proc/self/status"]),
      /^lab: cannot write --report \/proc\/self\/status: /,
    );
  });

  it("a folder removed between the check and the probe is not called a kernel file system", () => {
    const gone = Object.assign(new Error("ENOENT"), { code: "ENOENT" });
    expect(creationFailure(gone, join(tmp(), "removed"))).toBe("the folder no longer exists");
    expect(creationFailure(gone, "/proc")).toBe(
      "no file can be created there (a kernel file system such as /proc or /sys)",
    );
  });

  it("a link planted at the --json path is refused; the file it points to is untouched", () => {
    const dir = tmp();
    const file = sessionFile(dir);
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "precious");
    symlinkSync(victim, join(dir, "out.json"));
    expectOneLineError(
      run(["lab", file, ...quick, "--json", join(dir, "out.json")]),
      /^lab: cannot write --json .*out\.json: it is a symbolic link \(not followed\)$/,
    );
    expect(readFileSync(victim, "utf8")).toBe("precious");
  });

  it("links planted in the dump directory, at a session folder or a row's file, are replaced, never followed", () => {
    const dir = tmp();
    const file = sessionFile(dir);
    const victim = join(dir, "victim.txt");
    writeFileSync(victim, "precious");
    const elsewhere = join(dir, "elsewhere");
    mkdirSync(elsewhere);
    const dump = join(dir, "dump");
    mkdirSync(dump);
    // A second session's folder is a link to another directory; the first one's row file is a link to the victim.
    const second = sessionFile(dir, "t.jsonl");
    mkdirSync(join(dump, "01-s"));
    symlinkSync(victim, join(dump, "01-s", "checkpoint.jsonl"));
    symlinkSync(elsewhere, join(dump, "02-t"));
    const r = run(["lab", file, second, ...quick, "--window", "20k", "--dump", dump]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(readdirSync(elsewhere)).toEqual([]);
    expect(existsSync(join(dump, "02-t"))).toBe(true);
  });
});

describe("message entries that are not messages", () => {
  it('"message": null and null or number content blocks are skipped with a diagnostic, in lab and show', () => {
    const dir = tmp();
    const good = entries();
    const first = JSON.parse(good[0]) as { id: string; parentId: string | null };
    const bad = [
      JSON.stringify({ ...first, id: "n1", message: null }),
      JSON.stringify({ ...first, id: "n2", message: { role: "user", content: [null] } }),
      JSON.stringify({ ...first, id: "n3", message: { role: "user", content: [{ type: "text", text: "x" }, 7] } }),
    ];
    const file = sessionFile(dir, "s.jsonl", [...good, ...bad]);
    const lab = run(["lab", file, ...quick]);
    expect(lab.code, lab.stderr).toBe(0);
    expect(lab.stdout).toContain("skipped 3 malformed line(s)");
    expect(lab.stdout).toContain("message entry whose message is null");
    expect(lab.stdout).toContain("content block 1 is null, not a block");
    expect(lab.stdout).toContain("content block 2 is number, not a block");
    // The heading says the lines were skipped; each reason does not say it again.
    expect(lab.stdout).not.toMatch(/; skipped/);
    const show = run(["show", file]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stderr).not.toContain("internal error");
  });

  it("a line nested deeper than any session needs is skipped with a diagnostic, in lab and show", () => {
    // 100,000 arrays inside a tool call's arguments: valid JSON, which every walk over the message (its tokens, its
    // strings, its rendering) would follow until the stack runs out.
    const dir = tmp();
    const good = entries();
    const call = JSON.parse(good[1]) as { message: { content: { arguments: unknown }[] } };
    const deep = JSON.stringify({ ...call, id: "deep" }).replace(
      '"arguments":{',
      `"arguments":{"v":${"[".repeat(100_000)}${"]".repeat(100_000)},`,
    );
    const file = sessionFile(dir, "s.jsonl", [...good, deep]);
    const lab = run(["lab", file, ...quick]);
    expect(lab.code, lab.stderr).toBe(0);
    expect(lab.stdout).toContain("skipped 1 malformed line(s)");
    expect(lab.stdout).toMatch(/nested deeper than \d+ levels/);
    const show = run(["show", file]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stderr).not.toContain("internal error");
  });
});
