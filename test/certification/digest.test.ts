// Certification of `digest` through the installed package in the real `pi`: strategy `digest`, Pi's default settings
// and a 128k model. Digests are written from the session (no model request): at 128k a digest covers the older raw
// tool work once it holds 6,400 tokens beyond the 3,840 newest kept raw.
import { afterEach, describe, expect, it } from "vitest";
import { PiCase } from "./support/pi-case.ts";
import { callLog, conversation, read, say, textFile, texts } from "./support/content.ts";
import type { ScriptModel } from "../e2e/fixtures/script.ts";

afterEach(() => PiCase.disposeAll());

type Entry = {
  type: string;
  customType?: string;
  details?: { checkpoint?: number; trigger?: string; strategy?: string };
};
const digests = (c: PiCase) =>
  (c.entries() as Entry[]).filter((e) => e.type === "custom_message" && e.customType === "context-ledger/digest");
const DIGEST_PREFIX = "[context digest #";
const MODEL: ScriptModel = { id: "cert-128k", contextWindow: 128_000, maxTokens: 8_000 };

describe("certification: digest", () => {
  it("digests older reads at turn_end without a model request; every earlier digest is byte-stable in later requests", async () => {
    const names = ["a", "b", "c", "d", "e", "f", "g", "h"];
    const files = Object.fromEntries(names.map((n) => [`${n}.txt`, textFile(`FILE-${n.toUpperCase()}`, 3_500)]));
    const c = await PiCase.start("digest-batches", {
      files,
      ledger: { strategy: "digest" },
      script: {
        models: [MODEL],
        routes: [],
        replies: [...names.map((n) => read(`${n}.txt`)), say("all read"), say("you are welcome")],
      },
    });
    await c.prompt("USER-1: read a.txt to h.txt.");
    await c.prompt("USER-2: thanks.");
    const requests = c.requests();
    // Ten agent turns and nothing else: a digest is no model request.
    expect(
      requests.map((r) => r.route),
      callLog(requests),
    ).toEqual(Array(10).fill("main"));
    // Each read is about 3,500 tokens: a digest covers two reads whenever four are raw before the current one (the
    // third one is written at the end of the answer, so only the request of USER-2 shows it).
    expect(digests(c).map((e) => [e.details?.checkpoint, e.details?.trigger])).toEqual([
      [1, "batch"],
      [2, "batch"],
      [3, "batch"],
    ]);
    // Invariant 5 on the real payloads: the conversation up to digest k is identical in every later request.
    for (let k = 1; k <= 3; k++) {
      const tag = `${DIGEST_PREFIX}${k}:`;
      const withIt = requests.filter((r) => texts(r).some((t) => t.startsWith(tag)));
      expect(withIt.length, `requests showing digest #${k}`).toBeGreaterThan(0);
      const prefix = (r: (typeof requests)[number]) =>
        JSON.stringify(r.messages.slice(1, texts(r).findIndex((t) => t.startsWith(tag)) + 1));
      for (const later of withIt) expect(prefix(later)).toBe(prefix(withIt[0]));
    }
    const last = requests.at(-1)!;
    expect(texts(last)).toContain("USER-1: read a.txt to h.txt.");
    expect(texts(last)).toContain("all read");
    for (const gone of ["FILE-A line 0001", "FILE-D line 0001", "FILE-F line 0001"])
      expect(conversation(last)).not.toContain(gone);
    expect(conversation(last)).toContain("FILE-H line 0001");
    expect(conversation(last)).toMatch(/- \S+ read ok, \d+ lines: a\.txt/);
    await c.finish();
  });

  it("manual /compact on a short session writes a digest, is not reported as cancelled and calls no model", async () => {
    const c = await PiCase.start("digest-manual-short", {
      files: { "a.txt": textFile("FILE-A", 500), "b.txt": textFile("FILE-B", 500) },
      ledger: { strategy: "digest" },
      script: {
        models: [MODEL],
        routes: [],
        replies: [read("a.txt"), say("a read"), read("b.txt"), say("b read"), say("after compact")],
      },
    });
    await c.prompt("Read a.txt.");
    await c.prompt("Now read b.txt.");
    expect(digests(c)).toHaveLength(0);
    const response = await c.compact();
    expect(response.success, response.error).toBe(true);
    expect(`${response.error ?? ""} ${JSON.stringify(c.notifications())}`).not.toMatch(/cancel/i);
    expect(digests(c).map((e) => e.details?.trigger)).toEqual(["manual"]);
    expect(c.requests(), callLog(c.requests())).toHaveLength(4);
    await c.prompt("AFTER: go on");
    const after = c.requests().at(-1)!;
    expect(texts(after).filter((t) => t.startsWith(`${DIGEST_PREFIX}1:`))).toHaveLength(1);
    expect(conversation(after)).not.toContain("FILE-A line 0001");
    expect(texts(after)).toContain("Read a.txt.");
    expect(texts(after)).toContain("b read");
    await c.finish();
  });
});
