// Certification of pins through the installed package in the real `pi`: the model pins a file it read with
// `context_pin`, the user runs `/compact` under the default strategy, and the next provider request still carries the
// pinned read verbatim while its unpinned neighbours are gone. Pinning asks the model nothing.
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_STRATEGY } from "../../src/strategies/registry.ts";
import { PiCase } from "./support/pi-case.ts";
import { call, callLog, conversation, read, say, textFile } from "./support/content.ts";

afterEach(() => PiCase.disposeAll());

describe("certification: pins", () => {
  it(`a pinned read survives /compact under the default strategy (${DEFAULT_STRATEGY}), byte for byte, at no model call for the pin`, async () => {
    const files = {
      "a.txt": textFile("FILE-A", 10_000),
      "spec.md": textFile("SPEC", 3_000),
      "c.txt": textFile("FILE-C", 10_000),
      "d.txt": textFile("FILE-D", 10_000),
    };
    const c = await PiCase.start("pins-compact", {
      files,
      script: {
        models: [{ id: "cert-64k", contextWindow: 64_000, maxTokens: 8_000 }],
        replies: [
          read("a.txt"),
          read("spec.md", "read-spec"),
          call("context_pin", { target: "last", note: "the spec" }, "pin-spec"),
          read("c.txt"),
          read("d.txt"),
          say("four read, spec pinned"),
          say("still have the spec"),
        ],
      },
    });
    await c.prompt("Read a.txt, spec.md (pin it), c.txt and d.txt.");
    expect(c.requests(), "one request per scripted reply").toHaveLength(6);
    const pins = c.entries().filter((e) => e.type === "custom" && e.customType === "context-ledger/pin");
    expect(pins).toHaveLength(1);
    const spec = c
      .entries()
      .find(
        (e) => e.type === "message" && (e.message as { role: string; toolCallId?: string }).toolCallId === "read-spec",
      )!;
    expect(pins[0].data).toEqual({ v: 1, targetId: spec.id, pinned: true, note: "the spec" });

    const response = await c.compact();
    expect(response.success, response.error).toBe(true);
    const compaction = c.entries().find((e) => e.type === "compaction")!;
    expect((compaction.details as { strategy?: string }).strategy).toBe(DEFAULT_STRATEGY);
    // The cut is after the pinned read: without the pin, it would be gone.
    const ids: unknown[] = c.entries().map((e) => e.id);
    expect(ids.indexOf(spec.id)).toBeLessThan(ids.indexOf(compaction.firstKeptEntryId as string));

    await c.prompt("AFTER-COMPACT: do you still have the spec?");
    const requests = c.requests();
    const last = requests[requests.length - 1];
    expect(requests, "the pin and the checkpoint call no model: one more request, for the prompt").toHaveLength(7);
    const sent = last.messages.find(
      (m) => m.role === "toolResult" && (m as { toolCallId?: string }).toolCallId === "read-spec",
    );
    expect(sent, callLog(requests)).toBeDefined();
    const stored = spec.message as { content: unknown };
    expect(JSON.stringify((sent as { content: unknown }).content)).toBe(JSON.stringify(stored.content));
    expect(
      last.messages.some((m) => m.role === "assistant" && JSON.stringify(m).includes('"read-spec"')),
      "the pinned result keeps its call",
    ).toBe(true);
    const seen = conversation(last);
    expect(seen).not.toContain("FILE-A line 0001");
    expect(seen).toContain("AFTER-COMPACT");
    await c.finish();
  });
});
