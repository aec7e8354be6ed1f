// What the lab's recommendation is, as data: the weights it was made under, every candidate's scores, the choice and
// its explanation. A leaf module, so a session's result and the run's result can carry a recommendation without
// importing the arithmetic that makes one (recommend.ts), which reads their totals.

/** How much quality and cost count; they sum to 1. */
export interface Weights {
  quality: number;
  cost: number;
}

/** The two quality measures, by the name the explanation gives them. */
export type QualityMeasure = "needed later" | "working set" | "probes";

/** One settable strategy's scores. */
export interface Candidate {
  id: string;
  label: string;
  /** The lower of `neededLater` and `workingSet` (see `qualityOf` in recommend.ts). */
  quality: number;
  /** Needed-later share visible right after acts (1 when the row never acted). */
  neededLater: number;
  /** Share of later edits' replaced texts the view showed at the edit (1 when none counted). */
  workingSet: number;
  /** The measure that set `quality`. */
  decidedBy: QualityMeasure;
  /** Acts measured for quality. */
  acts: number;
  usd: number;
  /** Cheapest eligible cost / this cost. */
  costScore: number;
  /** 0..100. */
  score: number;
  /** Why it cannot be chosen. */
  excluded?: string;
}

/** The recommendation for a set of sessions. */
export interface Recommendation {
  weights: Weights;
  /** Every settable strategy in the run, best first (excluded ones last). */
  candidates: Candidate[];
  choice?: { id: string; label: string; setting: string; value: Readonly<Record<string, unknown>>; caveat?: string };
  runnerUp?: { id: string; label: string };
  closeCall: boolean;
  /** The choice loses the working set (below `WORKING_SET_FLOOR` in recommend.ts, or below the runner-up's): never a clear choice. */
  losesWorkingSet?: boolean;
  /** Cost weight at which the runner-up would win (when a weight between 0 and 1 does that). */
  flipAtCostWeight?: number;
  /** Plain sentences: the answer, why, and how sure. */
  lines: string[];
}
