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
    expect(warnings.join("\n")).toMatch(/contextLedger\.strategy: invalid value "aggressive"/);
    expect(warnings.join("\n")).toMatch(/capPercent/);
  });

  it("PI_CONTEXT_LEDGER_* overrides the file, and a bad override warns", () => {
    expect(resolveSettings({ strategy: "native" }, { PI_CONTEXT_LEDGER_STRATEGY: "checkpoint" }).settings.strategy).toBe("checkpoint");
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
    writeFileSync(join(root, "project", ".pi", "settings.json"), JSON.stringify({ contextLedger: { strategy: "checkpoint", recall: { lookupModel: "evil/exfil" } } }));
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
  it("keeps shape and short identifiers but never transcript text", () => {
    const redacted = redactText({ kind: "fold", request: { target: "a1b2c3d4", summary: "the secret plan to refactor auth" }, plan: { content: ["x".repeat(500)] } });
    expect(JSON.stringify(redacted)).not.toContain("secret");
    expect(redacted).toEqual({ kind: "fold", request: { target: "a1b2c3d4", summary: "[text 32 chars]" }, plan: { content: ["[text 500 chars]"] } });
  });
});

describe("recall settings", () => {
  it("reads the optional recall limits and their environment overrides", () => {
    const { settings, warnings } = resolveSettings(
      { recall: { lookupAttempts: 2, listPageSize: 10, lookupAnswerChars: -1 } },
      { PI_CONTEXT_LEDGER_GREP_MAX_RESULTS: "3", PI_CONTEXT_LEDGER_LOOKUP_MODEL: "anthropic/claude" },
    );
    expect(settings.recall).toMatchObject({ lookupAttempts: 2, listPageSize: 10, grepMaxResults: 3, lookupModel: "anthropic/claude" });
    expect(settings.recall.lookupAnswerChars).toBeUndefined();
    expect(warnings.join()).toMatch(/lookupAnswerChars/);
  });

  it("reads the budget notice switch and share, with their environment overrides", () => {
    expect(DEFAULT_SETTINGS.budgetNotice).toEqual({ enabled: true, share: 0.8 });
    const file = resolveSettings({ budgetNotice: { enabled: false, share: 0.6 } }, {});
    expect(file.settings.budgetNotice).toEqual({ enabled: false, share: 0.6 });
    const env = resolveSettings({ budgetNotice: { enabled: false } }, { PI_CONTEXT_LEDGER_BUDGET_NOTICE: "1", PI_CONTEXT_LEDGER_BUDGET_NOTICE_SHARE: "0.5" });
    expect(env.settings.budgetNotice).toEqual({ enabled: true, share: 0.5 });
    const bad = resolveSettings({ budgetNotice: { share: 1.5 } }, { PI_CONTEXT_LEDGER_BUDGET_NOTICE_SHARE: "lots" });
    expect(bad.settings.budgetNotice.share).toBe(0.8);
    expect(bad.warnings.join("\n")).toMatch(/budgetNotice\.share: invalid value 1\.5/);
    expect(bad.warnings.join("\n")).toMatch(/PI_CONTEXT_LEDGER_BUDGET_NOTICE_SHARE/);
  });
});
