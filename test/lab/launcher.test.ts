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
