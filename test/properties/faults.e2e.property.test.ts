// Faults as properties, through a real AgentSession on Pi's default compaction settings: the `planned` model
// planner throws, hangs until its deadline, returns garbage, returns a megabyte, or answers well; a scheduler
// decides when the user aborts (or that they never do). Every run ends in one valid compaction (ours when the plan
// was good, Pi's native one otherwise, with a visible record) or in a visible error, never two; the session file
// keeps its earlier bytes and parses; and no tool result is left without its call.
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  fauxAssistantMessage,
  fauxToolCall,
  type AssistantMessage,
  type FauxResponseStep,
} from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { LedgerType } from "../../src/strategies/catalog.ts";
import { startHarness, type Harness } from "../e2e/harness.ts";
import { FILES, linesWith, recorded, workSession, type Call } from "../e2e/planned-fixtures.ts";
import { runs } from "../support/fast-check.ts";

// Every run starts a real AgentSession and waits out a planner that may hang until its deadline: a tenth of the
// global count, at least 8.
const RUNS = runs(1 / 10, 8);
const FAULTS = ["throws", "hangs", "garbage", "oversize", "good"] as const;
type Fault = (typeof FAULTS)[number];

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

function entriesOf(file: string): SessionEntry[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as SessionEntry)
    .filter((e) => e.type !== ("session" as string));
}

/** The planner's answer for one fault, released by the scheduler so aborts can land before or after it. */
function plannerStep(fault: Fault, s: fc.Scheduler, calls: Call[]): FauxResponseStep {
  return async (context, options): Promise<AssistantMessage> => {
    await s.schedule(Promise.resolve("planner asked"), "planner asked");
    switch (fault) {
      case "throws":
        throw new Error("provider exploded");
      case "hangs":
        // Answers only once its request is aborted, as a provider honouring the signal would.
        return new Promise((resolve) =>
          options!.signal!.addEventListener("abort", () => resolve(fauxAssistantMessage("too late")), { once: true }),
        );
      case "garbage":
        return fauxAssistantMessage("no plan here, just {[ noise ]}");
      case "oversize":
        return fauxAssistantMessage(`1-2\n${"9".repeat(1_000_000)}`);
      case "good": {
        const lines = linesWith(calls[0], "A-LINE");
        return fauxAssistantMessage(
          [fauxToolCall("submit_deletion_plan", { ranges: [{ start: Math.min(...lines), end: Math.max(...lines) }] })],
          { stopReason: "toolUse" },
        );
      }
    }
    void context;
  };
}

describe("fault properties (planned planner through a real AgentSession)", () => {
  it("every run ends in exactly one valid compaction or a visible error; append-only; no orphaned result", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FAULTS), fc.boolean(), fc.scheduler(), async (fault, userAborts, s) => {
        h = await startHarness({
          persist: true,
          ledgerSettings: { strategy: "planned", planned: { timeoutMs: 300 } },
          files: FILES,
        });
        await workSession(h);
        const file = h.sessionFile()!;
        const before = readFileSync(file);
        const calls: Call[] = [];
        const native = () => fauxAssistantMessage("NATIVE-SUMMARY of the work");
        h.faux.appendResponses([
          recorded(calls, plannerStep(fault, s, calls)),
          recorded(calls, native),
          recorded(calls, native),
        ]);

        const abort = userAborts
          ? s.schedule(Promise.resolve("abort"), "user aborts").then(() => h!.session.abortCompaction())
          : Promise.resolve();
        const compact = h.session.compact().then(
          () => "compacted" as const,
          (error: Error) => `error: ${error.message}`,
        );
        const result = await s.waitFor(compact);
        await s.waitFor(abort);
        await s.waitIdle();

        const after = readFileSync(file);
        expect(after.subarray(0, before.length).equals(before), "earlier bytes are a prefix").toBe(true);
        const beforeCount = before.toString("utf8").split("\n").filter(Boolean).length - 1; // less the header
        const added = entriesOf(file).slice(beforeCount);
        const compactions = added.filter((e) => e.type === "compaction");
        expect(compactions.length, `fault ${fault}, ${result}`).toBeLessThanOrEqual(1);
        if (result === "compacted") {
          expect(compactions).toHaveLength(1);
          const strategy = (compactions[0] as { details?: { strategy?: string } }).details?.strategy;
          if (fault === "good") expect(strategy).toBe("planned");
          else {
            // Pi's own summary replaced the plan, and the fallback left its bounded record.
            expect(strategy).not.toBe("planned");
            expect(added.some((e) => e.type === "custom" && e.customType === LedgerType.plannerFailure)).toBe(true);
          }
        } else {
          expect(compactions).toHaveLength(0);
          expect(result.length).toBeGreaterThan("error: ".length);
        }
        const callIds = new Set<string>();
        for (const entry of entriesOf(file)) {
          if (entry.type !== "message") continue;
          if (entry.message.role === "assistant")
            for (const b of entry.message.content) if (b.type === "toolCall") callIds.add(b.id);
          if (entry.message.role === "toolResult")
            expect(callIds.has(entry.message.toolCallId), "tool result after its call").toBe(true);
        }
        await h.dispose();
        h = undefined;
      }),
      { numRuns: RUNS },
    );
  });
});
