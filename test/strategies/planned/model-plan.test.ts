import { describe, expect, it } from "vitest";
import { PlanError } from "../../../src/strategies/shared/fallback.ts";
import {
  buildPlannerPrompt,
  DELETION_PLAN_TOOL,
  MAX_RECORDS,
  parsePlanText,
  parseToolPlan,
  protectedRuns,
  readPlanReply,
} from "../../../src/strategies/planned/model-plan.ts";
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
    expect(parsePlanText("120,180\n6,40\n 300 , 305 \n")).toEqual([
      { from: 120, to: 180 },
      { from: 6, to: 40 },
      { from: 300, to: 305 },
    ]);
  });
  it("tolerates one code fence or plan tag wrapper", () => {
    expect(parsePlanText("```\n1,2\n```")).toEqual([{ from: 1, to: 2 }]);
    expect(parsePlanText("```text\n1,2\n3,4\n```")).toHaveLength(2);
    expect(parsePlanText("<plan>\n5,6\n</plan>")).toEqual([{ from: 5, to: 6 }]);
  });
  it("drops a final record cut off mid-line", () => {
    expect(parsePlanText("1,2\n3,4\n5,")).toEqual([
      { from: 1, to: 2 },
      { from: 3, to: 4 },
    ]);
  });
  it("recovers a text plan the output limit cut inside its last record's number, keeping the complete ones", () => {
    // `705,7` is well formed, yet it is the start of `705,712`: read as a record it would be reversed.
    const reply = { text: "120,180\n6,40\n705,7", toolCalls: [], stopReason: "length" };
    expect(readPlanReply(reply, 800)).toEqual({
      ranges: [
        { from: 120, to: 180 },
        { from: 6, to: 40 },
      ],
      diagnostics: { form: "text", records: 3, accepted: 2, discarded: 1, stopReason: "length", truncated: true },
    });
    // A cut right after a newline loses nothing; a reply that stopped normally keeps its last record.
    expect(readPlanReply({ ...reply, text: "120,180\n6,40\n" }, 800).ranges).toHaveLength(2);
    expect(readPlanReply({ ...reply, text: "120,180\n6,40\n" }, 800).diagnostics).toMatchObject({
      records: 2,
      discarded: 0,
    });
    expect(readPlanReply({ ...reply, stopReason: "stop", text: "120,180\n705,712" }, 800).ranges).toEqual([
      { from: 120, to: 180 },
      { from: 705, to: 712 },
    ]);
    // Nothing complete before the cut is still no plan, and the stop reason stays with the error.
    const error = errorOf(() => readPlanReply({ ...reply, text: "705,7" }, 800));
    expect(error.category).toBe("empty");
    expect(error.diagnostics).toMatchObject({ form: "text", stopReason: "length" });
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
    const { system, prompt } = buildPlannerPrompt(lines, {
      objective: "ship it",
      regionTokens: 100,
      targetTokens: 50,
      customInstructions: "focus on auth",
    });
    expect(system).toContain("first,last");
    expect(prompt).toContain("1| [user]\n2| do it\n3| <keepContext>x</keepContext>\n4| [assistant]\n5| done");
    expect(prompt).toContain("ship it");
    expect(prompt).toContain("focus on auth");
    expect(prompt).toContain("about 50 tokens remain");
    expect(prompt).toContain("1, 3-4");
  });
});

const errorOf = (fn: () => unknown): PlanError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof PlanError) return error;
    throw error;
  }
  throw new Error("expected a PlanError");
};

describe("the submit_deletion_plan tool", () => {
  it("is offered for schema-constrained sampling with 1-based start/end records", () => {
    const { tools, prompt } = buildPlannerPrompt([{ text: "[user]", kind: "structure" }], {
      regionTokens: 10,
      targetTokens: 5,
    });
    expect(tools).toEqual([DELETION_PLAN_TOOL]);
    expect(DELETION_PLAN_TOOL).toMatchObject({
      name: "submit_deletion_plan",
      constrainedSampling: { type: "json_schema", strict: "prefer" },
    });
    const schema = DELETION_PLAN_TOOL.parameters as {
      required: string[];
      properties: { ranges: { items: { required: string[] } } };
    };
    expect(schema.required).toEqual(["ranges"]);
    expect(schema.properties.ranges.items.required).toEqual(["start", "end"]);
    expect(prompt).toContain("submit_deletion_plan");
  });

  it("discards invalid and out-of-bounds records one by one, keeping rank order and bounded counts", () => {
    const args = {
      ranges: [
        { start: 8, end: 9 },
        { start: 0, end: 2 },
        { start: 5, end: 3 },
        { start: 2, end: 4 },
        "SECRET-RECORD",
        { start: 1.5, end: 2 },
        { start: 7, end: 12 },
        { start: 1, end: 1 },
      ],
    };
    const { ranges, diagnostics } = parseToolPlan(args, 10);
    expect(ranges).toEqual([
      { from: 8, to: 9 },
      { from: 2, to: 4 },
      { from: 1, to: 1 },
    ]);
    expect(diagnostics).toEqual({
      form: "tool",
      records: 8,
      accepted: 3,
      discarded: 5,
      discardedBy: { bounds: 2, reversed: 1, shape: 2 },
      firstDiscarded: 2,
    });
    expect(JSON.stringify(diagnostics)).not.toContain("SECRET");
  });

  it("rejects a broken envelope, a plan with no usable record, and more than one plan", () => {
    expect(errorOf(() => parseToolPlan({ plan: [] }, 5)).category).toBe("envelope");
    expect(errorOf(() => parseToolPlan("1,2", 5)).category).toBe("envelope");
    expect(errorOf(() => parseToolPlan({ ranges: [] }, 5)).category).toBe("empty");
    const none = errorOf(() =>
      parseToolPlan(
        {
          ranges: [
            { start: 9, end: 9 },
            { start: 3, end: 1 },
          ],
        },
        5,
      ),
    );
    expect(none.category).toBe("no-valid-records");
    expect(none.diagnostics).toMatchObject({ records: 2, accepted: 0, discarded: 2 });
    const twice = {
      text: "",
      toolCalls: [
        { name: "submit_deletion_plan", arguments: { ranges: [] } },
        { name: "submit_deletion_plan", arguments: { ranges: [] } },
      ],
    };
    expect(errorOf(() => readPlanReply(twice, 5)).category).toBe("envelope");
    expect(
      errorOf(() => readPlanReply({ text: "1,2", toolCalls: [{ name: "bash", arguments: {} }] }, 5)).category,
    ).toBe("envelope");
    expect(
      errorOf(() => parseToolPlan({ ranges: Array.from({ length: MAX_RECORDS + 1 }, () => ({ start: 1, end: 1 })) }, 5))
        .category,
    ).toBe("too-large");
  });

  it("prefers the tool call; a text reply stays accepted, all or nothing", () => {
    expect(
      readPlanReply(
        {
          text: "ignored 9,9",
          toolCalls: [{ name: "submit_deletion_plan", arguments: { ranges: [{ start: 2, end: 3 }] } }],
        },
        5,
      ).ranges,
    ).toEqual([{ from: 2, to: 3 }]);
    expect(readPlanReply("2,3\n4,4", 5)).toEqual({
      ranges: [
        { from: 2, to: 3 },
        { from: 4, to: 4 },
      ],
      diagnostics: { form: "text", records: 2, accepted: 2, discarded: 0 },
    });
    expect(readPlanReply({ text: "1,1", toolCalls: [] }, 5).diagnostics.form).toBe("text");
    expect(errorOf(() => readPlanReply("2,3\nnope", 5)).diagnostics.form).toBe("text");
  });
});
