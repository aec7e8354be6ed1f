// Speculative planning through a real AgentSession: with `planned.speculation` on, a run that ends past the trigger
// ratio sends the planner request ahead; a compaction reuses the reply only when its own request matches exactly.
// Settings: Pi's defaults, `strategy: "planned"`, and the speculation keys the cases are about.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall, type FauxResponseStep } from "@earendil-works/pi-ai";
import type { PlannedDetails } from "../../src/strategies/planned/planner.ts";
import { startHarness, type Harness } from "./harness.ts";
import { branchOf, captureWarnings, FILES, planFiles, type Call } from "./planned-fixtures.ts";

let h: Harness | undefined;
let restoreNotify: (() => void) | undefined;
afterEach(async () => {
  restoreNotify?.();
  restoreNotify = undefined;
  await h?.dispose();
  h = undefined;
});

/** The session's ~33k tokens pass 20% of the default 128k window, far below Pi's threshold. */
const SPECULATE = { strategy: "planned", planned: { speculation: true, speculationRatio: 0.2 } };
const details = () => {
  const entry = branchOf(h!).find((e) => e.type === "compaction");
  return entry?.type === "compaction" ? (entry.details as PlannedDetails) : undefined;
};

/** Run 1: read the three files (~33k tokens, past 20% of the 128k window) and answer; `after` is queued next. */
async function firstRun(after: FauxResponseStep[] = []): Promise<void> {
  h!.script([
    fauxAssistantMessage(
      [
        fauxToolCall("read", { path: "a.txt" }),
        fauxToolCall("read", { path: "b.txt" }),
        fauxToolCall("read", { path: "c.txt" }),
      ],
      {
        stopReason: "toolUse",
      },
    ),
    fauxAssistantMessage("ROOT-CAUSE: TIMEOUT_MS is too low."),
  ]);
  h!.faux.appendResponses(after);
  await h!.session.prompt("Fix the login timeout.");
}

/** A planner step that also reports when its request arrived (speculative requests go out in the background). */
function backgroundPlan(calls: Call[]): { step: FauxResponseStep; asked: Promise<void> } {
  let arrived!: () => void;
  const asked = new Promise<void>((resolve) => (arrived = resolve));
  return { step: planFiles(calls, undefined, arrived), asked };
}

describe("planned speculative planning", () => {
  it("is off by default: no planner request before a compaction asks for one", async () => {
    h = await startHarness({ ledgerSettings: { strategy: "planned" }, files: FILES });
    const calls: Call[] = [];
    await firstRun();
    expect(calls).toHaveLength(0);
    h.faux.appendResponses([planFiles(calls)]);
    await h.session.compact();
    expect(calls).toHaveLength(1);
    expect(details()).toMatchObject({ strategy: "planned", planner: "model" });
    expect(details()?.speculative).toBeUndefined();
  });

  it("prepares the plan when a run ends past the ratio, and an unchanged /compact reuses it without another call", async () => {
    h = await startHarness({ ledgerSettings: SPECULATE, files: FILES });
    const warnings = captureWarnings(h, (restore) => (restoreNotify = restore));
    const calls: Call[] = [];
    const ahead = backgroundPlan(calls);
    await firstRun([ahead.step]);
    // The run ended past 20% of the window: the planner request went out before any compaction.
    await ahead.asked;
    expect(calls).toHaveLength(1);
    expect(calls[0].planner).toBe(true);
    expect(calls[0].options).toMatchObject({ maxTokens: 4_096 });
    expect(branchOf(h).some((e) => e.type === "compaction")).toBe(false);

    await h.session.compact();
    // No second model call: the compaction's request matched the candidate exactly.
    expect(calls).toHaveLength(1);
    expect(details()).toMatchObject({ strategy: "planned", planner: "model", speculative: true });
    expect(warnings).toEqual([]);
  });

  it("discards the candidate when the request differs (custom instructions), and plans afresh", async () => {
    h = await startHarness({ ledgerSettings: SPECULATE, files: FILES });
    const calls: Call[] = [];
    const ahead = backgroundPlan(calls);
    await firstRun([ahead.step]);
    await ahead.asked;
    h.faux.appendResponses([planFiles(calls)]);
    await h.session.compact("focus on the auth module");
    expect(calls).toHaveLength(2);
    expect(JSON.stringify(calls[1].messages)).toContain("focus on the auth module");
    expect(details()).toMatchObject({ strategy: "planned", planner: "model" });
    expect(details()?.speculative).toBeUndefined();
  });

  it("each run prepares at most one candidate, and only the newest can be reused", async () => {
    h = await startHarness({ ledgerSettings: SPECULATE, files: FILES });
    const calls: Call[] = [];
    const first = backgroundPlan(calls);
    await firstRun([first.step]);
    await first.asked;
    // The next run changes the objective, so its end prepares a new candidate; the first one is dropped.
    const second = backgroundPlan(calls);
    h.script([fauxAssistantMessage("second answer")]);
    h.faux.appendResponses([second.step]);
    await h.session.prompt("second turn");
    await second.asked;
    expect(calls).toHaveLength(2);
    expect(JSON.stringify(calls[1].messages)).toContain("second turn");
    await h.session.compact();
    expect(calls).toHaveLength(2);
    expect(details()?.speculative).toBe(true);
  });
});
