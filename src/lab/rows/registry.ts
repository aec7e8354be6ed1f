// The rows the lab can compare: every row the strategy registry declares (`lab` in each strategy's definition), then
// the reference baselines, which are no strategy of ours. A strategy's row runs on the lab engine its definition
// names, and the engine calls the strategy's own code, so adding a strategy adds its rows here without a lab edit.
import { toolResultClearing } from "../baselines/clearing.ts";
import { observationMasking } from "../baselines/masking.ts";
import { noCompaction } from "../baselines/none.ts";
import { opencodePrune } from "../baselines/prune.ts";
import { truncateOldest } from "../baselines/truncate.ts";
import { InputError } from "../errors.ts";
import type { LabRowSpec, RowSetting } from "../row-spec.ts";
import { DEFAULT_STRATEGY, PLUGINS, type RegisteredStrategy } from "../../strategies/registry.ts";
import type { Row, RowFactory, RowInfo, SessionSettings } from "../row.ts";
import { boundaryRow } from "./boundary.ts";
import { chartSummarizer } from "./chart-compaction.ts";
import { compactionRow } from "./compaction-row.ts";
import { foldNotice } from "./fold-notice.ts";
import { foldPolicy } from "./fold-policy.ts";
import { piNative } from "./native.ts";

export interface RowEntry {
  id: string;
  factory?: RowFactory;
  /** Why a known row cannot run yet. */
  unavailable?: string;
}

/** The row of `spec`, on the engine it names. */
function strategyRow(strategy: RegisteredStrategy, spec: LabRowSpec): RowFactory {
  // A strategy's rows replay in step: its memos hold what its latest compaction read, for all of its rows.
  return Object.assign(engineRow(strategy, spec), { replaysWith: strategy.name });
}

function engineRow(strategy: RegisteredStrategy, spec: LabRowSpec): RowFactory {
  const info: RowInfo = { id: spec.id, label: spec.label, family: spec.family ?? "ours", note: spec.note };
  const replay = spec.replay;
  switch (replay.engine) {
    case "compaction":
      return (settings) => compactionRow(info, settings, chartSummarizer(strategy, replay, settings));
    case "boundary":
      return (settings) => boundaryRow(strategy, info, replay, settings);
    case "fold-policy":
      return (settings) => foldPolicy(settings, info);
    case "fold-notice":
      return (settings) => foldNotice(settings, info);
    case "pi-native":
      return (settings) => piNative(settings, info);
  }
}

/**
 * Table order: the default strategy first, then the other strategies a user can configure, by name, then the ones
 * the model drives (fold); a strategy's own rows keep the order it declares them in.
 */
function rank(strategy: RegisteredStrategy): [number, string] {
  return [strategy.name === DEFAULT_STRATEGY ? 0 : strategy.selectable === false ? 2 : 1, strategy.name];
}
const ordered = [...PLUGINS].sort((a, b) => {
  const [ra, na] = rank(a);
  const [rb, nb] = rank(b);
  return ra - rb || na.localeCompare(nb);
});
const declared = ordered.flatMap((strategy) =>
  (strategy.lab ?? []).map((spec) => ({ spec, entry: { id: spec.id, factory: strategyRow(strategy, spec) } })),
);

/**
 * The rows a user can set, by row id, each with the setting its strategy declares (in table order): the only rows the
 * lab recommends.
 */
export const SETTABLE: Readonly<Record<string, RowSetting>> = Object.fromEntries(
  declared.flatMap((d) => (d.spec.setting ? [[d.spec.id, d.spec.setting] as const] : [])),
);

/** Reference baselines: simulations of what other agents do, no strategy of ours. */
const BASELINES: readonly RowEntry[] = [
  { id: "none", factory: noCompaction },
  { id: "truncate", factory: truncateOldest },
  { id: "masking", factory: observationMasking },
  { id: "clearing", factory: toolResultClearing },
  { id: "prune", factory: opencodePrune },
];

/** Every row id, in display order: our strategies' rows, the baselines, then the strategies' reference rows (Pi's own). */
export const ROWS: readonly RowEntry[] = [
  ...declared.filter((d) => (d.spec.family ?? "ours") === "ours").map((d) => d.entry),
  ...BASELINES,
  ...declared.filter((d) => d.spec.family === "baseline").map((d) => d.entry),
];

/** Resolve `--strategies a,b` (default: every available row). Unknown ids throw; unavailable ones are reported. */
export function selectRows(spec: string | undefined): { factories: RowFactory[]; skipped: RowEntry[] } {
  const wanted = spec
    ? spec
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : ROWS.map((r) => r.id);
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

/** One row by id, for one session's settings (tests, and callers that replay a single row). */
export function labRow(id: string, settings: SessionSettings): Row {
  const [factory] = selectRows(id).factories;
  if (!factory) throw new InputError(`the row "${id}" cannot run yet`);
  return factory(settings);
}
