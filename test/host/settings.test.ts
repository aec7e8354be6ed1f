import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS, loadSettings, resolveSettings } from "../../src/host/settings.ts";
import { redactText } from "../../src/host/inspector.ts";

describe("settings", () => {
  it("defaults to the checkpoint strategy with fold and recall tools on", () => {
    const { settings, warnings } = resolveSettings(undefined, {});
    expect(settings).toEqual(DEFAULT_SETTINGS);
    expect(settings.strategy).toBe("checkpoint");
    expect(warnings).toEqual([]);
  });

  it("an invalid value warns clearly and keeps the default", () => {
    const { settings, warnings } = resolveSettings({ strategy: "aggressive", checkpoint: { capPercent: 400 } }, {});
    expect(settings.strategy).toBe("checkpoint");
    expect(settings.checkpoint.capPercent).toBe(25);
    // The warning lists the values that work (issue 24, item 22).
    expect(warnings.join("\n")).toContain(
      'contextLedger.strategy: unknown strategy "aggressive" (expected checkpoint, planned, preserve, digest, native); using checkpoint',
    );
    expect(warnings.join("\n")).toMatch(/capPercent/);
  });

  it("every registered strategy is a valid setting, digest included", () => {
    for (const strategy of ["checkpoint", "planned", "preserve", "digest", "native"]) {
      expect(resolveSettings({ strategy }, {}).settings.strategy).toBe(strategy);
      expect(resolveSettings({}, { PI_CONTEXT_LEDGER_STRATEGY: strategy }).settings.strategy).toBe(strategy);
    }
  });

  it("PI_CONTEXT_LEDGER_* overrides the file, and a bad override warns", () => {
    expect(
      resolveSettings({ strategy: "native" }, { PI_CONTEXT_LEDGER_STRATEGY: "checkpoint" }).settings.strategy,
    ).toBe("checkpoint");
    const bad = resolveSettings({}, { PI_CONTEXT_LEDGER_STRATEGY: "nope", PI_CONTEXT_LEDGER_FOLD_TOOLS: "0" });
    expect(bad.settings.strategy).toBe("checkpoint");
    expect(bad.settings.foldTools).toBe(false);
    expect(bad.warnings[0]).toMatch(/PI_CONTEXT_LEDGER_STRATEGY/);
  });

  it("reads only the global settings file; a project-local file cannot change anything", () => {
    const root = mkdtempSync(join(tmpdir(), "ctx-settings-"));
    const agent = join(root, "agent");
    mkdirSync(join(root, "project", ".pi"), { recursive: true });
    mkdirSync(agent, { recursive: true });
    writeFileSync(join(agent, "settings.json"), JSON.stringify({ contextLedger: { strategy: "native" } }));
    writeFileSync(
      join(root, "project", ".pi", "settings.json"),
      JSON.stringify({ contextLedger: { strategy: "checkpoint", recall: { lookupModel: "evil/exfil" } } }),
    );
    const cwd = process.cwd();
    process.chdir(join(root, "project"));
    try {
      const { settings } = loadSettings({ PI_CODING_AGENT_DIR: agent });
      expect(settings.strategy).toBe("native");
      expect(settings.recall.lookupModel).toBeUndefined();
    } finally {
      process.chdir(cwd);
    }
  });

  it("a corrupt global settings file warns and uses defaults", () => {
    const agent = mkdtempSync(join(tmpdir(), "ctx-settings-"));
    writeFileSync(join(agent, "settings.json"), "{ not json");
    const { settings, warnings } = loadSettings({ PI_CODING_AGENT_DIR: agent });
    expect(settings).toEqual(DEFAULT_SETTINGS);
    expect(warnings[0]).toMatch(/not valid JSON/);
  });
});

describe("inspector redaction", () => {
  it("keeps the shape but no string at all, however short or deep", () => {
    const redacted = redactText({
      kind: "fold",
      request: { target: "hunter2", summary: "the secret plan to refactor auth" },
      plan: { content: ["x".repeat(500)] },
      deep: { a: { b: { c: { d: { e: { f: "pw" } } } } } },
    });
    expect(JSON.stringify(redacted)).not.toMatch(/secret|hunter2|pw/);
    expect(redacted).toEqual({
      kind: "[text 4 chars]",
      request: { target: "[text 7 chars]", summary: "[text 32 chars]" },
      plan: { content: ["[text 500 chars]"] },
      deep: { a: { b: { c: { d: { e: "[object]" } } } } },
    });
  });
});

describe("recall settings", () => {
  it("reads the optional recall limits and their environment overrides", () => {
    const { settings, warnings } = resolveSettings(
      { recall: { lookupAttempts: 2, listPageSize: 10, lookupAnswerChars: -1 } },
      { PI_CONTEXT_LEDGER_GREP_MAX_RESULTS: "3", PI_CONTEXT_LEDGER_LOOKUP_MODEL: "anthropic/claude" },
    );
    expect(settings.recall).toMatchObject({
      lookupAttempts: 2,
      listPageSize: 10,
      grepMaxResults: 3,
      lookupModel: "anthropic/claude",
    });
    expect(settings.recall.lookupAnswerChars).toBeUndefined();
    expect(warnings.join()).toMatch(/lookupAnswerChars/);
  });

  it("reads digest.workingSet (off by default) and its environment override", () => {
    expect(DEFAULT_SETTINGS.digest).toEqual({ workingSet: false });
    expect(resolveSettings({ digest: { workingSet: true } }, {}).settings.digest).toEqual({ workingSet: true });
    expect(
      resolveSettings({ digest: { workingSet: true } }, { PI_CONTEXT_LEDGER_DIGEST_WORKING_SET: "0" }).settings.digest,
    ).toEqual({ workingSet: false });
    const bad = resolveSettings({ digest: { workingSet: "yes" } }, {});
    expect(bad.settings.digest).toEqual({ workingSet: false });
    expect(bad.warnings.join("\n")).toMatch(/digest\.workingSet/);
  });

  it("reads the pin budget share (global file), with its environment override; bad values warn and keep 0.1", () => {
    expect(DEFAULT_SETTINGS.pins).toEqual({ maxShare: 0.1 });
    expect(resolveSettings({ pins: { maxShare: 0.25 } }, {}).settings.pins.maxShare).toBe(0.25);
    expect(resolveSettings({ pins: { maxShare: 1 } }, {}).settings.pins.maxShare).toBe(1);
    expect(
      resolveSettings({ pins: { maxShare: 0.25 } }, { PI_CONTEXT_LEDGER_PINS_MAX_SHARE: "0.05" }).settings.pins
        .maxShare,
    ).toBe(0.05);
    const bad = resolveSettings({ pins: { maxShare: 0 } }, { PI_CONTEXT_LEDGER_PINS_MAX_SHARE: "0x1" });
    expect(bad.settings.pins.maxShare).toBe(0.1);
    expect(bad.warnings.join("\n")).toMatch(/pins\.maxShare: invalid value 0/);
    expect(bad.warnings.join("\n")).toMatch(/PI_CONTEXT_LEDGER_PINS_MAX_SHARE: expected a share above 0, at most 1/);
    expect(resolveSettings({ pins: "lots" }, {}).warnings.join()).toMatch(/contextLedger\.pins: expected an object/);
  });

  it("reads the budget notice switch and share, with their environment overrides", () => {
    expect(DEFAULT_SETTINGS.budgetNotice).toEqual({ share: 0.8 }); // enabled unset: on unless the strategy is native
    const file = resolveSettings({ budgetNotice: { enabled: false, share: 0.6 } }, {});
    expect(file.settings.budgetNotice).toEqual({ enabled: false, share: 0.6 });
    const env = resolveSettings(
      { budgetNotice: { enabled: false } },
      { PI_CONTEXT_LEDGER_BUDGET_NOTICE: "1", PI_CONTEXT_LEDGER_BUDGET_NOTICE_SHARE: "0.5" },
    );
    expect(env.settings.budgetNotice).toEqual({ enabled: true, share: 0.5 });
    const bad = resolveSettings({ budgetNotice: { share: 1.5 } }, { PI_CONTEXT_LEDGER_BUDGET_NOTICE_SHARE: "lots" });
    expect(bad.settings.budgetNotice.share).toBe(0.8);
    expect(bad.warnings.join("\n")).toMatch(/budgetNotice\.share: invalid value 1\.5/);
    expect(bad.warnings.join("\n")).toMatch(/PI_CONTEXT_LEDGER_BUDGET_NOTICE_SHARE/);
  });
});

describe("settings: wrong shapes and number syntax", () => {
  it("a section of the wrong shape warns instead of being ignored", () => {
    for (const recall of [[], "fast", 3, null]) {
      const { settings, warnings } = resolveSettings({ recall }, {});
      expect(settings.recall).toEqual(DEFAULT_SETTINGS.recall);
      expect(warnings.join("\n")).toMatch(/contextLedger\.recall: expected an object/);
    }
  });

  it("numeric environment values are decimal only", () => {
    for (const value of ["0x10", "0b11", "1e3", "1e-9", " 8", "", "+8", "8.0"]) {
      const { settings, warnings } = resolveSettings(
        {},
        { PI_CONTEXT_LEDGER_GREP_MAX_RESULTS: value, PI_CONTEXT_LEDGER_CAP_PERCENT: value },
      );
      expect(settings.recall.grepMaxResults, value).toBe(DEFAULT_SETTINGS.recall.grepMaxResults);
      expect(
        warnings.some((w) => w.startsWith("PI_CONTEXT_LEDGER_GREP_MAX_RESULTS")),
        value,
      ).toBe(true);
    }
    expect(resolveSettings({}, { PI_CONTEXT_LEDGER_GREP_MAX_RESULTS: "16" }).settings.recall.grepMaxResults).toBe(16);
    expect(resolveSettings({}, { PI_CONTEXT_LEDGER_CAP_PERCENT: "12.5" }).settings.checkpoint.capPercent).toBe(12.5);
  });

  it("a warning echoes a huge or hostile value only as a bounded, escaped prefix", () => {
    const { warnings } = resolveSettings(
      { strategy: `\u001b[2J${"x".repeat(1_000_000)}` },
      { PI_CONTEXT_LEDGER_STRATEGY: `\u009b${"y".repeat(100_000)}` },
    );
    expect(warnings).toHaveLength(2);
    for (const w of warnings) {
      expect(w.length).toBeLessThan(300);
      expect(w).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    }
  });
});

describe("planned settings", () => {
  it("defaults: 120 s planner deadline and a 4,096-token output cap", () => {
    const { settings } = resolveSettings(undefined, {});
    expect(settings.planned).toMatchObject({
      retainRatio: 0.5,
      minRetainedTokens: 8_000,
      minSavedTokens: 2_048,
      timeoutMs: 120_000,
      maxOutputTokens: 4_096,
      speculation: false,
      speculationRatio: 0.7,
    });
  });

  it("reads every planned key from the global file", () => {
    const { settings, warnings } = resolveSettings(
      {
        plannerModel: "openrouter/anthropic/claude-x",
        planned: {
          planner: "model",
          retainRatio: 0.4,
          minRetainedTokens: 100,
          minSavedTokens: 10,
          timeoutMs: 5_000,
          maxOutputTokens: 512,
          speculation: true,
          speculationRatio: 0.6,
        },
      },
      {},
    );
    expect(warnings).toEqual([]);
    expect(settings.plannerModel).toBe("openrouter/anthropic/claude-x");
    expect(settings.planned).toEqual({
      planner: "model",
      retainRatio: 0.4,
      minRetainedTokens: 100,
      minSavedTokens: 10,
      timeoutMs: 5_000,
      maxOutputTokens: 512,
      speculation: true,
      speculationRatio: 0.6,
    });
  });

  it("has an environment override for every planned setting and for plannerModel", () => {
    const env = {
      PI_CONTEXT_LEDGER_PLANNER_MODEL: "openrouter/meta/llama-3.1:free",
      PI_CONTEXT_LEDGER_PLANNED_PLANNER: "heuristic",
      PI_CONTEXT_LEDGER_PLANNED_RETAIN_RATIO: "0.3",
      PI_CONTEXT_LEDGER_PLANNED_MIN_RETAINED_TOKENS: "1000",
      PI_CONTEXT_LEDGER_PLANNED_MIN_SAVED_TOKENS: "200",
      PI_CONTEXT_LEDGER_PLANNED_TIMEOUT_MS: "30000",
      PI_CONTEXT_LEDGER_PLANNED_MAX_OUTPUT_TOKENS: "2048",
      PI_CONTEXT_LEDGER_PLANNED_SPECULATION: "1",
      PI_CONTEXT_LEDGER_PLANNED_SPECULATION_RATIO: "0.8",
    };
    const { settings, warnings } = resolveSettings(
      { plannerModel: "anthropic/claude", planned: { planner: "model", timeoutMs: 5_000 } },
      env,
    );
    expect(warnings).toEqual([]);
    expect(settings.plannerModel).toBe("openrouter/meta/llama-3.1:free");
    expect(settings.planned).toEqual({
      planner: "heuristic",
      retainRatio: 0.3,
      minRetainedTokens: 1_000,
      minSavedTokens: 200,
      timeoutMs: 30_000,
      maxOutputTokens: 2_048,
      speculation: true,
      speculationRatio: 0.8,
    });
  });

  it("a bad planned value warns, naming the key, and keeps the default", () => {
    const { settings, warnings } = resolveSettings(
      { plannerModel: "no-slash", planned: { timeoutMs: -1, maxOutputTokens: 1.5 } },
      {
        PI_CONTEXT_LEDGER_PLANNED_TIMEOUT_MS: "soon",
        PI_CONTEXT_LEDGER_PLANNED_MIN_SAVED_TOKENS: "",
        PI_CONTEXT_LEDGER_PLANNER_MODEL: "/x",
      },
    );
    expect(settings.plannerModel).toBeUndefined();
    expect(settings.planned.timeoutMs).toBe(120_000);
    expect(settings.planned.maxOutputTokens).toBe(4_096);
    expect(settings.planned.minSavedTokens).toBe(2_048);
    const text = warnings.join("\n");
    for (const name of [
      "contextLedger.plannerModel",
      "contextLedger.planned.timeoutMs",
      "contextLedger.planned.maxOutputTokens",
      "PI_CONTEXT_LEDGER_PLANNED_TIMEOUT_MS",
      "PI_CONTEXT_LEDGER_PLANNED_MIN_SAVED_TOKENS",
      "PI_CONTEXT_LEDGER_PLANNER_MODEL",
    ]) {
      expect(text).toContain(name);
    }
  });
});
