// Certification of the default strategy, `checkpoint`, through the installed package in the real `pi`: Pi's default
// compaction settings (reserveTokens 16,384, keepRecentTokens 20,000) on a model with a 64k window, so the
// threshold sits at 47,616 tokens. A checkpoint calls no model, so every request is one the agent's run caused.
import { afterEach, describe, expect, it } from "vitest";
import { PiCase } from "./support/pi-case.ts";
import { callLog, read, say, texts, textFile } from "./support/content.ts";
import type { ScriptModel } from "../e2e/fixtures/script.ts";

afterEach(() => PiCase.disposeAll());

const MODEL: ScriptModel = { id: "cert-64k", contextWindow: 64_000, maxTokens: 8_000 };
/** Five files of ~10k tokens: after four reads the context is ~44k, after the fifth ~54k. */
const FILES = Object.fromEntries(
  ["a", "b", "c", "d", "e"].map((n) => [`${n}.txt`, textFile(`FILE-${n.toUpperCase()}`, 10_000)]),
);
const SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:";
const RECAP_PREFIX = "[context-ledger recap after checkpoint ";

type Entry = { type: string; id?: string; details?: { strategy?: string }; customType?: string };
const compactions = (c: PiCase) => (c.entries() as Entry[]).filter((e) => e.type === "compaction");

describe("certification: checkpoint (default strategy)", () => {
  it("threshold compaction in the middle of a run: no model call, the run continues on the checkpoint with the recap last", async () => {
    const c = await PiCase.start("checkpoint-midrun", {
      files: FILES,
      script: {
        models: [MODEL],
        replies: [read("a.txt"), read("b.txt"), read("c.txt"), read("d.txt"), read("e.txt"), say("all five read")],
      },
    });
    await c.prompt("Read a.txt to e.txt one by one, then tell me you are done.");
    const requests = c.requests();
    // The user caused six agent turns (five reads, one answer); the checkpoint adds none.
    expect(requests, callLog(requests)).toHaveLength(6);
    const [entry] = compactions(c);
    expect(entry?.details?.strategy).toBe("checkpoint");
    const last = texts(requests[5]);
    expect(last.some((t) => t.startsWith(SUMMARY_PREFIX))).toBe(true);
    expect(last.at(-1)!.startsWith(`${RECAP_PREFIX}${entry.id}]`)).toBe(true);
    await c.finish();
  });

  it("threshold compaction after the final answer starts no model turn; the recap reaches the model with the next prompt", async () => {
    const c = await PiCase.start("checkpoint-after-answer", {
      files: FILES,
      // A long final answer (~6k tokens) takes the context from ~44k past the 47,616 threshold after the run.
      script: {
        models: [MODEL],
        replies: [
          read("a.txt"),
          read("b.txt"),
          read("c.txt"),
          read("d.txt"),
          say(`REPORT ${"findings ".repeat(2_700)}`),
          say("next answer"),
        ],
      },
    });
    await c.prompt("Read a.txt to d.txt and write a long report.");
    // Four reads and the answer: the user asked for nothing more.
    expect(c.requests(), callLog(c.requests())).toHaveLength(5);
    const [entry] = compactions(c);
    expect(entry?.details?.strategy).toBe("checkpoint");

    await c.prompt("NEXT-PROMPT: what was the first line of a.txt?");
    const requests = c.requests();
    expect(requests, callLog(requests)).toHaveLength(6);
    const sent = texts(requests[5]);
    expect(sent.some((t) => t.startsWith(SUMMARY_PREFIX))).toBe(true);
    expect(sent.some((t) => t.includes("NEXT-PROMPT"))).toBe(true);
    expect(sent.filter((t) => t.startsWith(`${RECAP_PREFIX}${entry.id}]`))).toHaveLength(1);
    await c.finish();
  });

  it("idle /compact: no model call; the next prompt carries the checkpoint and the recap", async () => {
    const c = await PiCase.start("checkpoint-idle-compact", {
      files: FILES,
      script: {
        models: [MODEL],
        replies: [read("a.txt"), read("b.txt"), read("c.txt"), say("three read"), say("after compact")],
      },
    });
    await c.prompt("Read a.txt, b.txt and c.txt.");
    expect(c.requests(), callLog(c.requests())).toHaveLength(4);
    const response = await c.compact();
    expect(response.success, response.error).toBe(true);
    expect(c.requests(), callLog(c.requests())).toHaveLength(4);
    const [entry] = compactions(c);
    expect(entry?.details?.strategy).toBe("checkpoint");

    await c.prompt("AFTER-COMPACT: go on");
    const requests = c.requests();
    expect(requests, callLog(requests)).toHaveLength(5);
    const sent = texts(requests[4]);
    expect(sent.some((t) => t.startsWith(SUMMARY_PREFIX))).toBe(true);
    expect(sent.some((t) => t.includes("AFTER-COMPACT"))).toBe(true);
    expect(sent.at(-1)!.startsWith(`${RECAP_PREFIX}${entry.id}]`)).toBe(true);
    // What the checkpoint hid is out of view: the first read's output is not in the request.
    expect(JSON.stringify(requests[4].messages)).not.toContain("FILE-A line 0001");
    await c.finish();
  });
});
