// The checkpoint size cap as a user sets it: on by default (25% of the window), off with `capPercent: 0` or
// "off" in the global settings or the environment. Pi's default window, boundary and reserve throughout.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, type Message } from "@earendil-works/pi-ai";
import { resolveSettings } from "../../src/host/settings.ts";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

const textOf = (m: Message): string =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("");

const TRIMMED_SPAN = /^<span [^>]*trimmed="true">$/m;

/** Ten turns of about 8k tokens of assistant prose each: the compacted part is well over a quarter of 128k. */
async function longSession(): Promise<void> {
  const turns = 10;
  h!.script(
    Array.from({ length: turns }, (_, i) =>
      fauxAssistantMessage(`ANSWER-${i}\n${`line of answer ${i} `.repeat(2_000)}`),
    ),
  );
  for (let i = 0; i < turns; i++) await h!.session.prompt(`question ${i}`);
}

async function summaryAfterCompact(): Promise<string> {
  const calls = h!.faux.state.callCount;
  await h!.session.compact();
  expect(h!.faux.state.callCount).toBe(calls);
  h!.script([fauxAssistantMessage("ok")]);
  await h!.session.prompt("next");
  const request = h!.requests[h!.requests.length - 1];
  return request.map(textOf).find((t) => t.includes("[context-ledger checkpoint]"))!;
}

describe("checkpoint cap settings", () => {
  it("trims by default", async () => {
    h = await startHarness();
    await longSession();
    const summary = await summaryAfterCompact();
    expect(summary).toMatch(TRIMMED_SPAN);
  });

  it.each([0, "off"])("is off with capPercent %j", async (capPercent) => {
    h = await startHarness({ ledgerSettings: { checkpoint: { capPercent } } });
    await longSession();
    const summary = await summaryAfterCompact();
    expect(summary).not.toMatch(TRIMMED_SPAN);
    // Every compacted answer is there in full.
    const compacted = summary.split("\n").filter((l) => /^ANSWER-\d$/.test(l));
    expect(compacted.length).toBeGreaterThanOrEqual(3);
    for (const line of compacted) {
      const i = line.slice("ANSWER-".length);
      expect(summary).toContain(`line of answer ${i} `.repeat(2_000));
    }
  });

  it("accepts 0 and off from the environment, and still refuses values outside 0-100", () => {
    expect(resolveSettings({}, { PI_CONTEXT_LEDGER_CAP_PERCENT: "0" }).settings.checkpoint.capPercent).toBe(0);
    expect(resolveSettings({}, { PI_CONTEXT_LEDGER_CAP_PERCENT: "off" }).settings.checkpoint.capPercent).toBe(0);
    const bad = resolveSettings({ checkpoint: { capPercent: -5 } }, { PI_CONTEXT_LEDGER_CAP_PERCENT: "" });
    expect(bad.settings.checkpoint.capPercent).toBe(25);
    expect(bad.warnings).toHaveLength(2);
  });
});
