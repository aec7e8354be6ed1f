// Hand-written branches for the digest tests: a task with reads, a failing and a passing test run, edits, and a current
// step, plus helpers to persist a digest draft the way Pi persists a boundary draft.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../../src/log/entries.ts";
import type { DigestDraft } from "../../../src/strategies/digest/plan.ts";
import type { DigestPolicy } from "../../../src/strategies/digest/policy.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";

/** A policy small enough for hand-written branches: keep ~1 step raw, act after a few steps. */
export const SMALL: DigestPolicy = { keepRaw: 40, batch: 120, full: 1_000_000, minFull: 100 };

export const RETRY_TS = [
  "import { clamp } from './math';",
  "",
  "export function nextDelay(n: number): number {",
  "  return n * 2;",
  "}",
  "",
  "export class RetryPolicy {",
  "  attempts = 3;",
  "}",
].join("\n");
export const FAILING_RUN = [
  "> vitest run",
  "",
  " ❯ test/retry.test.ts (12 tests | 1 failed) 31ms",
  " FAIL  test/retry.test.ts > caps the delay",
  "AssertionError: expected 3 to be 4",
  ...Array.from({ length: 24 }, (_, i) => `    at runTest (node_modules/vitest/dist/runner.js:${100 + i}:12)`),
  " Test Files  1 failed (1)",
  "      Tests  1 failed | 11 passed (12)",
  "Command exited with code 1",
].join("\n");
export const PASSING_RUN = [
  "> vitest run",
  "",
  " ✓ test/retry.test.ts (12 tests) 30ms",
  " ✓ test/math.test.ts (4 tests) 2ms",
  "",
  " Test Files  2 passed (2)",
  "      Tests  16 passed (16)",
].join("\n");

export interface Scenario {
  b: LedgerBuilder;
  ids: Record<string, string>;
}

/** user 1 → read retry.ts, failing test, edit, passing test, answer; user 2 → read retry.ts again → current step. */
export function retryTask(): Scenario {
  const b = new LedgerBuilder();
  const ids: Record<string, string> = {};
  ids.user1 = b.user("Retries loop forever. Don't change the public API of RetryPolicy.");
  ids.a1 = b.assistant(
    "Reading the retry code first.",
    [{ id: "c1", name: "read", args: { path: "/repo/src/retry.ts" } }],
    { thinking: "SECRET-THOUGHT" },
  );
  ids.r1 = b.toolResult("c1", "read", RETRY_TS);
  ids.a2 = b.assistant("", [
    { id: "c2", name: "bash", args: { command: "npx vitest run test/retry.test.ts\necho done" } },
  ]);
  ids.r2 = b.toolResult("c2", "bash", FAILING_RUN, true);
  ids.a3 = b.assistant("Capping the delay.", [
    {
      id: "c3",
      name: "edit",
      args: { path: "src/retry.ts", edits: [{ oldText: "n * 2", newText: "Math.min(n * 2, 30_000)" }] },
    },
  ]);
  ids.r3 = b.toolResult("c3", "edit", "Successfully replaced text in src/retry.ts.");
  ids.a4 = b.assistant("", [{ id: "c4", name: "bash", args: { command: "npx vitest run" } }]);
  ids.r4 = b.toolResult("c4", "bash", PASSING_RUN);
  ids.answer = b.assistant("nextDelay is capped at 30 s now; all 16 tests pass.");
  ids.user2 = b.user("Show me retry.ts once more.");
  ids.a5 = b.assistant("", [{ id: "c5", name: "read", args: { path: "src/retry.ts" } }]);
  ids.r5 = b.toolResult("c5", "read", RETRY_TS.replace("n * 2", "Math.min(n * 2, 30_000)"));
  ids.current = b.assistant("", [{ id: "c6", name: "bash", args: { command: "git diff --stat" } }]);
  ids.r6 = b.toolResult("c6", "bash", " src/retry.ts | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)");
  return { b, ids };
}

/** A digest draft as the entry Pi persists for it. */
export function draftEntry(
  draft: DigestDraft,
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

/** Append a digest draft to a builder's branch, as Pi appends a boundary draft. */
export function appendDigest(b: LedgerBuilder, draft: DigestDraft): string {
  const n = b.entries.length + 1;
  const id = `d${String(n).padStart(3, "0")}`;
  b.entries.push(
    draftEntry(draft, { id, parentId: b.leaf, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString() }),
  );
  b.leaf = id;
  return id;
}

/** Text of a projected message (string content or its text blocks). */
export function textOfMessage(message: AgentMessage): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b: { type?: string; text?: string }) => (b.type === "text" ? (b.text ?? "") : "")).join("");
}
