// The lab's rows come from the strategy registry: every row a strategy declares is selectable by its id, ids are
// unique, and the `--strategies` ids users and scripts know stay what they were.
import { describe, expect, it } from "vitest";
import { ROWS, selectRows } from "../../src/lab/rows/registry.ts";
import { PLUGINS } from "../../src/strategies/registry.ts";

describe("lab row registry", () => {
  it("lists every row the strategies declare, then the baselines, with the ids --strategies has always taken", () => {
    const declared = PLUGINS.flatMap((s) => (s.lab ?? []).map((spec) => spec.id));
    const ids = ROWS.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of declared) expect(ids).toContain(id);
    // The order the tables have always shown: the default strategy, the other configurable ones by name, fold, the
    // baselines, Pi native last.
    expect(ids).toEqual([
      "checkpoint",
      "digest",
      "digest-ws",
      "planned",
      "planned-model",
      "preserve",
      "fold",
      "fold-notice",
      "none",
      "truncate",
      "masking",
      "clearing",
      "prune",
      "native",
    ]);
    expect(selectRows(undefined).factories).toHaveLength(ids.length);
  });

  it("every strategy the registry lists has at least one lab row", () => {
    for (const strategy of PLUGINS) expect(strategy.lab?.length ?? 0, strategy.name).toBeGreaterThan(0);
  });
});

describe("lab --help", () => {
  it("lists every row id --strategies accepts", async () => {
    const { LAB_USAGE } = await import("../../src/lab/commands/lab.ts");
    const listed = /--strategies <ids>[^\n]*\n((?: {25}[^\n]*\n)+)/.exec(LAB_USAGE)?.[1] ?? "";
    expect(listed.split(/[\s,]+/).filter(Boolean)).toEqual(ROWS.map((r) => r.id));
  });
});
