// Certification of `preserve` through the installed package in the real `pi`: strategy `preserve`, Pi's default
// settings. Its trigger is its own reserve curve (64k window: checkpoint from 53,836 tokens; 50k: 41,114; 32k:
// 24,999); Pi's lower threshold (window − 16,384) would fire earlier, so Pi's automatic compaction is kept off (in
// memory) while preserve is active. Each checkpoint costs one
// model request: the cache-friendly continuation of the live request, or the delta-only request when that cannot fit.
import { afterEach, describe, expect, it } from "vitest";
import { PiCase } from "./support/pi-case.ts";
import {
  callLog,
  conversation,
  nativeSummaryRoute,
  preserveContinuationRoute,
  preserveDeltaRoute,
  read,
  say,
  textFile,
  texts,
  toolContext,
} from "./support/content.ts";
import type { ScriptModel } from "../e2e/fixtures/script.ts";

afterEach(() => PiCase.disposeAll());

type Entry = {
  type: string;
  id?: string;
  customType?: string;
  details?: { checkpoint?: number; writer?: string; userOrdinals?: number[] };
};
const checkpoints = (c: PiCase) =>
  (c.entries() as Entry[]).filter((e) => e.type === "custom_message" && e.customType === "context-ledger/preserve");
const SUMMARY_PREFIX = "[Tool summary #";
/** Options a provider uses to find and reuse its prompt cache, and how the request reaches it. */
const CACHE_OPTIONS = ["sessionId", "reasoning", "cacheRetention", "transport", "timeoutMs", "headers"] as const;
/** The cache-relevant options of a request; no headers and empty headers are the same request. */
const pick = (options: Record<string, unknown>) =>
  Object.fromEntries(
    CACHE_OPTIONS.map((k) => [
      k,
      k === "headers" && JSON.stringify(options[k] ?? {}) === "{}" ? undefined : options[k],
    ]),
  );

describe("certification: preserve", () => {
  it("a threshold tool summary continues the live request byte for byte with the same cache-relevant options", async () => {
    const model: ScriptModel = { id: "cert-64k", contextWindow: 64_000, maxTokens: 8_000, reasoning: true };
    const files = Object.fromEntries(
      ["a", "b", "c", "d", "e", "f"].map((n) => [`${n}.txt`, textFile(`FILE-${n.toUpperCase()}`, 10_000)]),
    );
    const c = await PiCase.start("preserve-threshold", {
      files,
      ledger: { strategy: "preserve" },
      script: {
        models: [model],
        routes: [preserveContinuationRoute([toolContext(1, "CHECKPOINT-ONE: six files of numbered lines")])],
        replies: [
          read("a.txt"),
          read("b.txt"),
          read("c.txt"),
          read("d.txt"),
          read("e.txt"),
          read("f.txt"),
          say("six read"),
        ],
      },
    });
    await c.prompt("Read a.txt to f.txt.");
    const requests = c.requests();
    // Seven agent turns (six reads, one answer) and the one checkpoint request the strategy documents. Every request
    // also carries the package's fourteen tool definitions (pins' context_pin and context_unpin add ~1,250 characters,
    // ~310 tokens) and, from 80% of the threshold, the budget notice: the fourth answer reports ~44.5k tokens, so the
    // fifth read (~10k) passes 53,836 and the checkpoint follows the fifth read; the sixth read comes after it, raw.
    expect(requests, callLog(requests)).toHaveLength(8);
    const at = requests.findIndex((r) => r.route === "preserve-continuation");
    expect(at, callLog(requests)).toBe(5);
    const live = requests[at - 1];
    const summary = requests[at];
    expect(JSON.stringify(summary.messages.slice(0, -1))).toBe(JSON.stringify(live.messages));
    expect(summary.options.sessionId).toBeDefined();
    expect(summary.options.reasoning).toBeDefined();
    expect(pick(summary.options)).toEqual(pick(live.options));

    const [cp] = checkpoints(c);
    expect(cp?.details).toMatchObject({ checkpoint: 1, writer: "model", userOrdinals: [1] });
    const after = requests[7];
    expect(texts(after).some((t) => t.startsWith(`${SUMMARY_PREFIX}1`))).toBe(true);
    expect(conversation(after)).not.toContain("FILE-A line 0001");
    expect(conversation(after)).toContain("FILE-F line 0001");
    expect(texts(after)).toContain("Read a.txt to f.txt.");
    await c.finish();
  });

  it("manual /compact on a short session writes a tool summary and does not report it as cancelled", async () => {
    const model: ScriptModel = { id: "cert-128k", contextWindow: 128_000, maxTokens: 8_000 };
    const c = await PiCase.start("preserve-manual-short", {
      files: { "a.txt": textFile("FILE-A", 500), "b.txt": textFile("FILE-B", 500) },
      ledger: { strategy: "preserve" },
      script: {
        models: [model],
        routes: [preserveContinuationRoute([toolContext(1, "MANUAL-CHECKPOINT")])],
        replies: [read("a.txt"), say("a read"), read("b.txt"), say("b read"), say("after compact")],
      },
    });
    await c.prompt("Read a.txt.");
    await c.prompt("Now read b.txt.");
    const response = await c.compact();
    expect(response.success, response.error).toBe(true);
    expect(`${response.error ?? ""} ${JSON.stringify(c.notifications())}`).not.toMatch(/cancel/i);
    expect(checkpoints(c)).toHaveLength(1);
    const requests = c.requests();
    // Four agent turns and the checkpoint request.
    expect(requests, callLog(requests)).toHaveLength(5);
    expect(requests[4].route).toBe("preserve-continuation");
    await c.prompt("AFTER: go on");
    const after = c.requests().at(-1)!;
    expect(conversation(after)).toContain("MANUAL-CHECKPOINT");
    expect(conversation(after)).not.toContain("FILE-A line 0001");
    expect(texts(after)).toContain("Read a.txt.");
    await c.finish();
  });

  it("overflow: a 56,172-token prompt against a 50,000-token window stopped at length is summarized through the delta-only request", async () => {
    const model: ScriptModel = { id: "cert-50k", contextWindow: 50_000, maxTokens: 8_000 };
    const big = `${"B".repeat(99)}\n`.repeat(400); // exactly 40,000 characters
    const c = await PiCase.start("preserve-overflow", {
      files: {
        ...Object.fromEntries(["a", "b", "c"].map((n) => [`${n}.txt`, textFile(`FILE-${n.toUpperCase()}`, 12_000)])),
        "big.txt": big,
      },
      ledger: { strategy: "preserve" },
      script: {
        models: [model],
        routes: [
          preserveContinuationRoute([toolContext(1, "CHECKPOINT-ONE")]),
          preserveDeltaRoute([toolContext(2, "CHECKPOINT-TWO: big.txt is 400 lines of B")]),
          // Never asked: a length stop is not Pi's to compact while preserve is active.
          await nativeSummaryRoute([say("## Goal\nNATIVE-OVERFLOW-SUMMARY")]),
        ],
        replies: [
          read("a.txt"),
          read("b.txt"),
          read("c.txt"),
          say(`ANSWER-ONE ${"details ".repeat(1_200)}`),
          read("big.txt", "call-big-1"),
          { text: "TRUNCATED-TAIL: big.txt holds", stopReason: "length", usage: { input: 56_172, output: 8 } },
          say("RECOVERED: big.txt is 400 lines of B."),
        ],
      },
    });
    await c.prompt("USER-ONE: read a.txt, b.txt and c.txt and explain them at length.");
    expect(checkpoints(c)).toHaveLength(1);
    await c.prompt("USER-TWO: read big.txt and explain it.");
    await c.prompt("USER-THREE: go on.");
    const requests = c.requests();
    // USER-ONE: four agent turns and checkpoint #1 (continuation). USER-TWO: the read and the truncated answer;
    // checkpoint #2 cannot continue a prompt larger than the window, so it is one delta-only request, and Pi's own
    // compaction stays off: no summary of the dialogue. USER-THREE: one normal answer.
    expect(
      requests.map((r) => r.route),
      callLog(requests),
    ).toEqual(["main", "main", "main", "main", "preserve-continuation", "main", "main", "preserve-delta", "main"]);
    const delta = requests.find((r) => r.route === "preserve-delta");
    const prompt = JSON.stringify(delta!.messages);
    expect(prompt).toContain("call-big-1");
    expect(prompt).toContain(JSON.stringify(`read {"path":"big.txt"}`).slice(1, -1));
    expect(JSON.stringify(delta!.messages.at(-1))).toContain(JSON.stringify(big).slice(1, -1));
    expect(prompt).toContain("user message(s) 2");
    for (const absent of ["USER-ONE", "USER-TWO", "ANSWER-ONE", "CHECKPOINT-ONE", "FILE-A", "TRUNCATED-TAIL"])
      expect(prompt).not.toContain(absent);
    const cps = checkpoints(c);
    expect(cps.map((e) => e.details?.writer)).toEqual(["model", "delta-only"]);
    // The next request keeps the dialogue, both tool summaries and the truncated tail raw; the big raw result is out
    // of the model's view, and the answer is a normal one.
    const next = requests.at(-1)!;
    expect(conversation(next)).not.toContain("B".repeat(99));
    for (const kept of [
      "USER-ONE",
      "USER-TWO",
      "USER-THREE",
      "ANSWER-ONE",
      "CHECKPOINT-ONE",
      "CHECKPOINT-TWO",
      "TRUNCATED-TAIL",
    ])
      expect(conversation(next)).toContain(kept);
    expect(c.entries().some((e) => (e as Entry).type === "compaction")).toBe(false);
    expect(c.rpc.records.some((r) => r.type === "message_end" && JSON.stringify(r).includes("RECOVERED"))).toBe(true);
    await c.finish();
  });

  it("three tool summaries across restarts: append-only, each earlier one byte-stable in every later request", async () => {
    const model: ScriptModel = { id: "cert-32k", contextWindow: 32_000, maxTokens: 4_000 };
    const names = ["a", "b", "c", "d", "e", "f", "g"];
    const files = Object.fromEntries(names.map((n) => [`${n}.txt`, textFile(`FILE-${n.toUpperCase()}`, 8_000)]));
    const run = (k: number, reads: string[]) => ({
      models: [model] as [ScriptModel],
      // A delta-only request would be a surprise here: its route has no reply, so it shows up as a failure.
      routes: [preserveContinuationRoute([toolContext(k, `CHECKPOINT-${k}`)]), preserveDeltaRoute([])],
      replies: [...reads.map((n) => read(`${n}.txt`)), say(`ANSWER-${k}`)],
    });
    const c = await PiCase.start("preserve-restarts", {
      files,
      ledger: { strategy: "preserve" },
      script: run(1, ["a", "b", "c"]),
    });
    await c.prompt("USER-1: read a.txt, b.txt and c.txt.");
    expect(checkpoints(c).map((e) => e.details?.checkpoint)).toEqual([1]);
    // Each run crosses 24,999 once: a checkpoint leaves the current read raw, so the first run needs three reads to
    // get there and the later ones two.
    for (const [k, reads] of [
      [2, ["d", "e"]],
      [3, ["f", "g"]],
    ] as const) {
      await c.restart();
      c.script(run(k, [...reads]));
      const before = c.requests().length;
      await c.prompt(`USER-${k}: read ${reads.join(", ")}.`);
      expect(
        checkpoints(c).map((e) => e.details?.checkpoint),
        callLog(c.requests()),
      ).toEqual(Array.from({ length: k }, (_, i) => i + 1));
      const first = c.requests()[before];
      // The first request after the restart already carries every earlier checkpoint, in order, and the dialogue.
      const shown = texts(first)
        .filter((t) => t.startsWith(SUMMARY_PREFIX))
        .map((t) => t.slice(0, SUMMARY_PREFIX.length + 1));
      expect(shown).toEqual(Array.from({ length: k - 1 }, (_, i) => `${SUMMARY_PREFIX}${i + 1}`));
      for (let u = 1; u <= k; u++) expect(conversation(first)).toContain(`USER-${u}:`);
    }
    const requests = c.requests();
    // Agent turns: four, three and three (the reads and an answer per run); one checkpoint request per checkpoint.
    expect(
      requests.filter((r) => r.route === "main"),
      callLog(requests),
    ).toHaveLength(10);
    expect(
      requests.filter((r) => r.route === "preserve-continuation"),
      callLog(requests),
    ).toHaveLength(3);
    // Invariant 5 on the real payloads: the conversation up to checkpoint k is identical in every later request.
    for (let k = 1; k <= 3; k++) {
      const tag = `${SUMMARY_PREFIX}${k}`;
      const withIt = requests.filter((r) => r.route === "main" && texts(r).some((t) => t.startsWith(tag)));
      expect(withIt.length, `requests showing tool summary #${k}`).toBeGreaterThan(0);
      const prefix = (r: (typeof requests)[number]) =>
        JSON.stringify(r.messages.slice(1, texts(r).findIndex((t) => t.startsWith(tag)) + 1));
      for (const later of withIt) expect(prefix(later)).toBe(prefix(withIt[0]));
    }
    const last = requests.at(-1)!;
    for (const gone of ["FILE-A line 0001", "FILE-C line 0001", "FILE-E line 0001"])
      expect(conversation(last)).not.toContain(gone);
    expect(conversation(last)).toContain("FILE-G line 0001");
    await c.finish();
  });
});
