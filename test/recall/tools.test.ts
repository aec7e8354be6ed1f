// The host side of recall without a session: tool declarations, advertised triggers, incremental index sync,
// and the shipped skill.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  loadSkillsFromDir,
  type ExtensionAPI,
  type ExtensionContext,
  type ToolDefinition,
} from "@earendil-works/pi-coding-agent";
import { RecallIndexes, registerRecallTools } from "../../src/host/recall-tools.ts";
import { DEFAULT_RECALL_SETTINGS } from "../../src/recall/settings.ts";
import { Branch } from "./fixtures.ts";

function capture(): Map<string, ToolDefinition> {
  const tools = new Map<string, ToolDefinition>();
  const pi = { registerTool: (tool: ToolDefinition) => tools.set(tool.name, tool) } as unknown as ExtensionAPI;
  registerRecallTools(pi, () => DEFAULT_RECALL_SETTINGS);
  return tools;
}

describe("recall tool declarations", () => {
  it("registers the four tools with the contract's parameters", () => {
    const tools = capture();
    const params = (name: string) => {
      const schema = tools.get(name)!.parameters as unknown as {
        properties: Record<string, unknown>;
        required?: string[];
      };
      return { keys: Object.keys(schema.properties).sort(), required: [...(schema.required ?? [])].sort() };
    };
    expect([...tools.keys()].sort()).toEqual([
      "context_grep",
      "context_list_entries",
      "context_lookup",
      "context_show_entry",
    ]);
    expect(params("context_lookup")).toEqual({ keys: ["question", "scope"], required: ["question"] });
    expect(params("context_list_entries")).toEqual({ keys: ["cursor", "role", "scope", "session"], required: [] });
    // The contract's four and scope, plus two optional switches.
    expect(params("context_grep")).toEqual({
      keys: ["caseSensitive", "context", "cursor", "includeRecall", "literal", "pattern", "scope"],
      required: ["pattern"],
    });
    expect(params("context_show_entry")).toEqual({ keys: ["cursor", "id", "session"], required: ["id"] });
    // scope is a plain string enum, which every provider's tool schema accepts.
    const scope = (tools.get("context_grep")!.parameters as unknown as { properties: { scope: unknown } }).properties
      .scope;
    expect(scope).toMatchObject({ type: "string", enum: ["session", "project"] });
  });

  it("advertises when to recall and when not to", () => {
    const lookup = capture().get("context_lookup")!.description;
    for (const trigger of [
      "exact text of an earlier output",
      "where an earlier finding",
      "contradiction",
      "slow research",
    ])
      expect(lookup).toContain(trigger);
    for (const notFor of ["current contents of files", "never given", "abandoned /tree branches"])
      expect(lookup).toContain(notFor);
    // The project scope: when it helps, and that other projects stay out of reach.
    for (const name of ["context_lookup", "context_grep"]) {
      const description = capture().get(name)!.description;
      for (const phrase of [
        'scope: "project"',
        "earlier sessions",
        "an error, a decision or a command",
        "Other projects' sessions are never searched",
        "read them from disk",
      ])
        expect(description).toContain(phrase);
    }
    expect(capture().get("context_show_entry")!.description).toContain("pass that session's id as session");
  });
});

describe("per-session index", () => {
  it("syncs incrementally: a call after one new entry reads one entry, not the branch", () => {
    const b = new Branch();
    for (let i = 0; i < 500; i++) b.user(`message ${i}`);
    let reads = 0;
    const sm = {
      getSessionId: () => "s1",
      getLeafId: () => b.leafId,
      getEntry: (id: string) => {
        reads++;
        return b.entries.find((e) => e.id === id);
      },
    } as unknown as ExtensionContext["sessionManager"];
    const indexes = new RecallIndexes();
    expect(indexes.for(sm).entries).toHaveLength(500);
    expect(reads).toBe(500);
    reads = 0;
    b.user("one more");
    const index = indexes.for(sm);
    expect(index.entries).toHaveLength(501);
    expect(reads).toBe(1);
    reads = 0;
    indexes.for(sm);
    expect(reads).toBe(0);
  });
});

describe("context-recall skill", () => {
  it("loads through Pi's skill loader without diagnostics", () => {
    const dir = fileURLToPath(new URL("../../skills/", import.meta.url));
    const { skills, diagnostics } = loadSkillsFromDir({ dir, source: "package" });
    expect(diagnostics).toEqual([]);
    const skill = skills.find((s) => s.name === "context-recall")!;
    expect(skill.description).toMatch(/provenance/);
    expect(skill.description).toMatch(/contradict/);
  });
});
