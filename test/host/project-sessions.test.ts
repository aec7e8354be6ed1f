// The disk side of the project scope: which directory is read, which files in it count as this project's
// sessions, and the per-file index cache. Real files in a temporary agent directory; no Pi session runs.
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { defaultSessionDir, ProjectSessionStore, projectSessionDir } from "../../src/host/project-sessions.ts";
import { resolveSettings } from "../../src/host/settings.ts";
import { createTranscript } from "../../src/recall/transcript.ts";

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

type Sm = ExtensionContext["sessionManager"];
function fakeSm(cwd: string, sessionDir: string): Sm {
  return {
    getCwd: () => cwd,
    getSessionDir: () => sessionDir,
    getSessionId: () => "current",
    getSessionFile: () => undefined,
    getHeader: () => ({ type: "session", id: "current", timestamp: "2026-01-01T00:00:00.000Z", cwd }),
  } as unknown as Sm;
}

function sessionFile(cwd: string, id: string, text: string): string {
  const header = JSON.stringify({
    type: "session",
    version: 3,
    id,
    timestamp: `2025-01-01T00:00:0${id.length % 10}.000Z`,
    cwd,
  });
  const user = JSON.stringify({
    type: "message",
    id: `${id}-u`,
    parentId: null,
    timestamp: "2025-01-01T00:00:01.000Z",
    message: { role: "user", content: text, timestamp: 1 },
  });
  return `${header}\n${user}\n`;
}

function setup() {
  root = mkdtempSync(join(tmpdir(), "ctx-ledger-store-"));
  const agent = join(root, "agent");
  const cwd = join(root, "project");
  mkdirSync(cwd, { recursive: true });
  const dir = defaultSessionDir(cwd, agent);
  mkdirSync(dir, { recursive: true });
  return { agent, cwd, dir, env: { PI_CODING_AGENT_DIR: agent } as NodeJS.ProcessEnv };
}

describe("project session directory", () => {
  it("is the directory of the current session, or Pi's default for the cwd when the session is in memory", async () => {
    const { cwd, dir, env } = setup();
    expect(await projectSessionDir(fakeSm(cwd, ""), env)).toEqual({ dir });
    expect(await projectSessionDir(fakeSm(cwd, join(root!, "chosen")), env)).toEqual({ dir: join(root!, "chosen") });
    expect(
      await projectSessionDir(fakeSm(cwd, ""), { ...env, PI_CODING_AGENT_SESSION_DIR: join(root!, "env") }),
    ).toEqual({ dir: join(root!, "env") });
  });

  it("refuses a directory that only the project's own settings chose", async () => {
    const { cwd, env } = setup();
    const planted = join(cwd, ".pi", "planted");
    mkdirSync(planted, { recursive: true });
    writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ sessionDir: ".pi/planted" }));
    writeFileSync(join(planted, "2025_planted.jsonl"), sessionFile(cwd, "planted", "PLANTED"));
    const choice = await projectSessionDir(fakeSm(cwd, planted), env);
    expect(choice).toHaveProperty("refused", expect.stringContaining(".pi/settings.json"));
    const store = new ProjectSessionStore();
    expect(await store.source(fakeSm(cwd, planted), createTranscript(), env)).toHaveProperty("refused");
    // The same directory chosen by the user (here the environment) is read.
    expect(await projectSessionDir(fakeSm(cwd, planted), { ...env, PI_CODING_AGENT_SESSION_DIR: planted })).toEqual({
      dir: planted,
    });
  });
});

describe("project session store", () => {
  it("lists only regular session files of the same cwd and counts the rest", async () => {
    const { cwd, dir, env } = setup();
    writeFileSync(join(dir, "2025-01-02_mine.jsonl"), sessionFile(cwd, "mine", "MINE"));
    writeFileSync(join(dir, "2025-01-03_other.jsonl"), sessionFile("/other/project", "other", "OTHER"));
    writeFileSync(join(dir, "2025-01-04_broken.jsonl"), "{not json\n");
    writeFileSync(join(dir, "2025-01-05_empty.jsonl"), "");
    writeFileSync(join(dir, "2025-01-06_long.jsonl"), "x".repeat(70_000));
    const outside = join(root!, "outside.jsonl");
    writeFileSync(outside, sessionFile(cwd, "linked", "LINKED"));
    symlinkSync(outside, join(dir, "2025-01-07_linked.jsonl"));
    mkdirSync(join(dir, "2025-01-08_dir.jsonl"));
    const source = await new ProjectSessionStore().source(fakeSm(cwd, dir), createTranscript(), env);
    if ("refused" in source) throw new Error(source.refused);
    expect(source.earlier.map((s) => s.id)).toEqual(["mine"]);
    expect(source.skipped).toEqual({ damaged: 5, otherProject: 1 });
  });

  it("builds a file's index once and reuses it while size and mtime are unchanged", async () => {
    const { cwd, dir, env } = setup();
    const file = join(dir, "2025-01-02_mine.jsonl");
    writeFileSync(file, sessionFile(cwd, "mine", "FIRST"));
    const store = new ProjectSessionStore();
    const source = async () => {
      const s = await store.source(fakeSm(cwd, dir), createTranscript(), env);
      if ("refused" in s) throw new Error(s.refused);
      return s;
    };
    const a = await source();
    expect(a.isCached(a.earlier[0])).toBe(false);
    const first = await a.open(a.earlier[0]);
    const b = await source();
    expect(b.isCached(b.earlier[0])).toBe(true);
    expect(await b.open(b.earlier[0])).toBe(first);
    appendFileSync(
      file,
      `${JSON.stringify({
        type: "message",
        id: "mine-a",
        parentId: "mine-u",
        timestamp: "2025-01-01T00:00:02.000Z",
        message: { role: "assistant", content: [{ type: "text", text: "SECOND" }], stopReason: "stop", timestamp: 2 },
      })}\n`,
    );
    const c = await source();
    expect(c.isCached(c.earlier[0])).toBe(false);
    const again = await c.open(c.earlier[0]);
    expect(again).not.toBe(first);
    expect(typeof again !== "string" && again.entries.map((e) => e.preview)).toEqual(["FIRST", "SECOND"]);
  });

  it("skips damaged lines inside a session file and keeps the rest", async () => {
    const { cwd, dir, env } = setup();
    const body =
      sessionFile(cwd, "mine", "KEPT-BEFORE") +
      "{broken line\n\u0000\u0001garbage\n" +
      JSON.stringify({
        type: "message",
        id: "mine-b",
        parentId: "mine-u",
        timestamp: "t",
        message: { role: "user", content: "KEPT-AFTER", timestamp: 3 },
      }) +
      "\n";
    writeFileSync(join(dir, "2025_mine.jsonl"), body);
    const source = await new ProjectSessionStore().source(fakeSm(cwd, dir), createTranscript(), env);
    if ("refused" in source) throw new Error(source.refused);
    const index = await source.open(source.earlier[0]);
    expect(typeof index !== "string" && index.entries.map((e) => e.preview)).toEqual(["KEPT-BEFORE", "KEPT-AFTER"]);
  });
});

describe("crossSession setting", () => {
  it("is read from the global settings, with an environment override", () => {
    expect(resolveSettings({}, {}).settings.recall.crossSession).toBeUndefined();
    expect(resolveSettings({ recall: { crossSession: false } }, {}).settings.recall.crossSession).toBe(false);
    expect(
      resolveSettings({ recall: { crossSession: false } }, { PI_CONTEXT_LEDGER_RECALL_CROSS_SESSION: "1" }).settings
        .recall.crossSession,
    ).toBe(true);
    expect(resolveSettings({}, { PI_CONTEXT_LEDGER_RECALL_CROSS_SESSION: "0" }).settings.recall.crossSession).toBe(
      false,
    );
    const bad = resolveSettings({ recall: { crossSession: "no" } }, {});
    expect(bad.settings.recall.crossSession).toBeUndefined();
    expect(bad.warnings.join("\n")).toContain("recall.crossSession");
  });
});

describe("parallel calls", () => {
  it("read a file once when two calls open it at the same time", async () => {
    const { cwd, dir, env } = setup();
    writeFileSync(join(dir, "2025_mine.jsonl"), sessionFile(cwd, "mine", "ONCE"));
    const store = new ProjectSessionStore();
    const source = await store.source(fakeSm(cwd, dir), createTranscript(), env);
    if ("refused" in source) throw new Error(source.refused);
    const [a, b] = await Promise.all([source.open(source.earlier[0]), source.open(source.earlier[0])]);
    expect(typeof a).toBe("object");
    expect(a).toBe(b);
  });
});
