// Certification of `native` through the installed package in the real `pi`: with `strategy: "native"` the package
// must be invisible to the provider apart from its own tools. The same scripted session runs twice in the same
// project, once with the package and once with Pi alone, through a threshold compaction (Pi's default settings,
// 64k window), and the two request sequences are compared.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { PiCase } from "./support/pi-case.ts";
import { callLog, nativeSummaryRoute, read, say, textFile } from "./support/content.ts";
import type { Message } from "@earendil-works/pi-ai";
import { messageText, type RecordedRequest, type Script } from "../e2e/fixtures/script.ts";

afterEach(() => PiCase.disposeAll());

/** How the package's budget notice starts (src/projection/budget.ts). */
const BUDGET_NOTICE = "[context budget] ";
const FILES = Object.fromEntries(
  ["a", "b", "c", "d", "e"].map((n) => [`${n}.txt`, textFile(`FILE-${n.toUpperCase()}`, 10_000)]),
);

async function script(): Promise<Script> {
  return {
    models: [{ id: "cert-64k", contextWindow: 64_000, maxTokens: 8_000 }],
    routes: [await nativeSummaryRoute([say("## Goal\nNATIVE-SUMMARY")])],
    // Fixed tool-call ids: both runs must be able to send identical requests.
    replies: ["a", "b", "c", "d", "e"]
      .map((n) => read(`${n}.txt`, `call-${n}`))
      .concat([say("all read"), say("second answer")]),
  };
}

/**
 * A request as data that two runs can share: clocks and per-process ids replaced (and `usage`, on request). Pi gives
 * each compaction's summary request a fresh session id of its own, so that one varies too.
 */
function normalized(request: RecordedRequest, varying: readonly string[] = []): unknown {
  const vary = new Set([
    "timestamp",
    "durationMs",
    "api",
    ...varying,
    ...(request.route === "main" ? [] : ["sessionId"]),
  ]);
  return JSON.parse(JSON.stringify(request), (key, value: unknown) => (vary.has(key) ? "<varies>" : value));
}

async function run(
  name: string,
  project: string,
  withPackage: boolean,
  ledger?: Record<string, unknown>,
): Promise<RecordedRequest[]> {
  const c = await PiCase.start(name, {
    cwd: project,
    sessionId: "cert-native",
    withPackage,
    ...(ledger ? { ledger } : {}),
    script: await script(),
  });
  await c.prompt("Read a.txt to e.txt one by one.");
  await c.prompt("SECOND: anything else?");
  await c.finish();
  return c.requests();
}

function project(name: string): string {
  const dir = mkdtempSync(join(inject("cert").root, `${name}-`));
  mkdirSync(dir, { recursive: true });
  for (const [path, body] of Object.entries(FILES)) writeFileSync(join(dir, path), body);
  return dir;
}

describe("certification: native", () => {
  it("strategy native with the package's tools switched off: every provider request equals Pi's without the package", async () => {
    const dir = project("native-bare");
    const pi = await run("native-bare-pi", dir, false);
    // The tools and the budget notices are switched off because the package adds them under every strategy; with
    // them off, nothing of the package may reach the provider (its recall skill included).
    const ours = await run("native-bare-ours", dir, true, {
      strategy: "native",
      foldTools: false,
      recallTools: false,
      budgetNotice: { enabled: false },
    });
    // Six agent turns for the first prompt, Pi's one turn-prefix summary when the threshold passes mid-run, one turn
    // for the second prompt.
    expect(
      pi.map((r) => r.route),
      callLog(pi),
    ).toEqual(["main", "main", "main", "main", "main", "native-summary", "main", "main"]);
    expect(ours.length, callLog(ours)).toBe(pi.length);
    for (let i = 0; i < pi.length; i++) expect(normalized(ours[i]), `request ${i + 1}`).toEqual(normalized(pi[i]));
  });

  it("strategy native with the package's defaults: the same conversation and options, plus the package's tools", async () => {
    const dir = project("native-defaults");
    const pi = await run("native-defaults-pi", dir, false);
    const ours = await run("native-defaults-ours", dir, true, { strategy: "native" });
    expect(
      ours.map((r) => r.route),
      callLog(ours),
    ).toEqual(pi.map((r) => r.route));
    // Budget notices are the package's own messages; under `native` they stay off unless switched on by name.
    const notice = (m: Message) => m.role === "user" && messageText(m).startsWith(BUDGET_NOTICE);
    expect(
      ours.some((r) => r.messages.some(notice)),
      "no budget notice under native",
    ).toBe(false);
    // The conversation and options are Pi's. The provider reported usage for prompts that differ by the tool
    // declarations, and earlier assistant messages carry that usage; it is bookkeeping, not part of what a provider
    // serializes.
    const conversationOf = (r: RecordedRequest) =>
      normalized({ ...r, messages: r.messages.filter((m) => m.role !== "system"), systemPrompt: "", tools: [] }, [
        "usage",
      ]);
    for (let i = 0; i < pi.length; i++) {
      expect(conversationOf(ours[i]), `request ${i + 1}`).toEqual(conversationOf(pi[i]));
      if (pi[i].route !== "main") continue;
      expect(ours[i].tools.slice(0, pi[i].tools.length)).toEqual(pi[i].tools);
      expect(ours[i].tools.slice(pi[i].tools.length).sort()).toEqual(
        [
          "context_checkpoint",
          "context_compact",
          "context_grep",
          "context_list_entries",
          "context_lookup",
          "context_pin",
          "context_restore",
          "context_show_entry",
          "context_timeline",
          "context_unpin",
        ].sort(),
      );
    }
  });
});
