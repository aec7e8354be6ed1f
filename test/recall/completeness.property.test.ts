// Recall completeness: on generated ledgers, every text fragment of every entry on the active branch is found
// by an exact context_grep, attributed to that entry; and every reported match really is in the entry named.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { foldCase } from "../../src/recall/regex.ts";
import { grepTranscript, listEntries, type GrepMatch } from "../../src/recall/search.ts";
import { recallLimits } from "../../src/recall/settings.ts";
import { buildTranscript, createTranscript, renderEntry, syncTranscript } from "../../src/recall/transcript.ts";
import { ledgerArb } from "../arbitraries/index.ts";
import { loadRealSessions } from "../properties/real-sessions.ts";
import { Branch, toolCall } from "./fixtures.ts";

function activeBranch(entries: readonly SessionEntry[], leafId: string | null): SessionEntry[] {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const out: SessionEntry[] = [];
  for (let id = leafId; id !== null; ) {
    const entry = byId.get(id);
    if (!entry) break;
    out.push(entry);
    id = entry.parentId;
  }
  return out.reverse();
}

type Loose = Record<string, unknown>;

/** Every string leaf of tool arguments. */
function leaves(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) leaves(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) leaves(v, out);
}

function blockTexts(content: unknown, out: string[]): void {
  if (typeof content === "string") out.push(content);
  else if (Array.isArray(content))
    for (const b of content as Loose[]) if (b?.type === "text") out.push(String(b.text ?? ""));
}

/**
 * The texts recall promises to keep, read straight from the entry (not from our renderer): messages, thinking,
 * tool arguments and outputs, shell runs not excluded from context, custom messages and summaries.
 */
function searchableTexts(entry: SessionEntry): string[] {
  const out: string[] = [];
  switch (entry.type) {
    case "message": {
      const m = entry.message as unknown as Loose;
      if (m.role === "user" || m.role === "custom") blockTexts(m.content, out);
      else if (m.role === "toolResult") blockTexts(m.content, out);
      else if (m.role === "bashExecution" && !m.excludeFromContext) out.push(String(m.command), String(m.output));
      else if (m.role === "assistant") {
        for (const b of m.content as Loose[]) {
          if (b.type === "text") out.push(String(b.text));
          if (b.type === "thinking") out.push(String(b.thinking));
          if (b.type === "toolCall") {
            out.push(String(b.name));
            leaves(b.arguments, out);
          }
        }
      }
      break;
    }
    case "custom_message":
      blockTexts(entry.content, out);
      break;
    case "compaction":
    case "branch_summary":
      out.push(entry.summary);
      break;
    default:
      break;
  }
  return out.filter((t) => t.length > 0);
}

/** All matches of an exact-text grep from the start, following cursors until past `stopOrdinal`. */
function grepUntil(
  index: ReturnType<typeof buildTranscript>,
  needle: string,
  limits: ReturnType<typeof recallLimits>,
  stopOrdinal: number,
  caseSensitive = true,
): GrepMatch[] {
  const matches: GrepMatch[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 100_000; pages++) {
    const outcome = grepTranscript(index, { pattern: needle, literal: true, cursor, caseSensitive }, limits);
    if (!outcome.ok) throw new Error(outcome.error);
    matches.push(...outcome.details.matches);
    cursor = outcome.details.nextCursor;
    const last = matches[matches.length - 1];
    if (!cursor || (last && (index.ordinalById.get(last.entryId) ?? 0) > stopOrdinal)) return matches;
  }
  throw new Error("runaway pagination");
}

describe("recall completeness (fast-check)", () => {
  it("finds every fragment of every branch entry by exact grep, attributed to its entry", () => {
    const probe = fc.record({
      entry: fc.nat(),
      text: fc.nat(),
      start: fc.nat(),
      length: fc.integer({ min: 1, max: 40 }),
    });
    fc.assert(
      fc.property(
        ledgerArb({ maxCommands: 40 }),
        fc.array(probe, { minLength: 1, maxLength: 6 }),
        fc.record({
          grepMaxResults: fc.integer({ min: 1, max: 12 }),
          grepMaxChars: fc.integer({ min: 500, max: 20_000 }),
        }),
        (ledger, probes, settings) => {
          const branch = activeBranch(ledger.entries, ledger.leafId);
          const index = buildTranscript(branch);
          const limits = recallLimits(settings);
          const candidates = branch.filter((e) => searchableTexts(e).length > 0 && renderEntry(e));
          // Entries recall must keep out: excluded shell runs never appear in the index.
          for (const e of branch) {
            const m = e.type === "message" ? (e.message as unknown as Loose) : undefined;
            if (m?.role === "bashExecution" && m.excludeFromContext) expect(index.ordinalById.has(e.id)).toBe(false);
          }
          if (candidates.length === 0) return;
          const byId = new Map(branch.map((e) => [e.id, e]));
          for (const p of probes) {
            const source = candidates[p.entry % candidates.length];
            const texts = searchableTexts(source);
            const text = texts[p.text % texts.length];
            const start = p.start % text.length;
            const fragment = text.slice(start, start + p.length);
            const ordinal = index.ordinalById.get(source.id)!;
            const matches = grepUntil(index, fragment, limits, ordinal);
            // Found, with the source entry among the attributions.
            expect(matches.map((m) => m.entryId)).toContain(source.id);
            // Every attribution is right: the fragment starts on the reported line of the entry named,
            // checked against that entry rendered on its own (no index involved).
            for (const m of matches) {
              const alone = renderEntry(byId.get(m.entryId)!)!;
              const lineStart = alone.lineStarts[m.line - 1];
              const lineEnd = m.line < alone.lineStarts.length ? alone.lineStarts[m.line] : alone.text.length + 1;
              const at = alone.text.indexOf(fragment, lineStart);
              expect(at >= lineStart && at < lineEnd).toBe(true);
            }
            // Ignoring case (the default) finds it too, and every line it reports holds the fragment up to case.
            // Half of a surrogate pair has no case of its own, so such fragments are left to the exact search.
            if (/^[\udc00-\udfff]|[\ud800-\udbff]$/.test(fragment)) continue;
            const folded = grepUntil(index, fragment, limits, ordinal, false);
            expect(folded.map((m) => m.entryId)).toContain(source.id);
            for (const m of folded) {
              const alone = renderEntry(byId.get(m.entryId)!)!;
              const lineStart = alone.lineStarts[m.line - 1];
              const lineEnd = m.line < alone.lineStarts.length ? alone.lineStarts[m.line] : alone.text.length + 1;
              const at = foldCase(alone.text).indexOf(foldCase(fragment), lineStart);
              expect(at >= lineStart && at < lineEnd).toBe(true);
            }
          }
        },
      ),
    );
  });

  it("keeps every string leaf of arbitrary tool arguments verbatim (quotes, backslashes, newlines, nesting)", () => {
    const argsArb = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), {
      minKeys: 1,
      maxKeys: 4,
    });
    const multiline = fc
      .array(fc.string({ unit: "grapheme", maxLength: 30 }), { minLength: 2, maxLength: 5 })
      .map((l) => l.join("\n"));
    fc.assert(
      fc.property(
        fc.array(fc.record({ args: argsArb, code: multiline }), { minLength: 1, maxLength: 5 }),
        fc.array(
          fc.record({ call: fc.nat(), leaf: fc.nat(), start: fc.nat(), length: fc.integer({ min: 1, max: 30 }) }),
          { minLength: 1, maxLength: 8 },
        ),
        (calls, probes) => {
          const b = new Branch();
          b.user("start");
          calls.forEach((c, i) => b.assistant([toolCall("write", { ...c.args, content: c.code }, `call-${i}`)]));
          const index = buildTranscript(b.entries);
          const limits = recallLimits({ grepMaxResults: 50, grepMaxChars: 100_000 });
          for (const p of probes) {
            const i = p.call % calls.length;
            const strings: string[] = [];
            leaves({ ...calls[i].args, content: calls[i].code }, strings);
            const nonEmpty = strings.filter((x) => x.length > 0);
            if (!nonEmpty.length) continue;
            const text = nonEmpty[p.leaf % nonEmpty.length];
            const start = p.start % text.length;
            const fragment = text.slice(start, start + p.length);
            const source = b.entries[i + 1].id;
            expect(grepUntil(index, fragment, limits, index.ordinalById.get(source)!).map((m) => m.entryId)).toContain(
              source,
            );
          }
        },
      ),
    );
  });

  it("an index synced live through every append and /tree move equals one built from the final branch", () => {
    fc.assert(
      fc.property(ledgerArb({ maxCommands: 60 }), (ledger) => {
        const byId = new Map<string, SessionEntry>();
        const live = createTranscript();
        let leaf: string | null = null;
        for (const step of ledger.steps) {
          if (step.kind === "append") {
            byId.set(step.entry.id, step.entry);
            leaf = step.entry.id;
          } else leaf = step.leafId;
          syncTranscript(live, leaf, (id) => byId.get(id));
        }
        expect(leaf).toBe(ledger.leafId);
        const rebuilt = buildTranscript(activeBranch(ledger.entries, ledger.leafId));
        expect(live).toEqual(rebuilt);
        const limits = recallLimits({});
        expect(listEntries(live, {}, limits)).toEqual(listEntries(rebuilt, {}, limits));
      }),
    );
  });

  it("on the real sessions, a fragment of every entry's texts is found and attributed to that entry", () => {
    for (const session of loadRealSessions()) {
      const last = session.entries[session.entries.length - 1];
      const branch = activeBranch(session.entries, last.id);
      const index = buildTranscript(branch);
      const limits = recallLimits({ grepMaxResults: 50, grepMaxChars: 200_000 });
      let checked = 0;
      for (const entry of branch) {
        const texts = searchableTexts(entry);
        if (!texts.length || !index.ordinalById.has(entry.id)) continue;
        // The middle of the longest text: a fragment that usually spans inner lines and markup.
        const text = texts.reduce((a, b) => (b.length > a.length ? b : a));
        const start = Math.floor(text.length / 2);
        const fragment = text.slice(Math.max(0, start - 20), start + 20);
        const matches = grepUntil(index, fragment, limits, index.ordinalById.get(entry.id)!);
        expect(
          matches.map((m) => m.entryId),
          `${session.name} ${entry.id}`,
        ).toContain(entry.id);
        checked++;
      }
      expect(checked).toBeGreaterThan(500);
    }
  });
});
