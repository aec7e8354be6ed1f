import { describe, expect, it } from "vitest";
import { PlanError } from "../../../src/strategies/planned/apply.ts";
import { buildPlannerPrompt, MAX_RECORDS, parsePlanText, protectedRuns } from "../../../src/strategies/planned/model-plan.ts";
import type { TranscriptLine } from "../../../src/strategies/planned/transcript.ts";

const category = (reply: string): string => {
  try {
    parsePlanText(reply);
  } catch (error) {
    if (error instanceof PlanError) return error.category;
    throw error;
  }
  return "ok";
};

describe("parsing a text plan", () => {
  it("reads one record per line, in rank order", () => {
    expect(parsePlanText("120,180\n6,40\n 300 , 305 \n")).toEqual([{ from: 120, to: 180 }, { from: 6, to: 40 }, { from: 300, to: 305 }]);
  });
  it("tolerates one code fence or plan tag wrapper", () => {
    expect(parsePlanText("```\n1,2\n```")).toEqual([{ from: 1, to: 2 }]);
    expect(parsePlanText("```text\n1,2\n3,4\n```")).toHaveLength(2);
    expect(parsePlanText("<plan>\n5,6\n</plan>")).toEqual([{ from: 5, to: 6 }]);
  });
  it("drops a final record cut off mid-line", () => {
    expect(parsePlanText("1,2\n3,4\n5,")).toEqual([{ from: 1, to: 2 }, { from: 3, to: 4 }]);
  });
  it("is all or nothing otherwise", () => {
    expect(category("Here is the plan:\n1,2")).toBe("unparseable");
    expect(category("1,2\nsure\n3,4")).toBe("unparseable");
    expect(category("1-2")).toBe("unparseable");
    expect(category("1,2,3")).toBe("unparseable");
    expect(category("-1,2")).toBe("unparseable");
    expect(category("1,9999999999")).toBe("unparseable");
    expect(category("")).toBe("empty");
    expect(category("```\n```")).toBe("empty");
    expect(category("5,")).toBe("unparseable");
    expect(category("1,1\n".repeat(MAX_RECORDS + 1))).toBe("too-large");
    expect(category("x".repeat(300_000))).toBe("too-large");
  });
  it("never quotes the reply in its error", () => {
    try {
      parsePlanText("SECRET-TEXT");
    } catch (error) {
      expect(String(error)).not.toContain("SECRET");
    }
  });
});

describe("planner prompt", () => {
  const lines: TranscriptLine[] = [
    { text: "[user]", kind: "structure" },
    { text: "do it", kind: "text" },
    { text: "<keepContext>x</keepContext>", kind: "pinned" },
    { text: "[assistant]", kind: "structure" },
    { text: "done", kind: "text" },
  ];
  it("numbers every line and lists protected runs", () => {
    expect(protectedRuns(lines)).toBe("1, 3-4");
    const { system, prompt } = buildPlannerPrompt(lines, { objective: "ship it", regionTokens: 100, targetTokens: 50, customInstructions: "focus on auth" });
    expect(system).toContain("first,last");
    expect(prompt).toContain("1| [user]\n2| do it\n3| <keepContext>x</keepContext>\n4| [assistant]\n5| done");
    expect(prompt).toContain("ship it");
    expect(prompt).toContain("focus on auth");
    expect(prompt).toContain("about 50 tokens remain");
    expect(prompt).toContain("1, 3-4");
  });
});
