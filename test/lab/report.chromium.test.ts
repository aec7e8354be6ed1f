// The HTML report in real headless Chromium, from a file with no network: every chart draws, with no script
// errors; the recommendation answers first; every scatter point carries its own label, inside the plot and
// clear of the others; every column is explained where the table is; prices and settings are shown; each
// section is captured as a screenshot under test-output/ (a CI artifact). Without Chromium the test skips.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_PRICES } from "../../src/lab/metrics.ts";
import { recommend } from "../../src/lab/recommend.ts";
import { renderReport } from "../../src/lab/report/html.ts";
import { replaySession } from "../../src/lab/replay.ts";
import { type LabResult, totalsOf } from "../../src/lab/results.ts";
import { defaultSettings } from "../../src/lab/row.ts";
import { selectRows } from "../../src/lab/rows/registry.ts";
import { generateSession } from "../../src/lab/sample/generate.ts";
import { COLUMNS } from "../../src/lab/table.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { CHROMIUM, CHROMIUM_FLAGS, openPage, type Page } from "./chromium.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
if (!CHROMIUM)
  console.warn(
    "report.chromium.test: SKIPPED, no Chromium found (install the Debian package `chromium`; .ci/run does)",
  );

async function buildResult(): Promise<LabResult> {
  const settings = defaultSettings(64_000);
  const sessions = [];
  for (const [i, tasks] of [6, 24].entries()) {
    const s = generateSession(11, i, { tasks });
    const cwd = (s.entries[0] as { cwd?: string }).cwd ?? "";
    const result = await replaySession(
      { name: `sample-${i}`, cwd, entries: s.entries.slice(1) as SessionEntry[] },
      { settings, rows: selectRows(undefined).factories, prices: DEFAULT_PRICES },
    );
    result.recommendation = recommend(totalsOf([result]));
    sessions.push(result);
  }
  const totals = totalsOf(sessions);
  return {
    v: 1,
    tool: "pi-context-ledger lab",
    input: { kind: "sample", seed: 11 },
    settings,
    prices: DEFAULT_PRICES,
    unavailable: [],
    sessions,
    totals,
    recommendation: recommend(totals),
  };
}

function writeHtml(html: string, name: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "lab-report-")), name);
  writeFileSync(file, html);
  return pathToFileURL(file).href;
}

interface Box {
  text: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

describe.skipIf(!CHROMIUM)("lab report in headless Chromium", () => {
  let result: LabResult;
  let html: string;
  let page: Page;
  const out = join(repo, "test-output");

  beforeAll(async () => {
    result = await buildResult();
    html = await renderReport(result);
    page = await openPage(writeHtml(html, "report.html"), `document.documentElement.getAttribute("data-rendered")`);
    mkdirSync(out, { recursive: true });
  }, 120_000);
  afterAll(async () => page?.close());

  it("is one file that loads nothing from the network, and draws every chart with no script error", async () => {
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/cdn/i);
    const longest = result.sessions.reduce((a, b) => (b.requests > a.requests ? b : a));
    const charts = await page.evaluate<string>(`document.documentElement.getAttribute("data-charts")`);
    expect(charts.split(",")).toEqual(["scores", "needed", "cache", ...longest.rows.map((_, i) => `context-${i}`)]);
    expect(await page.evaluate<string>(`document.documentElement.getAttribute("data-rendered")`)).toBe(
      String(3 + longest.rows.length),
    );
    expect(await page.evaluate<string | null>(`document.documentElement.getAttribute("data-errors")`)).toBeNull();
  });

  it("answers first: the recommendation with its reason, weights and scores", async () => {
    const answer = await page.evaluate<string>(`document.getElementById("answer").textContent`);
    expect(answer).toBe(result.recommendation!.lines[0]);
    expect(answer).toMatch(/^Use .+: "strategy": "[a-z]+"/);
    const first = await page.evaluate<string>(`document.querySelector("section").id`);
    expect(first).toBe("recommendation");
    const why = await page.evaluate<string>(`document.querySelector("#recommendation .why").textContent`);
    expect(why).toMatch(/Why: quality \d+%, set by (the working set|needed later): it showed \d+% of/);
    expect(await page.evaluate<string>(`document.getElementById("recommendation").textContent`)).toMatch(
      /Weights: quality 70%, cost 30%\. Change them with --weights/,
    );
  });

  it("labels every scatter point directly, inside the plot, with no two labels overlapping", async () => {
    for (const [id, rows] of [
      ["chart-needed", result.totals.filter((t) => t.neededLater.needed > 0)],
      ["chart-cache", result.totals],
    ] as const) {
      const boxes = JSON.parse(
        await page.evaluate<string>(`document.getElementById("${id}").getAttribute("data-labels")`),
      ) as Box[];
      const area = JSON.parse(
        await page.evaluate<string>(`document.getElementById("${id}").getAttribute("data-area")`),
      ) as { left: number; top: number; right: number; bottom: number };
      expect(boxes.map((b) => b.text).sort()).toEqual(rows.map((r) => r.info.label).sort());
      for (const b of boxes) {
        expect(b.x).toBeGreaterThanOrEqual(area.left - 1);
        expect(b.x + b.w).toBeLessThanOrEqual(area.right + 1);
        expect(b.y).toBeGreaterThanOrEqual(area.top - 1);
        expect(b.y + b.h).toBeLessThanOrEqual(area.bottom + 1);
      }
      for (let i = 0; i < boxes.length; i++)
        for (let j = i + 1; j < boxes.length; j++) {
          const [a, b] = [boxes[i], boxes[j]];
          const overlap = a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
          expect(overlap, `${a.text} overlaps ${b.text} in ${id}`).toBe(false);
        }
    }
  });

  it("fits the axes to the data: the cache axis does not start at zero when every value is high", async () => {
    const min = await page.evaluate<number>(`Chart.getChart(document.getElementById("chart-cache")).scales.y.min`);
    const lowest = Math.min(...result.totals.map((t) => t.cache.reuse * 100));
    expect(min).toBeGreaterThan(0);
    expect(min).toBeLessThanOrEqual(lowest);
  });

  it("explains every column where the table is, names every context panel, and shows prices, settings and how to run it", async () => {
    const headers = await page.evaluate<string[]>(
      `[...document.querySelectorAll("#results table.results th")].map((th) => th.textContent)`,
    );
    expect(headers).toEqual(COLUMNS.map((c) => c.title));
    const terms = await page.evaluate<string[]>(
      `[...document.querySelectorAll("#results dl.columns dt")].map((dt) => dt.textContent)`,
    );
    expect(terms).toEqual(COLUMNS.slice(1).map((c) => c.title));
    const panels = await page.evaluate<string[]>(
      `[...document.querySelectorAll("#context-panels h4")].map((h) => h.textContent)`,
    );
    const longest = result.sessions.reduce((a, b) => (b.requests > a.requests ? b : a));
    expect(panels.map((p) => p.split(" peak ")[0].trim())).toEqual(longest.rows.map((r) => r.info.label));
    const settings = await page.evaluate<string>(`document.getElementById("settings").textContent`);
    expect(settings).toContain("$3 per million");
    expect(settings).toContain("0.1× / 1.25× the input price");
    expect(settings).toContain("64000 tokens");
    const run = await page.evaluate<string>(`document.getElementById("run").textContent`);
    expect(run).toContain("npx pi-context-ledger lab --sessions");
    // One subtitle, saying the session count once.
    const sub = await page.evaluate<string>(`document.querySelector(".sub").textContent`);
    expect(sub.match(/sessions?\b/g)).toHaveLength(1);
  });

  it("takes a screenshot of each section", async () => {
    const sections = await page.evaluate<{ id: string; x: number; y: number; width: number; height: number }[]>(
      `[...document.querySelectorAll("section")].map((s) => { const r = s.getBoundingClientRect(); return { id: s.id, x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height }; })`,
    );
    expect(sections.map((s) => s.id)).toEqual([
      "recommendation",
      "results",
      "tradeoff",
      "sessions",
      "settings",
      "run",
      "rows",
    ]);
    for (const s of sections) {
      const png = await page.screenshot({ x: s.x, y: s.y, width: s.width, height: s.height });
      expect(png.subarray(1, 4).toString()).toBe("PNG");
      expect(png.length).toBeGreaterThan(5_000);
      writeFileSync(join(out, `lab-report-${s.id}.png`), png);
    }
  });

  it("a script error on the page is caught by the check", async () => {
    const broken = html.replace("var data = JSON.parse", "undefinedFunctionCall(); var data = JSON.parse");
    expect(broken).toContain("undefinedFunctionCall");
    const profile = mkdtempSync(join(tmpdir(), "lab-chromium-"));
    const dom = spawnSync(
      CHROMIUM!,
      [
        ...CHROMIUM_FLAGS,
        `--user-data-dir=${profile}`,
        "--virtual-time-budget=10000",
        "--dump-dom",
        writeHtml(broken, "broken.html"),
      ],
      { encoding: "utf8", timeout: 90_000 },
    );
    const root = /<html[^>]*>/.exec(dom.stdout)?.[0] ?? "";
    expect(root).toContain('data-errors="1"');
    expect(root).not.toContain("data-rendered");
  });
});
