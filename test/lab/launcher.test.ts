// The command the docs print, `npx pi-context-ledger lab --sessions`, in a checkout: no dist/ (only `npm pack`
// builds it), so the bin's JavaScript launcher runs the TypeScript source. The installed route, which runs the
// compiled dist/, is certified in test/certification/package.test.ts.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readingSession, sessionJsonl } from "./fixtures.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));

describe.skipIf(existsSync(join(repo, "dist")))("the documented command in a checkout", () => {
  it("the bin is a JavaScript launcher, and `npx pi-context-ledger lab --sessions` replays the user's sessions", () => {
    const bin = (JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { bin: Record<string, string> }).bin[
      "pi-context-ledger"
    ];
    expect(bin).toMatch(/\.js$/);
    const agentDir = mkdtempSync(join(tmpdir(), "lab-launcher-"));
    mkdirSync(join(agentDir, "sessions", "--p--"), { recursive: true });
    writeFileSync(
      join(agentDir, "sessions", "--p--", "mine.jsonl"),
      sessionJsonl(readingSession("/p", 3).entries, "/p"),
    );
    const env = {
      ...process.env,
      PATH: `${join(repo, "node_modules/.bin")}:${process.env.PATH ?? ""}`,
      PI_CODING_AGENT_DIR: agentDir,
    };
    const r = spawnSync("npx", ["--no-install", "pi-context-ledger", "lab", "--sessions", "--no-report"], {
      cwd: repo,
      env,
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("■ mine.jsonl");
  });
});

/** The package's minimum Node.js, as package.json's `engines` states it. */
const minimumNode = (() => {
  const range = (JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { engines: { node: string } }).engines
    .node;
  const [, major, minor] = /^>=\s*(\d+)\.(\d+)/.exec(range) ?? [];
  return { major: Number(major), minor: Number(minor) };
})();

/** A Node.js on this machine older than the package needs (a fresh machine's system Node 20), if there is one. */
const olderNode = ["/usr/bin/node", "/usr/local/bin/node", "/bin/node"].find((candidate) => {
  if (!existsSync(candidate)) return false;
  const version = spawnSync(candidate, ["--version"], { encoding: "utf8", timeout: 10_000 }).stdout?.trim() ?? "";
  const [, major, minor] = /^v(\d+)\.(\d+)/.exec(version) ?? [];
  if (major === undefined) return false;
  return (
    Number(major) < minimumNode.major || (Number(major) === minimumNode.major && Number(minor) < minimumNode.minor)
  );
});

// The launcher is the one file a too-old Node still parses: the TypeScript source and Pi would fail later with a
// stack (an unknown ".ts" extension, a missing API). Only a Node older than the minimum can show it; a machine
// without one skips, and says so.
describe.skipIf(!olderNode)(`the launcher on a Node.js older than ${minimumNode.major}.${minimumNode.minor}`, () => {
  it("says in one line which Node.js it needs and exits 1, without a stack", () => {
    const r = spawnSync(olderNode!, [join(repo, "bin/pi-context-ledger.js"), "lab", "--help"], {
      cwd: mkdtempSync(join(tmpdir(), "lab-old-node-")),
      encoding: "utf8",
      timeout: 60_000,
    });
    const version = spawnSync(olderNode!, ["--version"], { encoding: "utf8" }).stdout.trim().slice(1);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      `pi-context-ledger: needs Node.js ${minimumNode.major}.${minimumNode.minor} or newer, as Pi does (this is Node.js ${version})\n`,
    );
  });
});
