// The recommended setting as a user acts on it: the file Pi reads, the JSON under `contextLedger`, and `--apply`,
// which merges it after asking and keeps every other key.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applySetting, checkApply, mergeSetting, pasteText, settingsFile } from "../../src/lab/apply-setting.ts";
import { SETTABLE } from "../../src/lab/rows/registry.ts";
import { readingSession, sessionJsonl } from "./fixtures.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const tmp = () => mkdtempSync(join(tmpdir(), "lab-apply-"));

describe("the settings file and the JSON to merge", () => {
  it("is $PI_CODING_AGENT_DIR/settings.json, else ~/.pi/agent/settings.json", () => {
    expect(settingsFile({ PI_CODING_AGENT_DIR: "/x/agent" })).toBe("/x/agent/settings.json");
    expect(settingsFile({ HOME: "/home/u" })).toMatch(/\.pi\/agent\/settings\.json$/);
    expect(JSON.parse(pasteText({ strategy: "digest" }))).toEqual({ contextLedger: { strategy: "digest" } });
  });

  it("merged over any other row's setting, a row's setting selects that row and nothing of the other's", () => {
    // A user who once set digest's working set and then applies plain digest must get plain digest: each value
    // states every option that tells the rows of one strategy apart.
    for (const [id, { value }] of Object.entries(SETTABLE)) {
      for (const [otherId, other] of Object.entries(SETTABLE)) {
        const merged = JSON.parse(mergeSetting(mergeSetting(undefined, other.value), value)).contextLedger;
        if (merged.strategy !== other.value.strategy) continue;
        expect(merged, `${id} over ${otherId}`).toEqual(value);
      }
    }
  });

  it("merging keeps every other key, of the file and of contextLedger, and sets the value", () => {
    const jsonObject = fc.dictionary(
      fc.string({ maxLength: 8 }).filter((k) => k !== "contextLedger" && k !== "__proto__"),
      fc.jsonValue(),
      { maxKeys: 6 },
    );
    fc.assert(
      fc.property(
        jsonObject,
        jsonObject,
        fc.constantFrom({ strategy: "digest" }, { strategy: "planned", planned: { planner: "heuristic" } }),
        (root, ledger, value) => {
          const own = Object.fromEntries(Object.entries(ledger).filter(([k]) => k !== "strategy" && k !== "planned"));
          const merged = JSON.parse(mergeSetting(JSON.stringify({ ...root, contextLedger: own }), value)) as Record<
            string,
            unknown
          >;
          expect(merged).toEqual({
            ...JSON.parse(JSON.stringify(root)),
            contextLedger: { ...JSON.parse(JSON.stringify(own)), ...value },
          });
        },
      ),
    );
    // A nested object is merged, not replaced.
    expect(
      JSON.parse(
        mergeSetting(`{"contextLedger":{"planned":{"timeoutMs":5000}}}`, {
          strategy: "planned",
          planned: { planner: "heuristic" },
        }),
      ),
    ).toEqual({
      contextLedger: { strategy: "planned", planned: { timeoutMs: 5000, planner: "heuristic" } },
    });
    expect(() => mergeSetting("{ not json", { strategy: "digest" })).toThrow(/not valid JSON/);
    expect(() => mergeSetting("[1]", { strategy: "digest" })).toThrow(/does not hold a JSON object/);
  });

  it("--apply asks first: no changes the file, yes merges it; a linked settings file is written where it points", async () => {
    const dir = tmp();
    const real = join(dir, "dotfiles-settings.json");
    writeFileSync(real, `{"theme":"dark","contextLedger":{"recallTools":false}}`);
    const file = join(dir, "settings.json");
    symlinkSync(real, file);
    expect(await applySetting({ strategy: "digest" }, file, false, async () => "n")).toMatch(/^Not applied/);
    expect(readFileSync(real, "utf8")).toBe(`{"theme":"dark","contextLedger":{"recallTools":false}}`);
    let asked = "";
    expect(await applySetting({ strategy: "digest" }, file, false, async (q) => ((asked = q), "y"))).toMatch(
      /^Applied/,
    );
    expect(asked).toContain(file);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      theme: "dark",
      contextLedger: { recallTools: false, strategy: "digest" },
    });
    expect(JSON.parse(readFileSync(real, "utf8"))).toEqual({
      theme: "dark",
      contextLedger: { recallTools: false, strategy: "digest" },
    });
  });

  it("without a terminal, --apply needs --yes (checked before the replay)", () => {
    expect(() => checkApply(true, false, { isTTY: false })).toThrow(/add --yes/);
    expect(() => checkApply(true, true, { isTTY: false })).not.toThrow();
    expect(() => checkApply(true, false, { isTTY: true })).not.toThrow();
  });
});

describe("the lab command", () => {
  const run = (args: string[], agentDir: string) =>
    spawnSync(process.execPath, [join(repo, "src/lab/bin.ts"), "lab", ...args], {
      cwd: agentDir,
      encoding: "utf8",
      env: { ...process.env, PI_CODING_AGENT_DIR: agentDir },
      timeout: 120_000,
    });

  it("prints the file and the JSON to paste; --apply --yes merges it; --apply without a terminal or --yes is refused before the replay", () => {
    const agentDir = tmp();
    mkdirSync(join(agentDir, "sessions"));
    writeFileSync(join(agentDir, "sessions", "mine.jsonl"), sessionJsonl(readingSession("/p", 3).entries, "/p"));
    writeFileSync(join(agentDir, "settings.json"), `{"defaultModel":"x/y"}`);
    const refused = run(["--sessions", "--no-report", "--quiet", "--apply"], agentDir);
    expect(refused.status).toBe(2);
    expect(refused.stdout).toBe("");
    expect(refused.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^lab: --apply asks .* add --yes/)]);
    const r = run(
      ["--sessions", "--no-report", "--quiet", "--strategies", "checkpoint,digest", "--apply", "--yes"],
      agentDir,
    );
    expect(r.status, r.stderr).toBe(0);
    const file = join(agentDir, "settings.json");
    // Asked to apply, it does not suggest running again with --apply.
    expect(r.stdout).toContain(`To use it, merge this into ${file} (keep your other settings):`);
    expect(r.stdout).not.toContain("run the lab again with --apply");
    expect(r.stdout).toMatch(/"contextLedger": \{\s+"strategy": "(checkpoint|digest)"\s+\}/);
    const merged = JSON.parse(readFileSync(file, "utf8")) as {
      defaultModel: string;
      contextLedger: { strategy: string };
    };
    expect(merged.defaultModel).toBe("x/y");
    expect(["checkpoint", "digest"]).toContain(merged.contextLedger.strategy);
    expect(r.stdout).toContain(`Applied: ${file} now sets`);
  });

  it("--apply on the generated sample is refused before the replay: it would set what no session of the user's chose", () => {
    const agentDir = tmp();
    writeFileSync(join(agentDir, "settings.json"), `{"defaultModel":"x/y"}`);
    const r = run(["--no-report", "--quiet", "--apply", "--yes"], agentDir);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^lab: --apply .*your own sessions/)]);
    expect(readFileSync(join(agentDir, "settings.json"), "utf8")).toBe(`{"defaultModel":"x/y"}`);
  });

  it("on the generated sample, the paste line points to the user's own sessions, not to an --apply it would refuse", () => {
    const agentDir = tmp();
    const r = run(["--no-report", "--quiet", "--strategies", "checkpoint,digest"], agentDir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).not.toContain("run the lab again with --apply");
    expect(r.stdout).toContain(
      `To use it, merge this into ${join(agentDir, "settings.json")} (keep your other settings), or measure your own sessions with lab --sessions --apply:`,
    );
  });
});
