// How a strategy declares its rows in `pi-context-ledger lab`, and what the lab hands the strategy's own code while it
// replays one. Types only: a strategy imports them with `import type` (the lab's code never loads into a strategy), and
// this module imports nothing from the lab, so neither side closes a cycle through the other.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { ProjectedEntry } from "../projection/project.ts";
import type { CompactionInput, CompleteText, MessageFact, StrategyPlanner } from "../strategies/contract.ts";

/** What a strategy definition adds for the lab: the rows it shows, each replayed through the strategy's own code. */
export interface LabRows {
  lab?: readonly LabRowSpec[];
}

/** One lab row of a strategy. Its id is a `--strategies` value. */
export interface LabRowSpec {
  id: string;
  /** Name in tables and charts. */
  label: string;
  /** One line on what the row is and, where the lab stands in for a model or an agent, what it models. */
  note: string;
  /** "baseline" for a reference rather than a strategy of ours (Pi's own compaction). */
  family?: "ours" | "baseline";
  /** What a user sets to get this row for real, when it is a setting: the lab may then recommend it. */
  setting?: RowSetting;
  replay: LabReplay;
}

/** A row's setting: as a sentence, the `contextLedger` value that selects it (what `--apply` merges), and what the
 * lab ran instead of the real thing. */
export interface RowSetting {
  sentence: string;
  value: Readonly<Record<string, unknown>>;
  caveat?: string;
}

/**
 * How the lab drives a strategy without a model or Pi's runtime. Each engine lives in `src/lab/rows/` and calls the
 * strategy's own pieces, so a new strategy that fits an engine needs no lab code.
 */
export type LabReplay =
  /** Pi's compaction past its threshold, answered through the strategy's chart with its compaction planner. */
  | {
      engine: "compaction";
      planner(): StrategyPlanner;
      /** A scripted model for the planner's model call. */
      model?: (input: CompactionInput) => CompleteText;
    }
  /** Before each request (Pi's turn_end of the step before it), the strategy's own decision and deterministic writer. */
  | { engine: "boundary"; step(boundary: LabBoundary): LabBoundaryAct }
  /** The model drives the strategy through its tool; a scripted agent stands in for it. */
  | { engine: "fold-policy" | "fold-notice" }
  /** Pi's own compaction, simulated with stand-in summary text. */
  | { engine: "pi-native" };

/** A step boundary as the lab replays it. */
export interface LabBoundary {
  /** Active branch of the row's simulated session, root to leaf. */
  branch: readonly SessionEntry[];
  /** The step that just ended: its assistant message entry and how it stopped. */
  stepEntryId: string;
  stopReason: string;
  /** The row's context size. */
  usageTokens: number;
  contextWindow: number;
  cwd: string;
  /**
   * The branch's model view, exactly `projectBranch(branch, LEDGER_FACTS).entries`, kept up to date by the row (a
   * strategy that reads the view asks for it instead of projecting the whole branch at every boundary).
   */
  view?: () => readonly ProjectedEntry[];
  /**
   * What the strategy's step returned as `carry` at the row's previous boundary (undefined at the first): the little
   * the strategy remembers between boundaries, as its host hooks do between turn_ends.
   */
  carry?: unknown;
}

/**
 * What a strategy writes at a lab boundary, and the act's name in the lab's figures; `settled` when nothing can be
 * written at this boundary (a later request before the next step need not ask again). `carry` is handed to the
 * row's next boundary.
 */
export type LabBoundaryAct =
  | { ok: true; fact: MessageFact; kind: string; carry?: unknown }
  | { ok: false; settled: boolean; carry?: unknown };
