// Certification of `planned` through the installed package in the real `pi`: strategy `planned` with its defaults
// (the model planner on the active model), Pi's default compaction settings, a 64k window, an idle `/compact`.
// The session is one user turn reading four ~10k-token files, so Pi's cut (keepRecentTokens 20,000) falls inside
// that turn: the region is the turn's prefix, and a native fallback makes one summary call (Pi's turn-prefix
// summary; there is no earlier history to summarize).
import { afterEach, describe, expect, it } from "vitest";
import { PiCase, type CaseOptions } from "./support/pi-case.ts";
import { callLog, conversation, nativeSummaryRoute, plannerRoute, read, say, textFile } from "./support/content.ts";
import type { ScriptModel, ScriptReply } from "../e2e/fixtures/script.ts";

afterEach(() => PiCase.disposeAll());

const MODEL: ScriptModel = { id: "cert-64k", contextWindow: 64_000, maxTokens: 8_000 };
const FILES = Object.fromEntries(
  ["a", "b", "c", "d"].map((n) => [`${n}.txt`, textFile(`FILE-${n.toUpperCase()}`, 10_000)]),
);
const WORK: ScriptReply[] = [read("a.txt"), read("b.txt"), read("c.txt"), read("d.txt"), say("read all four")];
/** Three ranges inside the numbered region (a.txt's and b.txt's output, about 900 lines). */
const PLAN = say("20,200\n250,420\n480,700");
const NATIVE_SUMMARY = say("## Goal\nNATIVE-SUMMARY of the reading.");

type Entry = { type: string; details?: { strategy?: string }; summary?: string };
const compactions = (c: PiCase) => (c.entries() as Entry[]).filter((e) => e.type === "compaction");

async function session(name: string, planner: ScriptReply[], options: Partial<CaseOptions> = {}): Promise<PiCase> {
  const c = await PiCase.start(name, {
    files: FILES,
    ledger: { strategy: "planned", ...(options.ledger ?? {}) },
    ...options,
    script: {
      models: [MODEL],
      routes: [plannerRoute(planner), await nativeSummaryRoute([NATIVE_SUMMARY])],
      replies: [...WORK, say("after compact")],
    },
  });
  await c.prompt("Read a.txt to d.txt.");
  expect(c.requests(), callLog(c.requests())).toHaveLength(5);
  return c;
}

describe("certification: planned", () => {
  it("a model plan is applied: one planner call, lines deleted verbatim, no native summary", async () => {
    const c = await session("planned-model-plan", [PLAN]);
    const response = await c.compact();
    expect(response.success, response.error).toBe(true);
    const requests = c.requests();
    // The user's five turns plus the one planner call the strategy documents.
    expect(requests, callLog(requests)).toHaveLength(6);
    expect(requests[5].route).toBe("planner");
    const [entry] = compactions(c);
    expect(entry?.details?.strategy).toBe("planned");
    expect(entry.summary).toMatch(/\[compacted: \d+ lines removed\]/);
    await c.prompt("AFTER: go on");
    const after = c.requests();
    expect(after, callLog(after)).toHaveLength(7);
    expect(conversation(after[6])).toMatch(/\[compacted: \d+ lines removed\]/);
    await c.finish();
  });

  it("a garbage plan falls back to Pi's native compaction, with a warning", async () => {
    const c = await session("planned-garbage", [say("Sure! I would delete the boring parts.")]);
    const response = await c.compact();
    expect(response.success, response.error).toBe(true);
    const requests = c.requests();
    // Five user turns, the planner call, then Pi's own summary of the turn prefix.
    expect(requests, callLog(requests)).toHaveLength(7);
    expect(requests.slice(5).map((r) => r.route)).toEqual(["planner", "native-summary"]);
    const [entry] = compactions(c);
    expect(entry?.details?.strategy).not.toBe("planned");
    expect(entry.summary).toContain("NATIVE-SUMMARY");
    expect(c.notifications().some((n) => n.notifyType === "warning")).toBe(true);
    await c.finish();
  });

  it("a planner that never answers falls back to native after contextLedger.planned.timeoutMs", async () => {
    // The deadline is what this case is about, so it sets a short one instead of the 120 s default.
    const c = await session("planned-timeout", [{ hang: true }], {
      ledger: { strategy: "planned", planned: { timeoutMs: 2_000 } },
      stepTimeoutSeconds: 20,
    });
    const response = await c.compact();
    expect(response.success, response.error).toBe(true);
    const requests = c.requests();
    expect(requests, callLog(requests)).toHaveLength(7);
    expect(requests.slice(5).map((r) => r.route)).toEqual(["planner", "native-summary"]);
    expect(compactions(c)[0]?.summary).toContain("NATIVE-SUMMARY");
    expect(c.notifications().some((n) => n.notifyType === "warning")).toBe(true);
    await c.finish();
  });

  it("a plannerModel that does not resolve gives a visible warning naming the setting, then Pi's native compaction", async () => {
    const c = await session("planned-unknown-model", [PLAN], {
      ledger: { strategy: "planned", plannerModel: "scripted/no-such-model" },
    });
    const response = await c.compact();
    expect(response.success, response.error).toBe(true);
    const warnings = c.notifications().filter((n) => n.notifyType === "warning");
    expect(
      warnings.some((w) => w.message.includes("contextLedger.plannerModel")),
      JSON.stringify(warnings),
    ).toBe(true);
    // No planner call (no model the user did not configure is asked), then the documented fallback: Pi's summary.
    const requests = c.requests();
    expect(
      requests.slice(5).map((r) => r.route),
      callLog(requests),
    ).toEqual(["native-summary"]);
    expect(compactions(c)[0]?.summary).toContain("NATIVE-SUMMARY");
    await c.finish();
  });
});
