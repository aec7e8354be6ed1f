// A digest planned at a step boundary and found not worth writing (its lines as long as the tiny steps they cover)
// is not planned again at the next boundary over the same raw tail: only once that tail has grown by a share of
// itself. Planning reads the whole tail, so asking at every step made a session of many tiny tool steps quadratic,
// on the host's turn_end path and in the lab (2 MB of such steps took 31 CPU s, 1 MB 1.3 s).
import { describe, expect, it } from "vitest";
import type { SessionEntry } from "../../../src/log/entries.ts";
import { digestAt } from "../../../src/strategies/digest/lab.ts";
import { type DigestAttempt, digestDue, keptAttempt, planDigest } from "../../../src/strategies/digest/plan.ts";
import { digestPolicy } from "../../../src/strategies/digest/policy.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";

const WINDOW = 128_000;

/** `steps` tasks of one tiny tool step each: a digest line says as much as the step itself. */
function tinySteps(steps: number): { entries: SessionEntry[]; stepIds: string[] } {
  const b = new LedgerBuilder({ pad: 6 });
  const stepIds: string[] = [];
  for (let i = 0; i < steps; i++) {
    b.user(`fix it ${i}`);
    stepIds.push(b.assistant("ok", [{ id: `c${i}`, name: "bash", args: { command: `ls ${i}` } }]));
    b.toolResult(`c${i}`, "bash", `a${i}.ts b.ts`);
    b.assistant(`done ${i}`);
  }
  return { entries: b.entries, stepIds };
}

/** The host's turn_end loop over a branch: the check, the plan when due, the attempt kept when no digest came. */
function hostLoop(entries: readonly SessionEntry[], stepIds: readonly string[]) {
  const policy = digestPolicy(WINDOW);
  let lastAttempt: DigestAttempt | undefined;
  let plans = 0;
  let written = 0;
  for (const stepEntryId of stepIds) {
    const branch = entries.slice(0, entries.findIndex((e) => e.id === stepEntryId) + 1);
    const due = digestDue({ branch, stepEntryId, drafts: [], usageTokens: null, policy, lastAttempt });
    if (!due.due) continue;
    plans++;
    const outcome = planDigest({
      branch,
      limitId: due.limitId,
      contextWindow: WINDOW,
      usageTokens: null,
      policy,
      cwd: "",
    });
    if (outcome.ok) written++;
    else lastAttempt = keptAttempt(due.tail, outcome.reason, lastAttempt);
  }
  return { plans, written, lastAttempt };
}

/** Lines of code-like text, `n` of them, tagged. */
const text = (n: number, tag: string) =>
  Array.from({ length: n }, (_, k) => `line ${k} ${tag}: const v${k} = f(${k});`).join("\n");

describe("a digest not worth writing", () => {
  it("is planned again only after its raw tail grew by a quarter: a logarithmic number of plans", () => {
    const { entries, stepIds } = tinySteps(2_000);
    const { plans, written } = hostLoop(entries, stepIds);
    expect(written).toBe(0);
    // The bound first passes keepRaw + batch around step 300; growing 25% at a time to step 2,000 is about 9 plans.
    expect(plans).toBeGreaterThan(0);
    expect(plans).toBeLessThanOrEqual(12);
  });

  it("stops nothing that is worth writing: a digest due on ordinary steps comes at the same boundary", () => {
    const b = new LedgerBuilder({ pad: 6 });
    const stepIds: string[] = [];
    const body = (i: number) => Array.from({ length: 60 }, (_, k) => `line ${k} of file ${i}: const v${k} = f(${k});`);
    for (let i = 0; i < 40; i++) {
      b.user(`look at file ${i}`);
      stepIds.push(b.assistant("", [{ id: `r${i}`, name: "read", args: { path: `src/f${i}.ts` } }]));
      b.toolResult(`r${i}`, "read", body(i).join("\n"));
      b.assistant(`file ${i} is fine`);
    }
    const policy = digestPolicy(WINDOW);
    const first = stepIds.findIndex((stepEntryId) => {
      const branch = b.entries.slice(0, b.entries.findIndex((e) => e.id === stepEntryId) + 1);
      const due = digestDue({ branch, stepEntryId, drafts: [], usageTokens: null, policy });
      return (
        due.due &&
        planDigest({ branch, limitId: due.limitId, contextWindow: WINDOW, usageTokens: null, policy, cwd: "" }).ok
      );
    });
    expect(first).toBeGreaterThan(0);
    expect(
      hostLoop(b.entries.slice(0, b.entries.findIndex((e) => e.id === stepIds[first]) + 1), stepIds.slice(0, first + 1))
        .written,
    ).toBe(1);
  });

  it("a digest short of a batch comes at the next boundary that makes one, even when only reasoning grew", () => {
    // Completed answers' reasoning is not in the raw bound, but a digest covers it: the step after a decline that
    // fell short must be planned again (a review found the first gate waited for the bound, which never moved).
    const b = new LedgerBuilder({ pad: 4 });
    const stepIds: string[] = [];
    b.user("go");
    for (const [i, lines] of [300, 300, 900].entries()) {
      stepIds.push(b.assistant("", [{ id: `r${i}`, name: "read", args: { path: `f${i}.ts` } }]));
      b.toolResult(`r${i}`, "read", text(lines, `f${i}`));
    }
    stepIds.push(b.assistant("done", [], { thinking: text(500, "think") }));
    for (let q = 0; q < 4; q++) {
      b.user(`question ${q}`);
      stepIds.push(b.assistant(`answer ${q}`, [], { thinking: text(200, `t${q}`) }));
    }
    const ungated = stepIds.findIndex((stepEntryId) => {
      const branch = b.entries.slice(0, b.entries.findIndex((e) => e.id === stepEntryId) + 1);
      const policy = digestPolicy(WINDOW);
      const due = digestDue({ branch, stepEntryId, drafts: [], usageTokens: null, policy });
      return (
        due.due &&
        planDigest({ branch, limitId: due.limitId, contextWindow: WINDOW, usageTokens: null, policy, cwd: "" }).ok
      );
    });
    expect(ungated).toBeGreaterThan(0);
    expect(hostLoop(b.entries, stepIds.slice(0, ungated + 1)).written).toBe(1);
  });

  it("an attempt on another branch (after /tree) holds nothing back on this one", () => {
    const policy = digestPolicy(WINDOW);
    const { entries: tiny, stepIds: tinyIds } = tinySteps(1_500);
    // The last attempt on the tiny branch: declined, its tail starting where this branch's will (no digest yet).
    const { lastAttempt } = hostLoop(tiny, tinyIds);
    expect(lastAttempt).toBeDefined();
    // The other branch: back to the first user message, then large reads.
    const b = new LedgerBuilder({ pad: 6 });
    b.entries.push(tiny[0]);
    b.leaf = tiny[0].id;
    const stepIds: string[] = [];
    for (let i = 0; i < 12; i++) {
      stepIds.push(b.named(`read-${i}`).assistant("", [{ id: `r${i}`, name: "read", args: { path: `f${i}.ts` } }]));
      b.named(`result-${i}`).toolResult(`r${i}`, "read", text(300, `f${i}`));
    }
    const firstDigest = (attempt: DigestAttempt | undefined) =>
      stepIds.findIndex((stepEntryId) => {
        const branch = b.entries.slice(0, b.entries.findIndex((e) => e.id === stepEntryId) + 1);
        const due = digestDue({ branch, stepEntryId, drafts: [], usageTokens: null, policy, lastAttempt: attempt });
        return (
          due.due &&
          planDigest({ branch, limitId: due.limitId, contextWindow: WINDOW, usageTokens: null, policy, cwd: "" }).ok
        );
      });
    expect(firstDigest(undefined)).toBeGreaterThan(0);
    expect(firstDigest(lastAttempt)).toBe(firstDigest(undefined));
  });

  it("the lab's digest row hands the attempt on to its next boundary", () => {
    const { entries, stepIds } = tinySteps(2_000);
    const at = (step: number, carry?: unknown) => {
      const branch = entries.slice(0, entries.findIndex((e) => e.id === stepIds[step]) + 1);
      return digestAt({
        branch,
        stepEntryId: stepIds[step],
        stopReason: "toolUse",
        usageTokens: 0,
        contextWindow: WINDOW,
        cwd: "",
        carry,
      });
    };
    const tried = at(1_990);
    expect(tried.ok).toBe(false);
    const attempt = tried.carry as DigestAttempt;
    expect(attempt.retryAt).toBeGreaterThan(0);
    // The next boundary, the tail a step longer: not due, and the attempt is carried on unchanged.
    const next = at(1_991, attempt);
    expect(next).toEqual({ ok: false, settled: false, carry: attempt });
  });
});
