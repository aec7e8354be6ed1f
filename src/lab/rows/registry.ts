// The rows the lab can compare, in table order: our strategies first, then the reference baselines.
import { toolResultClearing } from "../baselines/clearing.ts";
import { observationMasking } from "../baselines/masking.ts";
import { noCompaction } from "../baselines/none.ts";
import { opencodePrune } from "../baselines/prune.ts";
import { truncateOldest } from "../baselines/truncate.ts";
import { InputError } from "../errors.ts";
import type { RowFactory } from "../row.ts";
import { checkpointRow } from "./checkpoint.ts";
import { digestRow } from "./digest.ts";
import { foldNotice } from "./fold-notice.ts";
import { foldPolicy } from "./fold-policy.ts";
import { piNative } from "./native.ts";
import { plannedModelRow, plannedRow } from "./planned.ts";
import { preserveRow } from "./preserve.ts";

export interface RowEntry {
  id: string;
  factory?: RowFactory;
  /** Why a known row cannot run yet. */
  unavailable?: string;
}

/** Every row id, in display order. Strategies still being built carry `unavailable`. */
export const ROWS: readonly RowEntry[] = [
  { id: "checkpoint", factory: checkpointRow },
  { id: "digest", factory: (settings) => digestRow(settings) },
  { id: "planned", factory: plannedRow },
  { id: "planned-model", factory: plannedModelRow },
  { id: "preserve", factory: preserveRow },
  { id: "fold", factory: foldPolicy },
  { id: "fold-notice", factory: foldNotice },
  { id: "none", factory: noCompaction },
  { id: "truncate", factory: truncateOldest },
  { id: "masking", factory: observationMasking },
  { id: "clearing", factory: toolResultClearing },
  { id: "prune", factory: opencodePrune },
  { id: "native", factory: piNative },
];

/** Resolve `--strategies a,b` (default: every available row). Unknown ids throw; unavailable ones are reported. */
export function selectRows(spec: string | undefined): { factories: RowFactory[]; skipped: RowEntry[] } {
  const wanted = spec ? spec.split(",").map((s) => s.trim()).filter(Boolean) : ROWS.map((r) => r.id);
  const factories: RowFactory[] = [];
  const skipped: RowEntry[] = [];
  for (const id of wanted) {
    const row = ROWS.find((r) => r.id === id);
    if (!row) throw new InputError(`unknown strategy "${id}" (known: ${ROWS.map((r) => r.id).join(", ")})`);
    if (row.factory) factories.push(row.factory);
    else skipped.push(row);
  }
  return { factories, skipped };
}
