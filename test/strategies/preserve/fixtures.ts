// Hand-written branches for the preserve tests: two user requests with tool work, a completed answer between them,
// and a current batch whose assistant message is the newest turn.
import type { SessionEntry } from "../../../src/log/entries.ts";
import type { PreserveDraft } from "../../../src/strategies/preserve/checkpoint.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";

export interface Scenario {
  b: LedgerBuilder;
  ids: Record<string, string>;
}

/** user 1 → read + bash (tests) → answer; user 2 → edit → current batch (bash) */
export function twoRequests(): Scenario {
  const b = new LedgerBuilder();
  const ids: Record<string, string> = {};
  ids.user1 = b.user("Why do retries loop forever in src/retry.ts?");
  ids.a1 = b.assistant("Let me read the retry code.", [{ id: "c1", name: "read", args: { path: "src/retry.ts" } }]);
  ids.r1 = b.toolResult("c1", "read", "export function nextDelay(n) {\n  return n * 2;\n}");
  ids.a2 = b.assistant("", [{ id: "c2", name: "bash", args: { command: "npm test" } }]);
  ids.r2 = b.toolResult(
    "c2",
    "bash",
    "Tests: 12 passed, 1 failed\nError: expected 3 to be 4\nCommand exited with code 1",
    true,
  );
  ids.answer = b.assistant("nextDelay never caps the delay; one test fails because of it.");
  ids.user2 = b.user("Cap it at 30 seconds.");
  ids.a3 = b.assistant("Editing.", [
    { id: "c3", name: "edit", args: { path: "src/retry.ts", oldText: "n * 2", newText: "Math.min(n * 2, 30000)" } },
  ]);
  ids.r3 = b.toolResult("c3", "edit", "Edited src/retry.ts");
  ids.current = b.assistant("Running the tests again.", [{ id: "c4", name: "bash", args: { command: "npm test" } }]);
  ids.r4 = b.toolResult("c4", "bash", "Tests: 13 passed");
  return { b, ids };
}

/** A checkpoint draft as the entry Pi persists for it. */
export function draftEntry(
  draft: PreserveDraft,
  base: { id: string; parentId: string | null; timestamp: string },
): SessionEntry {
  return {
    ...base,
    type: "custom_message",
    customType: draft.customType,
    content: draft.content,
    display: draft.display,
    details: draft.details,
  } as SessionEntry;
}

/** Append a checkpoint draft as an entry, the way Pi persists a boundary draft. */
export function appendDraft(b: LedgerBuilder, draft: PreserveDraft): string {
  const n = b.entries.length + 1;
  const id = `p${String(n).padStart(3, "0")}`;
  b.entries.push(
    draftEntry(draft, { id, parentId: b.leaf, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString() }),
  );
  b.leaf = id;
  return id;
}
