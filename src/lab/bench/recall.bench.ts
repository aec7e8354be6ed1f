// Recall cost: context_grep over a generated 50k-entry branch against the real `grep` on the same rendered text,
// written once to a temp file, with the matching flags (`-F` for exact text, `-E` for a regex, `-i` when case is
// ignored, which is context_grep's default). Both sides scan the whole transcript: the patterns are absent or
// rare, so the first page is also the last. Two more rows time one call of patterns built to be slow.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { grepTranscript, type GrepParams } from "../../recall/search.ts";
import { recallLimits } from "../../recall/settings.ts";
import { buildTranscript, syncTranscript, type TranscriptIndex } from "../../recall/transcript.ts";
import { generatedLedger, timeIt } from "./projection.bench.ts";
import type { BenchRow } from "./types.ts";

const SIZE = 50_000;

/** Median wall time of running `grep` on the file, process start included (as an agent's shell call would). */
function timeGrep(args: readonly string[], file: string, runs = 15): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const r = spawnSync("grep", [...args, file], { encoding: "utf8", maxBuffer: 1 << 28 });
    samples.push(performance.now() - t);
    if (r.status !== 0 && r.status !== 1) throw new Error(`grep failed: ${r.stderr}`);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

/** A fragment of the last entries that occurs on at most `max` lines: a rare literal near the end. */
function rareFragment(index: TranscriptIndex, max = 8): string {
  for (let o = index.entries.length - 1; o >= 0; o--) {
    for (const line of index.entries[o].text.split("\n").reverse()) {
      const fragment = line.trim().slice(0, 24);
      if (fragment.length < 12 || fragment.startsWith("ENTRY ") || fragment.startsWith("[")) continue;
      let count = 0;
      for (const e of index.entries) {
        for (let at = e.text.indexOf(fragment); at >= 0 && count <= max; at = e.text.indexOf(fragment, at + 1)) count++;
        if (count > max) break;
      }
      if (count <= max) return fragment;
    }
  }
  return "no-rare-fragment";
}

export async function benchRecall(): Promise<BenchRow[]> {
  const ledger = generatedLedger(SIZE);
  const rows: BenchRow[] = [];
  let index: TranscriptIndex | undefined;
  const build = timeIt(() => (index = buildTranscript(ledger)), 1_000, 3);
  index = index!;
  rows.push({
    suite: "recall",
    name: `index build, ${SIZE} entries (${(index.chars / 1e6).toFixed(1)}M chars)`,
    value: build,
    unit: "ms",
  });

  const dir = mkdtempSync(join(tmpdir(), "ctx-ledger-recall-bench-"));
  try {
    const file = join(dir, "transcript.txt");
    writeFileSync(file, index.entries.map((e) => e.text).join("\n"));
    // Default limits and no time budget: the figure is the scan itself, which must finish in one page.
    const limits = recallLimits({});
    const ours = (params: GrepParams) => {
      const outcome = grepTranscript(index!, params, limits);
      if (!outcome.ok) throw new Error(outcome.error);
      if (outcome.details.nextCursor) throw new Error(`bench pattern ${params.pattern} did not finish in one page`);
      return outcome;
    };
    const rare = rareFragment(index);
    const cases: { name: string; params: GrepParams; grep: string[]; target?: string }[] = [
      {
        name: "literal, absent",
        params: { pattern: "zq-no-such-token-81", literal: true },
        grep: ["-F", "-i", "-n"],
        target: "≤ 3x",
      },
      { name: "literal, rare", params: { pattern: rare, literal: true }, grep: ["-F", "-i", "-n"], target: "≤ 3x" },
      {
        name: "literal, rare, case-sensitive",
        params: { pattern: rare, literal: true, caseSensitive: true },
        grep: ["-F", "-n"],
        target: "≤ 3x",
      },
      { name: "regex, absent", params: { pattern: "no-such-[0-9]+x" }, grep: ["-E", "-i", "-n"], target: "≤ 3x" },
      {
        name: "regex, absent, case-sensitive",
        params: { pattern: "no-such-[0-9]+x", caseSensitive: true },
        grep: ["-E", "-n"],
        target: "≤ 3x",
      },
      {
        name: "regex, alternation",
        params: { pattern: "(error|warning)+: zq[0-9]+" },
        grep: ["-E", "-i", "-n"],
        target: "≤ 3x",
      },
      {
        name: "regex, no literal to look for",
        params: { pattern: "[0-9]{3}-[0-9]{5}[a-f]\\b" },
        grep: ["-E", "-i", "-n"],
      },
    ];
    for (const c of cases) {
      const args = [...c.grep, c.params.pattern];
      const reference = timeGrep(args, file);
      const value = timeIt(() => ours(c.params), 1_000, 5);
      rows.push({
        suite: "recall",
        name: `context_grep ${c.name}, ${SIZE} entries`,
        value,
        unit: "ms",
        reference: `grep ${c.grep.join(" ")} on the same rendered text (${(index.chars / 1e6).toFixed(1)}M chars), process start included`,
        ratio: value / reference,
        ...(c.target ? { target: c.target } : {}),
      });
    }
    // Patterns built to be slow: the one that kept V8's backtracking engine busy for tens of seconds, and one
    // whose counting makes RE2's DFA give way to its slower NFA. One call each, default limits, no time budget.
    const slow: { name: string; params: GrepParams }[] = [
      {
        name: `45 × ".?", 45 × ".", "Z"`,
        params: { pattern: `${".?".repeat(45)}${".".repeat(45)}Z`, caseSensitive: true },
      },
      { name: "e.{450}[qv]", params: { pattern: "e.{450}[qv]" } },
    ];
    for (const c of slow) {
      let first: ReturnType<typeof grepTranscript> | undefined;
      const value = timeIt(() => (first = grepTranscript(index!, c.params, limits)), 1_000, 3);
      if (!first?.ok) throw new Error(`bench pattern ${c.params.pattern} was refused`);
      const d = first.details;
      const how = d.scanCapped ? "stopped by the work cap" : d.nextCursor ? "page full" : "whole branch";
      rows.push({
        suite: "recall",
        name: `context_grep ${c.name}, one call (${how} after ${(d.scannedChars / 1e6).toFixed(1)}M chars)`,
        value,
        unit: "ms",
      });
    }
    // Incremental sync: a new leaf costs one render, not a rebuild. Alternate between the last two leaves so
    // every run appends (or drops) exactly one entry.
    const byId = new Map(ledger.map((e) => [e.id, e]));
    const live = buildTranscript(ledger.slice(0, SIZE - 1));
    let flip = false;
    const sync = timeIt(() => {
      flip = !flip;
      syncTranscript(live, ledger[flip ? SIZE - 1 : SIZE - 2].id, (id) => byId.get(id));
    });
    rows.push({
      suite: "recall",
      name: `index sync per new entry, ${SIZE} entries`,
      value: sync,
      unit: "ms",
      reference: "full index build, same branch",
      ratio: sync / build,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
