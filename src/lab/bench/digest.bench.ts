// The digest strategy's turn_end check (`digestDue`) with the working set on, on generated ledgers of 10k and 50k
// entries that already carry a digest, against Pi's own buildSessionProjection of the same ledger: the check looks at
// the raw steps since the last digest, so its cost follows new entries, not the session's length.
import { buildSessionProjection } from "@earendil-works/pi-coding-agent";
import type { SessionEntry } from "../../log/entries.ts";
import { LedgerType } from "../../strategies/catalog.ts";
import { digestDue } from "../../strategies/digest/plan.ts";
import { digestPolicy } from "../../strategies/digest/policy.ts";
import { generatedLedger, timeIt } from "./projection.bench.ts";
import type { BenchRow } from "./types.ts";

/** New entries since the last digest when the check runs: a batch in the making. */
const SINCE_DIGEST = 300;

/** `size` generated entries, with one digest fact covering all but the newest `SINCE_DIGEST` (a constant-size range). */
function digestedLedger(size: number): SessionEntry[] {
  const entries = generatedLedger(size);
  const cut = entries.length - SINCE_DIGEST;
  const through = entries[cut - 1];
  const digest = {
    type: "custom_message",
    customType: LedgerType.digest,
    content: "[context digest #1: for the benchmark]",
    display: true,
    details: {
      v: 1,
      strategy: "digest",
      checkpoint: 1,
      range: { afterId: null, throughId: through.id, keepDialogue: true },
    },
    id: "bench-digest",
    parentId: through.id,
    timestamp: through.timestamp,
  } as SessionEntry;
  const after = entries.slice(cut).map((e, i) => (i === 0 ? ({ ...e, parentId: digest.id } as SessionEntry) : e));
  return [...entries.slice(0, cut), digest, ...after];
}

export async function benchDigest(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const policy = digestPolicy(128_000, { workingSet: true });
  for (const size of [10_000, 50_000]) {
    const branch = digestedLedger(size);
    const leaf = branch[branch.length - 1].id;
    const step = branch.findLastIndex((e) => e.type === "message" && e.message.role === "assistant");
    const index = new Map(branch.map((e, i) => [e.id, i]));
    const pi = timeIt(() => buildSessionProjection(branch, leaf));
    const check = timeIt(() =>
      digestDue({
        branch,
        stepEntryId: branch[step].id,
        drafts: [],
        usageTokens: 50_000,
        policy,
        indexOf: (id) => index.get(id) ?? -1,
        cwd: "/work",
      }),
    );
    rows.push({
      suite: "digest",
      name: `turn_end check, working set on, ${size} entries, ${SINCE_DIGEST} since the last digest`,
      value: check,
      unit: "ms",
      reference: "Pi buildSessionProjection full rebuild, same ledger",
      ratio: check / pi,
      target: size === 10_000 ? "≤ 0.05x" : "≤ 0.01x",
    });
  }
  return rows;
}
