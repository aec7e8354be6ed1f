// Invariant 2: a session file only ever grows. Real file-backed SessionManager sessions are driven through
// every operation a generated ledger contains (appends, native compactions, our folds, /tree moves with
// branch summaries, labels, context edits), and the bytes before each operation must prefix the bytes after.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { LedgerType } from "../../src/strategies/catalog.ts";
import { ledgerArb, toJsonl } from "../arbitraries/index.ts";
import { replayLedger } from "../arbitraries/session-replay.ts";
import { propertyTimeout } from "../support/fast-check.ts";

const root = mkdtempSync(join(tmpdir(), "ctx-ledger-append-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
const read = (file: string | undefined) => (file && existsSync(file) ? readFileSync(file) : Buffer.alloc(0));

describe("append-only (invariant 2)", () => {
  it(
    "every operation on a file-backed session leaves the previous bytes as a prefix",
    () => {
      fc.assert(
        fc.property(ledgerArb(), (ledger) => {
          const dir = join(root, `s${n++}`);
          const sm = SessionManager.create("/work/project", dir);
          let before = read(sm.getSessionFile());
          replayLedger(sm, ledger, (step, i) => {
            const after = read(sm.getSessionFile());
            expect(after.length, `step ${i} (${step.kind}) shrank the file`).toBeGreaterThanOrEqual(before.length);
            expect(
              after.subarray(0, before.length).equals(before),
              `step ${i} (${step.kind}) rewrote earlier bytes`,
            ).toBe(true);
            before = after;
          });
          // Everything the ledger holds reached the file (once the session has a conversation, Pi writes it).
          if (sm.getSessionFile() && existsSync(sm.getSessionFile()!)) {
            const lines = readFileSync(sm.getSessionFile()!, "utf8").trimEnd().split("\n");
            expect(lines).toHaveLength(ledger.entries.length + 1);
            const folds = ledger.entries.filter(
              (e) => e.type === "custom_message" && e.customType === LedgerType.fold,
            ).length;
            expect(lines.filter((l) => l.includes(`"customType":"${LedgerType.fold}"`))).toHaveLength(folds);
          }
        }),
      );
    },
    propertyTimeout(),
  );

  it(
    "reopening a generated session file and appending keeps the original bytes as a prefix",
    () => {
      fc.assert(
        fc.property(ledgerArb({ minCommands: 1 }), fc.boolean(), (ledger, withFold) => {
          const dir = join(root, `r${n++}`);
          mkdirSync(dir, { recursive: true });
          const file = join(dir, "generated.jsonl");
          const text = toJsonl(ledger);
          writeFileSync(file, text);
          const sm = SessionManager.open(file, dir);
          if (ledger.leafId === null) sm.resetLeaf();
          else sm.branch(ledger.leafId);
          sm.appendMessage({ role: "user", content: "one more", timestamp: ledger.header.timestamp.length });
          if (withFold) {
            const leaf = sm.getLeafId()!;
            sm.appendCustomMessageEntry(LedgerType.fold, "folded", true, {
              v: 1,
              range: { afterId: null, throughId: leaf },
              requestEntryId: leaf,
              target: "root",
            });
          }
          const after = readFileSync(file, "utf8");
          expect(after.startsWith(text)).toBe(true);
          expect(after.length).toBeGreaterThan(text.length);
        }),
      );
    },
    propertyTimeout(),
  );
});
