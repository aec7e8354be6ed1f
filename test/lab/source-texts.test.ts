// A replayed session's long texts wait in the spill file; every reader still sees the same message.
import { describe, expect, it } from "vitest";
import { spilledBytes } from "../../src/lab/spill.ts";
import { SOURCE_SPILL_MIN_CHARS, spillRenderedEntry, spillSourceTexts } from "../../src/lab/source-texts.ts";
import { grepTranscript } from "../../src/recall/search.ts";
import { DEFAULT_RECALL_LIMITS } from "../../src/recall/settings.ts";
import { buildTranscript } from "../../src/recall/transcript.ts";
import { chars, Ledger } from "./fixtures.ts";

function session(): Ledger {
  const l = new Ledger();
  l.user(`Summarize this log:\n${chars(3000, "u")}`);
  l.call(`line 1\n${chars(5000, "r")}`);
  l.call("short output");
  l.bash("npm test", `PASS\n${chars(4000, "b")}`);
  l.say(chars(SOURCE_SPILL_MIN_CHARS - 1, "s"));
  return l;
}

type Record = { [key: string]: unknown };
const blockOf = (entry: unknown, i = 0) => (entry as { message: { content: Record[] } }).message.content[i];
const messageOf = (entry: unknown) => (entry as { message: Record }).message;
const isSpilled = (record: object, key: string) =>
  typeof Object.getOwnPropertyDescriptor(record, key)?.get === "function";

describe("source texts", () => {
  it("moves long texts out, and the messages read and serialize as before", () => {
    const { entries } = session();
    const before = JSON.stringify(entries);
    const spilled = spilledBytes();
    spillSourceTexts(entries);
    expect(spilledBytes()).toBeGreaterThan(spilled);
    // Long: the user's text, the read output, the bash output. Short ones stay plain.
    expect(isSpilled(blockOf(entries[0]), "text")).toBe(true);
    expect(isSpilled(blockOf(entries[2]), "text")).toBe(true);
    expect(isSpilled(messageOf(entries[5]), "output")).toBe(true);
    expect(isSpilled(blockOf(entries[4]), "text")).toBe(false);
    expect(isSpilled(blockOf(entries[6]), "text")).toBe(false);
    expect(JSON.stringify(entries)).toBe(before);
    expect(blockOf(entries[2]).text).toBe(`line 1\n${chars(5000, "r")}`);
    expect({ ...blockOf(entries[2]) }).toEqual({ type: "text", text: `line 1\n${chars(5000, "r")}` });
    expect(structuredClone(messageOf(entries[5])).output).toBe(`PASS\n${chars(4000, "b")}`);
  });

  it("an assignment replaces a moved text with a plain value", () => {
    const { entries } = session();
    spillSourceTexts(entries);
    const block = blockOf(entries[2]);
    block.text = "rewritten";
    expect(block.text).toBe("rewritten");
    expect(Object.getOwnPropertyDescriptor(block, "text")?.value).toBe("rewritten");
  });

  it("a rendered entry moved out reads back as rendered, and the grep pages through it as before", () => {
    const { entries } = session();
    const kept = buildTranscript(entries);
    const index = buildTranscript(entries);
    const moved = index.entries.map((entry) => spillRenderedEntry(entry));
    // The long ones moved (the user's text, the read output, the bash call's result), the short ones stayed.
    expect(moved.filter(Boolean).length).toBeGreaterThanOrEqual(3);
    expect(moved.some((m) => !m)).toBe(true);
    const plain = (i: typeof index) =>
      i.entries.map((e) => ({ ...e, text: e.text, lineStarts: Array.from(e.lineStarts), sections: e.sections }));
    expect(plain(index)).toEqual(plain(kept));
    for (const pattern of ["line 1", "rrrr", "npm test", "PASS", "summarize"]) {
      const pages = (i: typeof index) => {
        const out = [];
        let cursor: string | undefined;
        do {
          const r = grepTranscript(i, { pattern, literal: true, ...(cursor ? { cursor } : {}) }, DEFAULT_RECALL_LIMITS);
          out.push(r);
          cursor = r.ok ? r.details.nextCursor : undefined;
        } while (cursor && out.length < 50);
        return out;
      };
      expect(pages(index)).toEqual(pages(kept));
    }
  });
});
