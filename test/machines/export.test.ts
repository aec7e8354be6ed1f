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
    for (const state of [
      "requested",
      "pendingAtTurnEnd",
      "planning",
      "validated",
      "committed",
      "cancelled",
      "nativeFallback",
    ]) {
      expect(mermaid).toContain(state);
    }
    expect(mermaid).toContain("pendingAtTurnEnd --> planning : host.turnEnded [isStepIntact]");
  });
});

describe("statechart JSON export", () => {
  type Transition = { guard?: string | { type: string; params?: unknown }; target: string };
  const json = () =>
    JSON.parse(renderMachineFiles()["compaction.machine.json"]) as {
      states: Record<string, { always?: Transition[]; invoke?: { onDone?: Transition[] } }>;
    };

  it("keeps automatic (always) transitions and their guards, with static params", () => {
    const always = json().states.requested.always ?? [];
    expect(always.map((t) => [t.guard ?? "", t.target])).toEqual([
      ["isToolRequest", "pendingAtTurnEnd"],
      ["isInapplicable", "nativeFallback"],
      [{ type: "routedTo", params: { route: "pi" } }, "nativeFallback"],
      [{ type: "routedTo", params: { route: "cancel" } }, "cancelled"],
      ["", "planning"],
    ]);
  });

  it("keeps the validation guard on the planner's result, its computed params by name", () => {
    const onDone = json().states.planning.invoke?.onDone ?? [];
    expect(onDone.map((t) => [t.guard ?? "", t.target])).toEqual([
      [{ type: "isAccepted", params: "[judged]" }, "validated"],
      ["isInRun", "cancelled"],
      ["", "nativeFallback"],
    ]);
  });

  it("the Mermaid labels tell the route guards apart and show the commit on Pi's confirmation", () => {
    const mermaid = renderMachineFiles()["compaction.machine.mmd"];
    expect(mermaid).toContain("requested --> nativeFallback : always [routedTo pi]");
    expect(mermaid).toContain("requested --> cancelled : always [routedTo cancel]");
    expect(mermaid).toContain("planning --> validated : plan done [isAccepted]");
    expect(mermaid).toContain("validated --> committed : pi.appended");
  });
});
