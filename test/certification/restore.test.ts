// Certification of reversible context through the installed package in the real `pi`: the user undoes a fold with
// `/context restore`, and the next provider request carries the folded messages again. The restore asks the model
// nothing; it appends one fact, and the model hears what came back in one short hidden message.
import { afterEach, describe, expect, it } from "vitest";
import { PiCase } from "./support/pi-case.ts";
import {
  call,
  callLog,
  conversation,
  plannerRoute,
  preserveContinuationRoute,
  read,
  say,
  textFile,
  toolContext,
} from "./support/content.ts";
import type { ScriptModel } from "../e2e/fixtures/script.ts";

afterEach(() => PiCase.disposeAll());

const MODEL: ScriptModel = { id: "cert-128k", contextWindow: 128_000, maxTokens: 8_000 };
const FILES = { "a.txt": textFile("FILE-A", 1_000) };

describe("certification: restore", () => {
  it("/context restore undoes a fold: the next request carries the folded messages again, at no model call", async () => {
    const c = await PiCase.start("restore-fold", {
      files: FILES,
      script: {
        models: [MODEL],
        replies: [
          call("context_checkpoint", { name: "before-reading" }),
          read("a.txt"),
          call("context_compact", {
            target: "before-reading",
            summary: "FOLD-SUMMARY: a.txt holds numbered FILE lines.",
          }),
          say("folded"),
          say("I can see a.txt again"),
        ],
      },
    });
    await c.prompt("Label this point, read a.txt, then fold the reading away.");
    expect(conversation(c.requests()[3])).not.toContain("FILE-A line 0001");

    const handled = await c.prompt("/context restore last");
    expect(
      handled.some((r) => r.type === "agent_start"),
      "the restore command starts no run",
    ).toBe(false);
    expect(c.requests(), "the restore asks the model nothing").toHaveLength(4);
    expect(c.entries().filter((e) => e.type === "custom" && e.customType === "context-ledger/restore")).toHaveLength(1);

    await c.prompt("Is a.txt back?");
    const requests = c.requests();
    expect(requests, callLog(requests)).toHaveLength(5);
    const after = conversation(requests[4]);
    expect(after).toContain("FILE-A line 0001");
    expect(after).not.toContain("[Context compacted"); // the fold message left; its summary survives only as the call's argument
    expect(after).toContain("[context restored]");
    expect(after).toContain("Is a.txt back?");
    await c.finish();
  });

  it("/context restore undoes the default strategy's checkpoint compaction: the next request has the history back, not the summary", async () => {
    const files = Object.fromEntries(
      ["a", "b", "c"].map((n) => [`${n}.txt`, textFile(`FILE-${n.toUpperCase()}`, 10_000)]),
    );
    const c = await PiCase.start("restore-checkpoint", {
      files,
      script: {
        models: [{ id: "cert-64k", contextWindow: 64_000, maxTokens: 8_000 }],
        replies: [read("a.txt"), read("b.txt"), read("c.txt"), say("three read"), say("history is back")],
      },
    });
    await c.prompt("Read a.txt, b.txt and c.txt.");
    const response = await c.compact();
    expect(response.success, response.error).toBe(true);
    expect(c.entries().filter((e) => e.type === "compaction")).toHaveLength(1);

    await c.prompt("/context restore last");
    expect(c.requests(), "neither the checkpoint nor the restore asks the model").toHaveLength(4);
    await c.prompt("AFTER-RESTORE: go on");
    const requests = c.requests();
    expect(requests, callLog(requests)).toHaveLength(5);
    const after = conversation(requests[4]);
    expect(after).toContain("FILE-A line 0001");
    expect(after).not.toContain("The conversation history before this point was compacted");
    expect(after).toContain("[context restored]");
    expect(after).toContain("AFTER-RESTORE");
    await c.finish();
  });

  it("/context restore undoes a planned compaction: the deleted lines are back in the next request", async () => {
    const files = Object.fromEntries(
      ["a", "b", "c", "d"].map((n) => [`${n}.txt`, textFile(`FILE-${n.toUpperCase()}`, 10_000)]),
    );
    const c = await PiCase.start("restore-planned", {
      files,
      ledger: { strategy: "planned" },
      script: {
        models: [{ id: "cert-64k", contextWindow: 64_000, maxTokens: 8_000 }],
        routes: [plannerRoute([say("20,200\n250,420\n480,700")])],
        replies: [
          read("a.txt"),
          read("b.txt"),
          read("c.txt"),
          read("d.txt"),
          say("read all four"),
          say("lines are back"),
        ],
      },
    });
    await c.prompt("Read a.txt to d.txt.");
    expect((await c.compact()).success).toBe(true);
    expect(c.requests(), "five turns and one planner call").toHaveLength(6);
    await c.prompt("/context restore last");
    await c.prompt("AFTER-RESTORE: go on");
    const requests = c.requests();
    expect(requests, callLog(requests)).toHaveLength(7);
    const after = conversation(requests[6]);
    expect(after).not.toMatch(/\[compacted: \d+ lines removed\]/);
    expect(after).toContain("FILE-A line 0100");
    expect(after).toContain("[context restored]");
    await c.finish();
  });

  it("/context restore undoes a preserve tool summary: the raw tool output is back and the summary text is gone", async () => {
    const c = await PiCase.start("restore-preserve", {
      files: { "a.txt": textFile("FILE-A", 500), "b.txt": textFile("FILE-B", 500) },
      ledger: { strategy: "preserve" },
      script: {
        models: [{ id: "cert-128k", contextWindow: 128_000, maxTokens: 8_000 }],
        routes: [preserveContinuationRoute([toolContext(1, "MANUAL-CHECKPOINT")])],
        replies: [read("a.txt"), say("a read"), read("b.txt"), say("b read"), say("raw output is back")],
      },
    });
    await c.prompt("Read a.txt.");
    await c.prompt("Now read b.txt.");
    expect((await c.compact()).success).toBe(true);
    expect(c.requests(), "four turns and one tool summary request").toHaveLength(5);
    await c.prompt("/context restore last");
    await c.prompt("AFTER-RESTORE: go on");
    const requests = c.requests();
    expect(requests, callLog(requests)).toHaveLength(6);
    const after = conversation(requests[5]);
    expect(after).toContain("FILE-A line 0001");
    expect(after).not.toContain("MANUAL-CHECKPOINT");
    expect(after).toContain("[context restored]");
    await c.finish();
  });
});
