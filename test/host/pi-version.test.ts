// A Pi older than 1.6: the extension entry and the CLI say which Pi they need instead of failing inside with a
// missing function. The old Pi is a stand-in package exporting only what Pi 0.74 would (its VERSION, no
// buildSessionProjection). Issue 24, item 20.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { piVersionProblem } from "../../src/host/pi-version.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const roots: string[] = [];
afterEach(() => {
  vi.doUnmock("@earendil-works/pi-coding-agent");
  vi.resetModules();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe("Pi's version", () => {
  it("accepts 1.6 and newer and names the version it needs otherwise", () => {
    for (const version of ["1.6.0", "1.6.3", "1.10.0", "2.0.0"]) expect(piVersionProblem(version)).toBeUndefined();
    expect(piVersionProblem("0.74.2")).toBe("needs Pi 1.6 or newer (found 0.74.2)");
    expect(piVersionProblem("1.5.9")).toBe("needs Pi 1.6 or newer (found 1.5.9)");
  });

  it("the extension entry refuses an old Pi with that sentence, before registering anything", async () => {
    vi.doMock("@earendil-works/pi-coding-agent", async (original) => ({
      ...(await original<Record<string, unknown>>()),
      VERSION: "0.74.2",
    }));
    const { default: contextLedger } = await import("../../index.ts");
    const on = vi.fn();
    const registerTool = vi.fn();
    const pi = {
      on,
      registerTool,
      registerCommand: vi.fn(),
      registerMessageRenderer: vi.fn(),
    } as unknown as ExtensionAPI;
    expect(() => contextLedger(pi)).toThrow("pi-context-ledger needs Pi 1.6 or newer (found 0.74.2)");
    expect(on).not.toHaveBeenCalled();
    expect(registerTool).not.toHaveBeenCalled();
  });

  it("the CLI says which Pi it needs instead of an internal error", () => {
    // A copy of this checkout's dependency tree (links), with Pi replaced by an old one; --preserve-symlinks makes
    // the CLI resolve its imports from there.
    const root = mkdtempSync(join(tmpdir(), "old-pi-"));
    roots.push(root);
    const modules = join(root, "node_modules");
    mkdirSync(join(modules, "@earendil-works", "pi-coding-agent"), { recursive: true });
    for (const name of readdirSync(join(repo, "node_modules"))) {
      if (name !== "@earendil-works") symlinkSync(join(repo, "node_modules", name), join(modules, name));
    }
    for (const name of readdirSync(join(repo, "node_modules", "@earendil-works"))) {
      if (name !== "pi-coding-agent")
        symlinkSync(join(repo, "node_modules", "@earendil-works", name), join(modules, "@earendil-works", name));
    }
    const old = join(modules, "@earendil-works", "pi-coding-agent");
    writeFileSync(
      join(old, "package.json"),
      JSON.stringify({
        name: "@earendil-works/pi-coding-agent",
        version: "0.74.2",
        type: "module",
        exports: { ".": "./index.js" },
      }),
    );
    writeFileSync(join(old, "index.js"), 'export const VERSION = "0.74.2";\nexport class SessionManager {}\n');
    symlinkSync(join(repo, "src"), join(root, "src"));
    symlinkSync(join(repo, "package.json"), join(root, "package.json"));
    const session = resolve(repo, "../shared/sessions/before-compaction.jsonl");
    const result = spawnSync(
      process.execPath,
      ["--preserve-symlinks", "--preserve-symlinks-main", join(root, "src/lab/bin.ts"), "show", session],
      {
        cwd: root,
        encoding: "utf8",
        timeout: 120_000,
      },
    );
    expect(result.stderr).toBe("pi-context-ledger show: needs Pi 1.6 or newer (found 0.74.2)\n");
    expect(result.status).toBe(1);
  });
});
