// Damaged session files opened by a real Pi AgentSession with the package loaded: a truncated last line, garbage
// spliced anywhere, a duplicated id, a dangling parent, a megabyte line, a last line that is JSON but no entry, an id
// named like a prototype member. Pi decides what it can read; the package
// must then rebuild its state (where Pi itself cannot open the file, Pi alone must fail the same way) without an exception, answer the next prompt adding no tool result without its call
// (Pi's own view may already hold one, when the damage cut a step in two), and leave the earlier bytes of the file untouched. Parent cycles are left out: Pi 1.6 itself
// fails inside `createAgentSession` (its `buildSessionPath` loops until an array overflows) before any extension
// runs, so no extension can handle them; the lab's own loader (`show`, `lab`) reports them instead.
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import { damageSessionFile, fileDamageArb } from "../arbitraries/hostile.ts";
import { ledgerArb, toJsonl } from "../arbitraries/index.ts";
import { startHarness } from "../e2e/harness.ts";
import { orphanResults } from "../support/generated-paths.ts";
import { runs } from "../support/fast-check.ts";

// Every run writes a damaged file and opens it in a real AgentSession: a tenth of the global count, at least 10.
const RUNS = runs(1 / 10, 10);

describe("damaged session files in a real Pi session", () => {
  it("the package loads whatever Pi reads, answers the next prompt adding no orphaned result, and appends only", async () => {
    await fc.assert(
      fc.asyncProperty(
        ledgerArb({ minCommands: 2, maxCommands: 25 }),
        fileDamageArb(["truncate", "garbage", "duplicate", "dangling", "huge", "oddLast", "prototypeIds"]),
        async (ledger, d) => {
          const root = mkdtempSync(join(tmpdir(), "ctx-ledger-damaged-"));
          mkdirSync(join(root, "sessions"), { recursive: true });
          const file = join(root, "sessions", "damaged.jsonl");
          writeFileSync(
            file,
            damageSessionFile(toJsonl({ ...ledger, header: { ...ledger.header, cwd: join(root, "project") } }), d),
          );
          const before = readFileSync(file);
          let h: Awaited<ReturnType<typeof startHarness>>;
          try {
            h = await startHarness({ root, sessionFile: file });
          } catch (error) {
            // Some damage stops Pi itself before any extension runs (a last line `{"type":"message"}` without a
            // message becomes Pi 1.6's leaf, and its own session context reads `message.role`). Then Pi without the
            // package must fail the same way: the package adds no failure of its own, and the file stays as it was.
            const alone = await startHarness({ root, sessionFile: file, withLedger: false }).then(
              async (p) => (await p.dispose(), undefined),
              (e: unknown) => e,
            );
            expect(String(alone), "Pi alone fails the same way").toBe(String(error));
            expect(readFileSync(file).equals(before), "file untouched").toBe(true);
            rmSync(root, { recursive: true, force: true });
            return;
          }
          try {
            // The recall tools walk the branch from the leaf: whatever the damage, they answer (an odd last line once made
            // that walk run until memory ran out).
            h.script([
              fauxAssistantMessage(
                [
                  fauxToolCall("context_list_entries", {}),
                  fauxToolCall("context_grep", { pattern: "after the damage" }),
                ],
                { stopReason: "toolUse" },
              ),
              fauxAssistantMessage("ok"),
            ]);
            await h.session.prompt("after the damage");
            const results = h.session.sessionManager
              .getBranch()
              .flatMap((e) =>
                e.type === "message" && e.message.role === "toolResult" && e.message.toolName.startsWith("context_")
                  ? [e.message]
                  : [],
              );
            expect(results.slice(-2).map((r) => [r.toolName, r.isError])).toEqual([
              ["context_list_entries", false],
              ["context_grep", false],
            ]);
            // A damaged file can cut a turn in two (a dangling parent in the middle of a step), and Pi's own view then
            // starts with a result whose call is lost. The package must add no such orphan of its own.
            const piOrphans = orphanResults(h.session.sessionManager.buildSessionContext().messages as Message[]);
            for (const id of orphanResults(h.requests.at(-1)!))
              expect(piOrphans.has(id), `orphaned result ${id} that Pi's own view does not have`).toBe(true);
            const after = readFileSync(file);
            expect(after.subarray(0, before.length).equals(before), "earlier bytes kept").toBe(true);
          } finally {
            await h.dispose();
            rmSync(root, { recursive: true, force: true });
          }
        },
      ),
      { numRuns: RUNS },
    );
  });
});
