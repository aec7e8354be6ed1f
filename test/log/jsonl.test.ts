import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { assignLegacyIds, MAX_DEPTH, parseJsonl } from "../../src/log/jsonl.ts";
import { loadSessionFile } from "../../src/host/session-file.ts";

const header = JSON.stringify({
  type: "session",
  version: 3,
  id: "s",
  timestamp: "2026-01-01T00:00:00.000Z",
  cwd: "/p",
});
const user = (id: string, parentId: string | null, text: string) =>
  JSON.stringify({
    type: "message",
    id,
    parentId,
    timestamp: "2026-01-01T00:00:01.000Z",
    message: { role: "user", content: text, timestamp: 1 },
  });

describe("session JSONL parsing", () => {
  it("skips a malformed line with its number and reason, never a valid one", () => {
    const text = [
      header,
      user("a", null, "one"),
      "{not json",
      user("b", "a", "two"),
      '{"type":"message","id":"c","parentId":"b","message":{"role":"user","content":"trunc',
    ].join("\n");
    const { entries, diagnostics } = parseJsonl(text);
    expect(entries.map((e) => (e as { id?: string }).id)).toEqual(["s", "a", "b"]);
    expect(diagnostics.map((d) => d.line)).toEqual([3, 5]);
    expect(diagnostics[0].reason).toMatch(/invalid JSON/);
    expect(JSON.stringify(diagnostics)).not.toContain("trunc"); // diagnostics carry no transcript text
  });

  it("rejects JSON that is not an entry", () => {
    const { diagnostics } = parseJsonl(`${header}\n[1,2]\n{"no":"type"}\n`);
    expect(diagnostics.map((d) => d.reason)).toEqual(["not a JSON object", "missing entry type"]);
  });

  it("skips a line nested deeper than MAX_DEPTH, counting brackets inside strings as text", () => {
    const nested = (depth: number) => `{"type":"custom","data":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;
    const quoted = `{"type":"custom","data":"${"[{".repeat(5000)}"}`;
    const { entries, diagnostics } = parseJsonl([header, nested(MAX_DEPTH), nested(MAX_DEPTH + 1), quoted].join("\n"));
    expect(entries).toHaveLength(3);
    expect(diagnostics).toEqual([{ line: 3, reason: `nested deeper than ${MAX_DEPTH} levels` }]);
  });

  it("gives legacy v1 files stable ids and parent links", () => {
    const legacy = () =>
      parseJsonl(
        `{"type":"session","id":"x","timestamp":"t","cwd":"/"}\n{"type":"message","timestamp":"t","message":{"role":"user","content":"a"}}\n{"type":"message","timestamp":"t","message":{"role":"assistant","content":[]}}\n`,
      ).entries;
    const a = legacy();
    const b = legacy();
    assignLegacyIds(a);
    assignLegacyIds(b);
    expect(a).toEqual(b);
    expect((a[2] as { parentId?: string }).parentId).toBe((a[1] as { id?: string }).id);
  });

  it("loads both real sessions without diagnostics, and a damaged copy loses only the damaged line", async () => {
    for (const name of ["before-compaction", "large-session"]) {
      const path = new URL(`../../../shared/sessions/${name}.jsonl`, import.meta.url).pathname;
      const clean = await loadSessionFile(path);
      expect(clean.diagnostics).toEqual([]);
      expect(clean.entries.length).toBeGreaterThan(1000);
      const lines = readFileSync(path, "utf8").split("\n");
      lines[10] = lines[10].slice(0, 40);
      while (!lines[lines.length - 1]) lines.pop();
      const last = lines.length;
      lines[last - 1] = lines[last - 1].slice(0, Math.floor(lines[last - 1].length / 2)); // a truncated last line
      const damaged = join(mkdtempSync(join(tmpdir(), "ctx-load-")), "damaged.jsonl");
      writeFileSync(damaged, lines.join("\n"));
      const loaded = await loadSessionFile(damaged);
      expect(loaded.diagnostics.map((d) => d.line)).toEqual([11, last]);
      expect(loaded.entries.length).toBe(clean.entries.length - 2);
    }
  });
});
