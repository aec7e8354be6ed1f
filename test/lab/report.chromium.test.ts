// The HTML report in real headless Chromium: the page must draw every chart (canvas with ink and data
// points, recorded by the page in data-rendered) with no script errors, from a file with no network.
// A screenshot is kept under test-output/ as a CI artifact. Without Chromium the test skips and says so.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { DEFAULT_PRICES } from "../../src/lab/metrics.ts";
import { renderReport } from "../../src/lab/report/html.ts";
import { replaySession } from "../../src/lab/replay.ts";
import { type LabResult, totalsOf } from "../../src/lab/results.ts";
import { defaultSettings } from "../../src/lab/row.ts";
import { selectRows } from "../../src/lab/rows/registry.ts";
import { generateSession } from "../../src/lab/sample/generate.ts";
import type { SessionEntry } from "../../src/log/entries.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find((p) => existsSync(p));
if (!CHROMIUM) console.warn("report.chromium.test: SKIPPED, no Chromium found (install the Debian package `chromium`; .ci/run does)");

function chromium(args: string[]) {
  const profile = mkdtempSync(join(tmpdir(), "lab-chromium-"));
  return spawnSync(
    CHROMIUM!,
    ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", `--user-data-dir=${profile}`, ...args],
    { encoding: "utf8", timeout: 90_000 },
  );
}

async function buildReport(): Promise<string> {
  const settings = defaultSettings(64_000);
  const sessions = [];
  for (const [i, tasks] of [6, 24].entries()) {
    const s = generateSession(11, i, { tasks });
    sessions.push(await replaySession({ name: `sample-${i}`, entries: s.entries.slice(1) as SessionEntry[] }, { settings, rows: selectRows(undefined).factories, prices: DEFAULT_PRICES }));
  }
  const result: LabResult = { v: 1, tool: "pi-context-ledger lab", input: { kind: "sample", seed: 11 }, settings, prices: DEFAULT_PRICES, unavailable: [], sessions, totals: totalsOf(sessions) };
  return renderReport(result);
}

describe.skipIf(!CHROMIUM)("lab report in headless Chromium", () => {
  it("draws all four charts with no script errors, and takes a screenshot", async () => {
    const html = await buildReport();
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/cdn/i);
    const dir = mkdtempSync(join(tmpdir(), "lab-report-"));
    const file = join(dir, "report.html");
    writeFileSync(file, html);
    const url = pathToFileURL(file).href;

    const dom = chromium(["--virtual-time-budget=10000", "--enable-logging=stderr", "--v=0", "--dump-dom", url]);
    expect(dom.status).toBe(0);
    const root = /<html[^>]*>/.exec(dom.stdout)?.[0] ?? "";
    expect(root).toContain('data-rendered="4"');
    expect(root).toContain('data-charts="retention,cache,context,kinds"');
    expect(root).not.toContain("data-errors");
    // Chromium logs page console errors and uncaught exceptions to stderr with the page's source.
    expect(dom.stderr).not.toMatch(/Uncaught|CONSOLE\(\d+\)\].*error/i);
    expect(dom.stdout).toContain("<canvas");

    const out = join(repo, "test-output");
    mkdirSync(out, { recursive: true });
    const shot = join(out, "lab-report.png");
    const screenshot = chromium(["--hide-scrollbars", "--window-size=1280,2400", "--virtual-time-budget=10000", `--screenshot=${shot}`, url]);
    expect(screenshot.status).toBe(0);
    expect(statSync(shot).size).toBeGreaterThan(20_000);
    expect(readFileSync(shot).subarray(1, 4).toString()).toBe("PNG");
  });

  it("a script error on the page is caught by the check", async () => {
    const html = (await buildReport()).replace("var data = JSON.parse", "undefinedFunctionCall(); var data = JSON.parse");
    expect(html).toContain("undefinedFunctionCall");
    const dir = mkdtempSync(join(tmpdir(), "lab-report-"));
    const file = join(dir, "broken.html");
    writeFileSync(file, html);
    const dom = chromium(["--virtual-time-budget=10000", "--dump-dom", pathToFileURL(file).href]);
    const root = /<html[^>]*>/.exec(dom.stdout)?.[0] ?? "";
    expect(root).toContain('data-errors="1"');
    expect(root).not.toContain("data-rendered");
  });
});
