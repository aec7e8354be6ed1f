// Certification of `fold`, the agent's own folding, through the installed package in the real `pi`. Folds cost no
// model call of their own: the fold commits at the end of the step that asked for it, and the run goes on.
import { afterEach, describe, expect, it } from "vitest";
import { PiCase } from "./support/pi-case.ts";
import { call, callLog, conversation, read, say, textFile } from "./support/content.ts";
import type { ScriptModel } from "../e2e/fixtures/script.ts";

afterEach(() => PiCase.disposeAll());

const MODEL: ScriptModel = { id: "cert-128k", contextWindow: 128_000, maxTokens: 8_000 };
const FILES = { "a.txt": textFile("FILE-A", 1_000), "b.txt": textFile("FILE-B", 1_000) };

describe("certification: fold", () => {
  it("an in-run fold hides the folded work from the next request and keeps the summary, with no extra model call", async () => {
    const c = await PiCase.start("fold-in-run", {
      files: FILES,
      script: {
        models: [MODEL],
        replies: [
          call("context_checkpoint", { name: "before-reading" }),
          read("a.txt"),
          read("b.txt"),
          call("context_compact", {
            target: "before-reading",
            summary: "FOLD-SUMMARY: a.txt and b.txt hold numbered FILE lines.",
          }),
          say("folded and done"),
        ],
      },
    });
    await c.prompt("Label this point, read a.txt and b.txt, then fold the reading away.");
    const requests = c.requests();
    // Five agent turns, all caused by the user's request; the fold itself asks the model nothing.
    expect(requests, callLog(requests)).toHaveLength(5);
    expect(conversation(requests[3])).toContain("FILE-A line 0001");
    const after = conversation(requests[4]);
    expect(after).toContain("FOLD-SUMMARY");
    expect(after).not.toContain("FILE-A line 0001");
    expect(after).not.toContain("FILE-B line 0001");
    expect(after).toContain("Label this point");
    expect(c.entries().some((e) => e.type === "custom_message" && e.customType === "context-ledger/fold")).toBe(true);
    await c.finish();
  });

  it("a fold requested inside a codemode script folds at the end of the script's step, carrying only the script output", async () => {
    const script = [
      `const body = await tools.read({ path: "a.txt" });`,
      `await tools.context_compact({ target: "start", summary: "SUM-CODEMODE: a.txt was read inside a script." });`,
      `text("script saw " + body.split("\\n").length + " lines; SCRIPT-OUTPUT");`,
    ].join("\n");
    const c = await PiCase.start("fold-codemode", {
      files: FILES,
      // Codemode is off by default in Pi; this case is about it.
      pi: { defaultTools: ["+codemode"] },
      script: {
        models: [MODEL],
        replies: [
          call("context_checkpoint", { name: "start" }),
          say("labelled"),
          call("codemode", { code: script }),
          say("after the script"),
        ],
      },
    });
    await c.prompt("Label the start.");
    await c.prompt("RUN-SCRIPT: read a.txt in a script and fold it.");
    const requests = c.requests();
    expect(requests, callLog(requests)).toHaveLength(4);
    expect(requests[2].tools).toContain("codemode");
    const after = conversation(requests[3]);
    expect(after).toContain("SUM-CODEMODE");
    expect(after).toContain("SCRIPT-OUTPUT");
    expect(after).not.toContain("RUN-SCRIPT");
    expect(after).not.toContain("tools.read"); // the script source is folded away with its step
    await c.finish();
  });
});
