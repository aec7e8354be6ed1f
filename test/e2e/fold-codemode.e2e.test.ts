// A fold requested from inside a codemode script: the request belongs to the script's parent step.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { createCodemodeExtension } from "@earendil-works/pi-coding-agent";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

describe("fold from codemode", () => {
  it("a script that compacts and keeps running folds at the end of its step, carrying only the script output", async () => {
    h = await startHarness({ extensions: [createCodemodeExtension()], settings: { defaultTools: ["+codemode"] } });
    h.script([fauxAssistantMessage("one done")]);
    await h.session.prompt("task ONE-CM");
    const one = h.session.sessionManager.getBranch().find((e) => e.type === "message" && e.message.role === "user")!.id;
    const script = [
      `const r = await tools.bash({ command: "echo SCRIPT-SIDE-OUTPUT" });`,
      `await tools.context_compact({ target: ${JSON.stringify(one)}, summary: "SUM-CM" });`,
      `text("after compact: " + r.output.trim());`,
    ].join("\n");
    h.script([
      fauxAssistantMessage([fauxToolCall("codemode", { code: script } as never)], { stopReason: "toolUse" }),
      fauxAssistantMessage("after"),
    ]);
    await h.session.prompt("run a script FOLDED-CM");
    const result = h.session.sessionManager.getBranch().find((e) => e.type === "message" && e.message.role === "toolResult" && e.message.toolName === "codemode");
    const seen = JSON.stringify(h.requests.at(-1)!.filter((m) => m.role !== "system"));
    expect(JSON.stringify(result)).toContain("Script completed");
    expect(seen).toContain("SUM-CM");
    expect(seen).toContain("after compact: SCRIPT-SIDE-OUTPUT");
    expect(seen).not.toContain("FOLDED-CM");
    expect(seen).not.toContain("tools.bash"); // the script source is not carried
  });
});
