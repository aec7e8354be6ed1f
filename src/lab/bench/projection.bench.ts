// Projection cost: our full branch projection and the live ledger's per-request work (what the `context` hook
// does) against Pi's own buildSessionProjection, on generated ledgers of 1k, 10k and 50k entries, timed in one run.
import { performance } from "node:perf_hooks";
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import type { SessionEntry } from "../../log/entries.ts";
import { type FoldDetails, LedgerType, LEDGER_FACTS } from "../../strategies/catalog.ts";
import { LiveLedger } from "../../projection/live-ledger.ts";
import { projectBranch } from "../../projection/project.ts";
import { generateSession } from "../sample/generate.ts";
import type { BenchRow } from "./types.ts";

/**
 * A linear ledger of exactly `size` entries from the sample generator. With `foldEvery`, a fold fact follows
 * every that many entries and hides the 30 entries before it, so fold filtering has real work to do.
 */
export function generatedLedger(size: number, foldEvery = 0): SessionEntry[] {
  const entries: SessionEntry[] = [];
  let round = 0;
  const push = (entry: SessionEntry) => {
    const previous = entries[entries.length - 1];
    entries.push({ ...entry, parentId: previous ? previous.id : null } as SessionEntry);
  };
  while (entries.length < size) {
    const session = generateSession(7_000 + round, round, { tasks: 40 });
    for (const entry of session.entries) {
      if (entry.type === "session") continue;
      push({ ...entry, id: `${round}-${entry.id}` } as SessionEntry);
      if (foldEvery && entries.length % foldEvery === 0 && entries.length > 31 && entries.length < size) {
        const details: FoldDetails = {
          v: 1,
          range: { afterId: entries[entries.length - 31].id, throughId: entries[entries.length - 1].id },
          requestEntryId: entries[entries.length - 1].id,
          target: "bench",
        };
        push({
          type: "custom_message",
          customType: LedgerType.fold,
          content: "[folded for the benchmark]",
          display: true,
          details,
          id: `fold-${entries.length}`,
          parentId: null,
          timestamp: entry.timestamp,
        } as SessionEntry);
      }
      if (entries.length >= size) break;
    }
    round++;
  }
  return entries;
}

/** Median wall time of `fn` over enough repetitions to be stable (at least `minRuns`, about `budgetMs`). */
export function timeIt(fn: () => unknown, budgetMs = 400, minRuns = 5): number {
  const samples: number[] = [];
  const started = performance.now();
  while (samples.length < minRuns || (performance.now() - started < budgetMs && samples.length < 200)) {
    const t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

export async function benchProjection(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const size of [1_000, 10_000, 50_000]) {
    // Folds every 200 entries: the neutral case plus real fold filtering, as a session with the package has.
    const ledger = generatedLedger(size, 200);
    const leaf = ledger[ledger.length - 1].id;
    const pi = timeIt(() => buildSessionProjection(ledger, leaf));
    const ours = timeIt(() => projectBranch(ledger, LEDGER_FACTS));
    rows.push({ suite: "projection", name: `full rebuild, ${size} entries (Pi)`, value: pi, unit: "ms" });
    rows.push({
      suite: "projection",
      name: `full rebuild, ${size} entries (ours)`,
      value: ours,
      unit: "ms",
      reference: "Pi buildSessionProjection, same ledger",
      ratio: ours / pi,
      target: "≤ 1.5x",
    });
    // Per request: what the `context` hook does. The live ledger syncs the entry appended since the last request,
    // maps Pi's (cloned) request onto its view, and notes the view's token estimate. The ledger grows by one entry
    // per request; requests are prepared outside the timed section, in the shape the hook gets (no system
    // messages). They are not cloned (50k-entry clones would not fit in memory): the mapping never relies on
    // object identity, so this measures the same work.
    const extra = 25;
    const grown = generatedLedger(size + extra, 200);
    const byId = new Map(grown.map((e) => [e.id, e]));
    const conversation = (leaf: string) =>
      buildSessionProjection(grown, leaf).messages.filter((m) => m.role !== "system");
    const live = new LiveLedger(LEDGER_FACTS);
    live.sync(grown[size - 1].id, (id) => byId.get(id));
    live.requestContext(conversation(grown[size - 1].id), "conversation");
    const requests = Array.from({ length: extra }, (_, k) => conversation(grown[size + k].id));
    const samples: number[] = [];
    for (let k = 0; k < extra; k++) {
      const t0 = performance.now();
      live.sync(grown[size + k].id, (id) => byId.get(id));
      live.requestContext(requests[k], "conversation");
      live.estimateViewTokens();
      samples.push(performance.now() - t0);
    }
    samples.sort((a, b) => a - b);
    const incremental = samples[Math.floor(samples.length / 2)];
    rows.push({
      suite: "projection",
      name: `per-request update, ${size} entries (live ledger)`,
      value: incremental,
      unit: "ms",
      reference: "Pi buildSessionProjection full rebuild, same ledger",
      ratio: incremental / pi,
      ...(size === 10_000 ? { target: "≤ 0.05x" } : size === 50_000 ? { target: "≤ 0.01x" } : {}),
    });
  }
  // Dense ranges, the shape of a long session with a digest every few steps: 2,500 rules over 50k entries. A rebuild
  // that checks every rule per entry costs entries x rules here.
  const dense = generatedLedger(50_000, 20);
  const denseLeaf = dense[dense.length - 1].id;
  const piDense = timeIt(() => buildSessionProjection(dense, denseLeaf));
  const oursDense = timeIt(() => projectBranch(dense, LEDGER_FACTS));
  rows.push({
    suite: "projection",
    name: "full rebuild, 50000 entries, a range every 20 (Pi)",
    value: piDense,
    unit: "ms",
  });
  rows.push({
    suite: "projection",
    name: "full rebuild, 50000 entries, a range every 20 (ours)",
    value: oursDense,
    unit: "ms",
    reference: "Pi buildSessionProjection, same ledger",
    ratio: oursDense / piDense,
    target: "≤ 1.5x",
  });
  return rows;
}
