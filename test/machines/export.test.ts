import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { renderMachineFiles, staleMachineFiles } from "../../src/lab/machine-export.ts";

const docs = fileURLToPath(new URL("../../docs/machines/", import.meta.url));

describe("statechart export", () => {
  it("the checked-in docs/machines export is current (run `npm run machines` after changing a machine)", () => {
    expect(staleMachineFiles(docs)).toEqual([]);
  });

  it("the Mermaid diagram names every lifecycle state", () => {
    const mermaid = renderMachineFiles()["compaction.machine.mmd"];
    for (const state of ["requested", "pendingAtTurnEnd", "planning", "validated", "committed", "cancelled", "nativeFallback"]) {
      expect(mermaid).toContain(state);
    }
    expect(mermaid).toContain("pendingAtTurnEnd --> planning : host.turnEnded [isStepIntact]");
  });
});

describe("statechart JSON export", () => {
  it("keeps automatic (always) transitions and their guards", () => {
    const json = JSON.parse(renderMachineFiles()["compaction.machine.json"]) as { states: Record<string, { always?: { guard?: string; target: string }[] }> };
    expect(json.states.requested.always?.map((t) => t.guard ?? "")).toEqual(["isFold", "isNative", ""]);
  });
});
