import { describe, expect, it } from "vitest";
import { digestCardLine } from "../../../src/strategies/digest/hooks.ts";
import type { DigestDetails } from "../../../src/strategies/digest/plan.ts";

describe("digest card", () => {
  it("one line: number, steps covered, tokens before and after, why, and what stayed raw", () => {
    const details: DigestDetails = {
      v: 1,
      strategy: "digest",
      checkpoint: 3,
      range: { afterId: "a", throughId: "b", keepDialogue: true },
      userOrdinals: [2],
      trigger: "batch",
      tokens: { contextBefore: 40_000, hidden: 12_345, keptRaw: 4_000, digest: 612 },
      steps: { steps: 17, superseded: 2, duplicates: 1, startupReads: 0 },
    };
    expect(digestCardLine(details)).toBe(
      "Context digest #3: 17 tool steps, ~12,345 tok → ~612 tok (batch, newest ~4,000 tok kept raw)",
    );
    expect(digestCardLine({ ...details, trigger: "manual", tokens: { ...details.tokens, keptRaw: 0 } })).toBe(
      "Context digest #3: 17 tool steps, ~12,345 tok → ~612 tok (manual)",
    );
    expect(digestCardLine(undefined)).toBe("Context digest");
  });
});
