// Settings of preserve's checkpoint requests: global `contextLedger.preserve` keys and PI_CONTEXT_LEDGER_PRESERVE_*
// overrides; bad values warn and keep the default.
import { describe, expect, it } from "vitest";
import { resolveSettings } from "../../../src/host/settings.ts";
import { preserveAppliesTo } from "../../../src/strategies/preserve/settings.ts";

describe("preserve settings", () => {
  it("defaults: the live request decides model, reasoning and cache retention; every model", () => {
    const { settings, warnings } = resolveSettings(undefined, {});
    expect(settings.preserve).toEqual({ models: [] });
    expect(warnings).toEqual([]);
  });

  it("reads summaryModel, reasoningEffort, cacheRetention and models from the global key", () => {
    const { settings, warnings } = resolveSettings(
      {
        preserve: {
          summaryModel: "anthropic/claude-haiku-4-5",
          reasoningEffort: "low",
          cacheRetention: "long",
          models: ["anthropic/claude-sonnet-4-5"],
        },
      },
      {},
    );
    expect(warnings).toEqual([]);
    expect(settings.preserve).toEqual({
      summaryModel: "anthropic/claude-haiku-4-5",
      reasoningEffort: "low",
      cacheRetention: "long",
      models: ["anthropic/claude-sonnet-4-5"],
    });
  });

  it("environment overrides win, and bad values warn and keep the default", () => {
    const { settings, warnings } = resolveSettings(
      { preserve: { reasoningEffort: "lots", cacheRetention: "forever", models: "all" } },
      {
        PI_CONTEXT_LEDGER_PRESERVE_SUMMARY_MODEL: "openai/gpt-5-mini",
        PI_CONTEXT_LEDGER_PRESERVE_CACHE_RETENTION: "none",
        PI_CONTEXT_LEDGER_PRESERVE_MODELS: "faux/faux-1, openai/gpt-5",
        PI_CONTEXT_LEDGER_PRESERVE_REASONING_EFFORT: "extreme",
      },
    );
    expect(settings.preserve).toEqual({
      summaryModel: "openai/gpt-5-mini",
      cacheRetention: "none",
      models: ["faux/faux-1", "openai/gpt-5"],
    });
    const text = warnings.join("\n");
    expect(text).toMatch(/contextLedger\.preserve\.reasoningEffort: invalid value "lots"/);
    expect(text).toMatch(/contextLedger\.preserve\.cacheRetention: invalid value "forever"/);
    expect(text).toMatch(/contextLedger\.preserve\.models: invalid value "all"/);
    expect(text).toMatch(/PI_CONTEXT_LEDGER_PRESERVE_REASONING_EFFORT: expected off, minimal/);
  });

  it("the allowlist limits preserve to the models it names", () => {
    expect(preserveAppliesTo({ models: [] }, { provider: "faux", id: "faux-1" })).toBe(true);
    expect(preserveAppliesTo({ models: ["faux/faux-1"] }, { provider: "faux", id: "faux-1" })).toBe(true);
    expect(preserveAppliesTo({ models: ["faux/faux-2"] }, { provider: "faux", id: "faux-1" })).toBe(false);
    expect(preserveAppliesTo({ models: ["faux/faux-2"] }, undefined)).toBe(false);
  });
});
