// The Mermaid export, read by Mermaid's own parser (in jsdom, since Mermaid expects a DOM): the diagram must hold
// exactly the chart's states. A stray `;` or `:` in a note used to end the statement and turn every following word
// into a state box of its own.
import { JSDOM } from "jsdom";
import { describe, expect, it } from "vitest";
import { MACHINES, renderMachineFiles } from "../../src/lab/machine-export.ts";

interface StateDb {
  getStates(): Map<string, { descriptions?: string[]; note?: { text: string } }>;
}

async function parseStates(source: string): Promise<Map<string, { descriptions?: string[]; note?: { text: string } }>> {
  const { window } = new JSDOM("");
  Object.assign(globalThis, { window, document: window.document });
  const { default: mermaid } = await import("mermaid");
  await mermaid.parse(source);
  const diagram = (await mermaid.mermaidAPI.getDiagramFromText(source)) as unknown as { db: StateDb };
  return diagram.db.getStates();
}

describe("Mermaid export", () => {
  for (const [name, machine] of Object.entries(MACHINES)) {
    it(`${name}: Mermaid parses the diagram into exactly the chart's states, notes intact`, async () => {
      const states = await parseStates(renderMachineFiles()[`${name}.machine.mmd`]);
      const expected = Object.keys(machine.root.states);
      expect([...states.keys()].filter((k) => !/^root_(start|end)$/.test(k)).sort()).toEqual([...expected].sort());
      for (const key of expected) {
        const description = machine.root.states[key].description;
        if (description) expect(states.get(key)?.note?.text.length ?? 0).toBeGreaterThan(description.length / 2);
      }
    });
  }
});
