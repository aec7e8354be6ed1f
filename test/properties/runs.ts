// How hard the property tests push: FC_RUNS raises the run count locally (CI uses the default of 200),
// and the per-test timeout grows with it so a long local run is not cut off.
export const numRuns = Number(process.env.FC_RUNS ?? 200);

/** Vitest timeout for one property test: one minute per 200 runs, at least one minute. */
export const propertyTimeout = Math.max(1, Math.ceil(numRuns / 200)) * 60_000;
