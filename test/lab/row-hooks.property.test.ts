// The lab's strategy rows decide exactly as the host's hooks do: at every generated step boundary, the row acts when
// (and only when) the strategy's own decider says so. A row with its own copy of a condition fails here.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../src/log/entries.ts";
import { LedgerType } from "../../src/strategies/catalog.ts";
import { defaultSettings, type Row, type SessionSettings } from "../../src/lab/row.ts";
import { labRow } from "../../src/lab/rows/registry.ts";
import { type DigestAttempt, digestDue, keptAttempt, planDigest } from "../../src/strategies/digest/plan.ts";
import { type DigestPolicy, digestPolicy } from "../../src/strategies/digest/policy.ts";
import { checkpointDue } from "../../src/strategies/preserve/due.ts";
import { chars, Ledger } from "./fixtures.ts";
import { runs } from "../support/fast-check.ts";

// Every run replays a generated session through a lab row and asks the decider at each of its step boundaries:
// 40 runs at the default count.
const RUNS = runs(1 / 5);

/** How a step ended: mostly completed, sometimes failed or aborted (Pi's to recover, never checkpointed). */
const stop = (done: string) => fc.constantFrom(done, done, done, "aborted", "error");

/** One task: a user message, some tool steps and a closing answer, each of which may have failed or been aborted. */
const task = fc.record({
  ask: fc.integer({ min: 10, max: 6_000 }),
  steps: fc.array(fc.record({ size: fc.integer({ min: 200, max: 9_000 }), stop: stop("toolUse") }), { maxLength: 4 }),
  close: stop("stop"),
  answer: fc.integer({ min: 10, max: 8_000 }),
});
type Task = typeof task extends fc.Arbitrary<infer T> ? T : never;

function ended(entry: SessionEntry, stopReason: string): void {
  if (entry.type === "message" && entry.message.role === "assistant") entry.message.stopReason = stopReason as "stop";
}

function sessionOf(tasks: readonly Task[]): SessionEntry[] {
  const l = new Ledger();
  tasks.forEach((t, i) => {
    l.user(`task ${i}: ${chars(t.ask, "u")}`);
    t.steps.forEach((s, j) => ended(l.call(chars(s.size, String(j)), { path: `src/f${i}-${j}.ts` }).call, s.stop));
    ended(l.say(chars(t.answer, "a")), t.close);
  });
  return l.entries;
}

/** The step that ended before a request: its assistant message. */
interface Step {
  id: string;
  stopReason: string;
}

/**
 * Replay `entries` through `row` as the lab does (act before each request, then append) and, before every request,
 * ask `expected` whether the host would write the row's fact at this boundary; compare with whether the row did.
 */
async function compare(
  row: Row,
  entries: readonly SessionEntry[],
  customType: string,
  expected: (branch: readonly SessionEntry[], step: Step, usage: number) => boolean,
) {
  const facts = () =>
    (row.ledger?.() ?? []).filter((e) => e.type === "custom_message" && e.customType === customType).length;
  let step: Step | undefined;
  let boundaries = 0;
  let acts = 0;
  for (const entry of entries) {
    if (entry.type === "message" && entry.message.role === "assistant") {
      if (step) {
        const want = expected(row.ledger?.() ?? [], step, row.view.tokens);
        const before = facts();
        await row.beforeRequest();
        const did = facts() > before;
        expect(did, `boundary after ${step.id} (${step.stopReason})`).toBe(want);
        boundaries++;
        if (did) acts++;
      } else await row.beforeRequest();
      step = { id: entry.id, stopReason: entry.message.stopReason };
    }
    row.append(entry);
  }
  return { boundaries, acts };
}

/**
 * Digest's turn_end decision as the host makes it, for one session: the check, the plan when due, and the last
 * declined attempt kept for the next check (DigestHost).
 */
function hostDigest(policy: DigestPolicy, contextWindow: number) {
  let lastAttempt: DigestAttempt | undefined;
  return (branch: readonly SessionEntry[], step: Step, usage: number): boolean => {
    const due = digestDue({
      branch,
      stepEntryId: step.id,
      drafts: [],
      usageTokens: usage,
      policy,
      cwd: "",
      lastAttempt,
    });
    if (!due.due) return false;
    const outcome = planDigest({ branch, limitId: due.limitId, contextWindow, usageTokens: usage, cwd: "", policy });
    if (!outcome.ok) lastAttempt = keptAttempt(due.tail, outcome.reason, lastAttempt);
    return outcome.ok;
  };
}

describe("lab rows decide through the strategies' own deciders", () => {
  const settings: SessionSettings = { ...defaultSettings(32_000), cwd: "" };

  it("preserve: the row checkpoints exactly where checkpointDue (the host's turn_end decision) says one is due", async () => {
    let acted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(task, { minLength: 4, maxLength: 20 }), async (tasks) => {
        const { acts } = await compare(
          labRow("preserve", settings),
          sessionOf(tasks),
          LedgerType.preserve,
          (branch, step, usage) =>
            checkpointDue({
              branch,
              stepEntryId: step.id,
              stopReason: step.stopReason,
              drafts: [],
              usageTokens: usage,
              contextWindow: settings.window,
            }).due,
        );
        acted += acts;
      }),
      { numRuns: RUNS },
    );
    // The generated sessions reach the reserve often enough for the comparison to mean something.
    expect(acted).toBeGreaterThan(RUNS / 4);
  });

  it("digest: the row digests exactly where digestDue and planDigest (the host's turn_end decision and plan) say so", async () => {
    const policy = digestPolicy(settings.window);
    let acted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(task, { minLength: 4, maxLength: 20 }), async (tasks) => {
        const { acts } = await compare(
          labRow("digest", settings),
          sessionOf(tasks),
          LedgerType.digest,
          hostDigest(policy, settings.window),
        );
        acted += acts;
      }),
      { numRuns: RUNS },
    );
    expect(acted).toBeGreaterThan(RUNS / 4);
  });

  it("digest-ws: the row digests exactly where digestDue and planDigest say so with digest.workingSet on", async () => {
    const policy = digestPolicy(settings.window, { workingSet: true });
    let acted = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(task, { minLength: 4, maxLength: 20 }), async (tasks) => {
        const { acts } = await compare(
          labRow("digest-ws", settings),
          sessionOf(tasks),
          LedgerType.digest,
          hostDigest(policy, settings.window),
        );
        acted += acts;
      }),
      { numRuns: RUNS },
    );
    expect(acted).toBeGreaterThan(RUNS / 4);
  });
});
