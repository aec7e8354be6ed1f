// Every tool the package registers, called by a (faux) model with hostile arguments through a real AgentSession.
// For each call: no exception escapes to Pi, the call gets exactly one result, an error result says what was wrong,
// every result stays within its size bound and holds no raw control byte, and the session file stays parseable
// with the earlier bytes as its prefix. `context_lookup` is left out here: it runs a model of its own, which the
// faux script cannot answer generically; `test/recall/lookup.test.ts` covers its bounds.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { startHarness, type Harness } from "../e2e/harness.ts";
import { DEFAULT_RECALL_LIMITS } from "../../src/recall/settings.ts";
import {
  anyJsonArb,
  assertBounded,
  forgedStructureArb,
  hasRawControl,
  hostileStringArb,
  regexArb,
} from "../arbitraries/hostile.ts";
import { runs } from "../support/fast-check.ts";

// Every run is a model turn through a real AgentSession: a tenth of the global count, at least 10.
const RUNS = runs(1 / 10, 10);

/** The most text any one tool result may hold (documented in docs/recall.md and docs/strategies/fold.md). */
const RESULT_CHAR_BOUND = 20_000;

/** Argument arbitraries per tool: plausible values mixed with hostile ones and wrong JSON types. */
const stringish = fc.oneof(hostileStringArb, forgedStructureArb, fc.string({ maxLength: 12 }));
const loose = (arb: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 4, arbitrary: arb }, { weight: 1, arbitrary: anyJsonArb });
const TOOLS: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  context_compact: fc.record(
    { target: loose(stringish), summary: loose(stringish), backupCheckpoint: loose(stringish) },
    { requiredKeys: ["target", "summary"] },
  ),
  context_checkpoint: fc.record({ name: loose(stringish) }),
  context_timeline: fc.record({ cursor: loose(stringish) }, { requiredKeys: [] }),
  context_list_entries: fc.record({ role: loose(stringish), cursor: loose(stringish) }, { requiredKeys: [] }),
  context_grep: fc.record(
    {
      pattern: loose(fc.oneof(regexArb, stringish)),
      literal: loose(fc.boolean()),
      context: loose(fc.integer({ min: -5, max: 1e9 })),
      cursor: loose(stringish),
    },
    { requiredKeys: ["pattern"] },
  ),
  context_show_entry: fc.record({ id: loose(stringish), cursor: loose(stringish) }, { requiredKeys: ["id"] }),
  context_restore: fc.record({ target: loose(fc.oneof(stringish, fc.constantFrom("last", "#1", "root"))) }),
};

interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  isError?: boolean;
  details?: { work?: number };
  content: { type: string; text?: string }[];
}

let h: Harness;
let callCount = 0;

beforeAll(async () => {
  h = await startHarness({ persist: true });
  // A little history to search, list and fold.
  h.script([
    fauxAssistantMessage([fauxToolCall("bash", { command: "echo hello-world" })], { stopReason: "toolUse" }),
    fauxAssistantMessage("done"),
  ]);
  await h.session.prompt("set up some history: ERROR E1234 in src/parser.ts");
});
afterAll(async () => h?.dispose());

/** Ask the faux model to make one call with these arguments; return the result the session recorded. */
async function call(tool: string, args: Record<string, unknown>): Promise<ToolResultMessage | undefined> {
  const id = `fuzz-${callCount++}`;
  h.script([
    fauxAssistantMessage([fauxToolCall(tool, args as Parameters<typeof fauxToolCall>[1], { id })], {
      stopReason: "toolUse",
    }),
    fauxAssistantMessage("ok"),
  ]);
  await h.session.prompt(`call ${tool}`);
  const entry = h.session.sessionManager
    .getBranch()
    .find(
      (e) =>
        e.type === "message" &&
        e.message.role === "toolResult" &&
        (e.message as unknown as ToolResultMessage).toolCallId === id,
    );
  return entry?.type === "message" ? (entry.message as unknown as ToolResultMessage) : undefined;
}

describe("tool properties (hostile arguments through a real AgentSession)", () => {
  for (const [tool, argsArb] of Object.entries(TOOLS)) {
    it(`${tool}: bounded, clean, single result; the session file stays valid and append-only`, async () => {
      await assertBounded(
        fc.asyncProperty(argsArb, async (args) => {
          const file = h.sessionFile()!;
          const before = readFileSync(file);
          const result = await call(tool, args);
          expect(result, "exactly one result for the call").toBeDefined();
          const text = result!.content.map((c) => c.text ?? "").join("\n");
          expect(text.length).toBeLessThanOrEqual(RESULT_CHAR_BOUND);
          expect(hasRawControl(text), "raw control byte in the result").toBe(false);
          if (result!.isError) expect(text.trim().length).toBeGreaterThan(0);
          // Work is counted, not timed: a grep call never spends more than its work cap.
          if (tool === "context_grep" && !result!.isError)
            expect(result!.details?.work ?? Number.NaN).toBeLessThanOrEqual(DEFAULT_RECALL_LIMITS.maxScanWork);
          const after = readFileSync(file);
          expect(after.subarray(0, before.length).equals(before), "earlier bytes are a prefix").toBe(true);
          for (const line of after.toString("utf8").split("\n").filter(Boolean)) JSON.parse(line);
        }),
        { numRuns: RUNS },
      );
    });
  }
});
