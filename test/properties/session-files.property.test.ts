// Damaged session files opened by a real Pi AgentSession with the package loaded: a truncated last line, garbage
// spliced anywhere, a duplicated id, a dangling parent, a megabyte line. Pi decides what it can read; the package
// must then rebuild its state without an exception, answer the next prompt adding no tool result without its call
// (Pi's own view may already hold one, when the damage cut a step in two), and leave the earlier bytes of the file untouched. Parent cycles are left out: Pi 1.6 itself
// fails inside `createAgentSession` (its `buildSessionPath` loops until an array overflows) before any extension
// runs, so no extension can handle them; the lab's own loader (`show`, `lab`) reports them instead.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fauxAssistantMessage, type Message } from "@earendil-works/pi-ai";
import { ledgerArb, toJsonl } from "../arbitraries/index.ts";
import { startHarness } from "../e2e/harness.ts";

const runs = Math.max(10, Math.round(Number(process.env.FC_RUNS ?? 200) / 10));

type Damage = { kind: "truncate"; at: number } | { kind: "garbage"; at: number; text: string } | { kind: "duplicate"; at: number } | { kind: "dangling"; at: number } | { kind: "huge"; at: number };

const damageArb: fc.Arbitrary<Damage> = fc.oneof(
  fc.record({ kind: fc.constant("truncate" as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant("garbage" as const), at: fc.nat(), text: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom("{ not json", "\u0000\u0000", "[]", "null", '{"type":"message"}', "\u001b[2J")) }),
  fc.record({ kind: fc.constant("duplicate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("dangling" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("huge" as const), at: fc.nat() }),
);

/** Apply one damage to the entry lines (the header, line 0, stays intact so Pi recognizes the file). */
function damage(jsonl: string, d: Damage): string {
  const lines = jsonl.split("\n").filter(Boolean);
  const body = lines.length - 1;
  if (body < 1) return jsonl;
  const i = 1 + (d.kind === "truncate" ? body - 1 : d.at % body);
  switch (d.kind) {
    case "truncate":
      lines[i] = lines[i].slice(0, Math.floor(d.at * lines[i].length));
      break;
    case "garbage":
      lines.splice(i, 0, d.text.replace(/\n/g, " "));
      break;
    case "duplicate":
      lines.splice(i + 1, 0, lines[i]);
      break;
    case "dangling": {
      const entry = JSON.parse(lines[i]) as { parentId?: string | null };
      entry.parentId = "no-such-parent";
      lines[i] = JSON.stringify(entry);
      break;
    }
    case "huge": {
      const entry = JSON.parse(lines[i]) as { type: string; message?: { role?: string; content?: unknown } };
      if (entry.type === "message" && entry.message?.role === "user") entry.message.content = "h".repeat(1_000_000);
      lines[i] = JSON.stringify(entry);
      break;
    }
  }
  return `${lines.join("\n")}\n`;
}

/** Ids of tool results in `messages` with no earlier call. */
function orphanResults(messages: readonly Message[]): Set<string> {
  const calls = new Set<string>();
  const orphans = new Set<string>();
  for (const m of messages) {
    if (m.role === "assistant") for (const b of m.content) if (b.type === "toolCall") calls.add(b.id);
    if (m.role === "toolResult" && !calls.has(m.toolCallId)) orphans.add(m.toolCallId);
  }
  return orphans;
}

describe("damaged session files in a real Pi session", () => {
  it("the package loads whatever Pi reads, answers the next prompt adding no orphaned result, and appends only", async () => {
    await fc.assert(
      fc.asyncProperty(ledgerArb({ minCommands: 2, maxCommands: 25 }), damageArb, async (ledger, d) => {
        const root = mkdtempSync(join(tmpdir(), "ctx-ledger-damaged-"));
        mkdirSync(join(root, "sessions"), { recursive: true });
        const file = join(root, "sessions", "damaged.jsonl");
        writeFileSync(file, damage(toJsonl({ ...ledger, header: { ...ledger.header, cwd: join(root, "project") } }), d));
        const before = readFileSync(file);
        const h = await startHarness({ root, sessionFile: file });
        try {
          h.script([fauxAssistantMessage("ok")]);
          await h.session.prompt("after the damage");
          // A damaged file can cut a turn in two (a dangling parent in the middle of a step), and Pi's own view then
          // starts with a result whose call is lost. The package must add no such orphan of its own.
          const piOrphans = orphanResults(h.session.sessionManager.buildSessionContext().messages as Message[]);
          for (const id of orphanResults(h.requests.at(-1)!)) expect(piOrphans.has(id), `orphaned result ${id} that Pi's own view does not have`).toBe(true);
          const after = readFileSync(file);
          expect(after.subarray(0, before.length).equals(before), "earlier bytes kept").toBe(true);
        } finally {
          await h.dispose();
          rmSync(root, { recursive: true, force: true });
        }
      }),
      { numRuns: runs },
    );
  });
});
