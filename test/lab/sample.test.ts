import { describe, expect, it } from "vitest";
import { extractProbes } from "../../src/lab/probes.ts";
import { DEFAULT_SAMPLE, generateSample, generateSession } from "../../src/lab/sample/generate.ts";
import type { SessionEntry } from "../../src/log/entries.ts";

describe("generated sample", () => {
  it("is deterministic by seed", () => {
    const a = JSON.stringify(generateSample(42));
    const b = JSON.stringify(generateSample(42));
    const c = JSON.stringify(generateSample(43));
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  it("has several sessions, some long, as valid linear v3 ledgers", () => {
    const sample = generateSample();
    expect(sample.length).toBe(DEFAULT_SAMPLE.length);
    expect(Math.max(...sample.map((s) => s.entries.length))).toBeGreaterThan(800);
    for (const session of sample) {
      const [header, ...rest] = session.entries;
      expect(header).toMatchObject({ type: "session", version: 3 });
      const entries = rest as SessionEntry[];
      const ids = new Set<string>();
      entries.forEach((entry, i) => {
        expect(ids.has(entry.id)).toBe(false);
        ids.add(entry.id);
        expect(entry.parentId).toBe(i === 0 ? null : entries[i - 1].id);
      });
      // Every tool result answers a call of the assistant message before it.
      let calls = new Set<string>();
      for (const entry of entries) {
        if (entry.type !== "message") continue;
        const m = entry.message;
        if (m.role === "assistant")
          calls = new Set(m.content.filter((b) => b.type === "toolCall").map((b) => (b as { id: string }).id));
        if (m.role === "toolResult") expect(calls.has(m.toolCallId)).toBe(true);
      }
      // Timestamps never go backwards.
      const times = entries.map((e) => Date.parse(e.timestamp));
      expect(times).toEqual([...times].sort((x, y) => x - y));
    }
  });

  it("contains what the probes look for: constraints, paths, errors, test results, commands, ! executions", () => {
    const session = generateSession(7, 3, { tasks: 20 });
    const entries = session.entries.slice(1) as SessionEntry[];
    const kinds = new Set(extractProbes(entries).map((p) => p.kind));
    expect([...kinds].sort()).toEqual(["command", "constraint", "error", "path", "result"]);
    const all = generateSample().flatMap((s) => s.entries.slice(1) as SessionEntry[]);
    const roles = new Set(all.map((e) => (e.type === "message" ? e.message.role : e.type)));
    expect(roles.has("bashExecution")).toBe(true);
    const tools = new Set(
      all.flatMap((e) => (e.type === "message" && e.message.role === "toolResult" ? [e.message.toolName] : [])),
    );
    expect([...tools].sort()).toEqual(["bash", "edit", "grep", "read", "write"]);
    const passed = all.some(
      (e) =>
        e.type === "message" &&
        e.message.role === "toolResult" &&
        /Tests {2}\d+ passed \(\d+\)/.test(JSON.stringify(e.message.content)),
    );
    expect(passed).toBe(true);
  });
});
