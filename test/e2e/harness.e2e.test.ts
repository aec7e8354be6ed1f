import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

describe("e2e harness", () => {
  it("records every provider request of a multi-turn session with parallel tool calls", async () => {
    h = await startHarness({ files: { "a.txt": "alpha\n", "b.txt": "beta\n" } });
    h.script([
      fauxAssistantMessage([fauxToolCall("read", { path: "a.txt" }), fauxToolCall("read", { path: "b.txt" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("both read"),
      fauxAssistantMessage("second answer"),
    ]);
    await h.session.prompt("read both files");
    await h.session.prompt("and again");
    expect(h.requests).toHaveLength(3);
    const second = h.requests[1].filter((m) => m.role !== "system").map((m) => m.role);
    expect(second).toEqual(["user", "assistant", "toolResult", "toolResult"]);
    const results = h.requests[1].filter((m) => m.role === "toolResult");
    expect(JSON.stringify(results)).toContain("alpha");
    expect(JSON.stringify(results)).toContain("beta");
    expect(h.requests[2].filter((m) => m.role === "user")).toHaveLength(2);
  });
});
