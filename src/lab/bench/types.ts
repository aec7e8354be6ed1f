// The shape every benchmark module reports, so the runner can print and compare them uniformly.

/** One measured figure. `ratio` compares `value` with a reference measured in the same run. */
export type BenchRow = {
  suite: string;
  name: string;
  value: number;
  unit: string;
  /** What `ratio` is relative to (e.g. "Pi buildSessionProjection, same ledger"). */
  reference?: string;
  ratio?: number;
  /** The goal, stated for humans (e.g. "≤ 1.5x"). */
  target?: string;
};
