// The digest hooks' turn_end on a session of many tiny tool steps: the chart is started (and the tail planned) only a
// few times, not at every step. The kit is a minimal stand-in: its chart runs the hooks' own planner and validates
// what it returns, which is all this case is about; the real chart and Pi are driven by test/e2e/digest.e2e.test.ts.
import { describe, expect, it } from "vitest";
import type { ExtensionContext, TurnEndEvent } from "@earendil-works/pi-coding-agent";
import type { SessionEntry } from "../../../src/log/entries.ts";
import type { StrategyKit } from "../../../src/strategies/contract.ts";
import { DigestHost } from "../../../src/strategies/digest/hooks.ts";
import type { DigestOptions } from "../../../src/strategies/digest/policy.ts";
import { LedgerBuilder } from "../../support/ledger-builder.ts";

function hostOn(entries: SessionEntry[]) {
  let visible = 0;
  let runs = 0;
  const live = {
    get entries() {
      return entries.slice(0, visible);
    },
    indexOf: (id: string) => entries.slice(0, visible).findIndex((e) => e.id === id),
    get leafId() {
      return entries[visible - 1]?.id;
    },
  };
  let host: DigestHost;
  const kit = {
    session: () => ({ live, sync: () => {} }),
    options: () => ({ workingSet: false }),
    contextFiles: () => [],
    manualCompactSwitch: () => ({ install: () => true, uninstall() {}, beforeAgentStart() {}, agentSettled() {} }),
    chart: {
      run: (_trigger: string, request: Parameters<DigestHost["effects"]["plan"]>[0]) => {
        runs++;
        return {
          decision: Promise.resolve(host.effects.plan(request, new AbortController().signal)).then((plan) =>
            plan.ok ? { state: "validated", facts: plan.plan } : { state: "cancelled", reason: plan.reason },
          ),
        };
      },
    },
  } as unknown as StrategyKit<DigestOptions>;
  host = new DigestHost(kit);
  const ctx = {
    cwd: "",
    sessionManager: {},
    getContextUsage: () => ({ tokens: 20_000, contextWindow: 128_000 }),
    getSystemPrompt: () => "",
    model: { contextWindow: 128_000 },
    ui: { notify() {} },
  } as unknown as ExtensionContext;
  return {
    /** Pi's turn_end after the step ending at entry `index`. */
    async turnEnd(index: number) {
      visible = index + 1;
      const event = { messageEntryId: entries[index].id, entries: [] } as unknown as TurnEndEvent;
      return host.onTurnEnd(event, ctx, []);
    },
    runs: () => runs,
  };
}

describe("digest turn_end on a tail that does not digest well", () => {
  it("plans it a few times over 1,500 tiny steps, not at every step", async () => {
    const b = new LedgerBuilder({ pad: 6 });
    const steps: number[] = [];
    for (let i = 0; i < 1_500; i++) {
      b.user(`fix it ${i}`);
      b.assistant("ok", [{ id: `c${i}`, name: "bash", args: { command: `ls ${i}` } }]);
      b.toolResult(`c${i}`, "bash", `a${i}.ts b.ts`);
      b.assistant(`done ${i}`);
      steps.push(b.entries.length - 1);
    }
    const host = hostOn(b.entries);
    for (const index of steps) expect(await host.turnEnd(index)).toBeUndefined();
    expect(host.runs()).toBeGreaterThan(0);
    expect(host.runs()).toBeLessThanOrEqual(10);
  });
});
