// Starts one compaction lifecycle actor with the host's planner injected, optionally under the inspector.
import { createActor, fromPromise, toPromise, type Actor } from "xstate";
import { compactionMachine, type CompactionContext, type CompactionInput, type CompactionOutcome, type PlanResult } from "../../machines/compaction.machine.ts";
import { getInspector } from "./inspector.ts";

export type Planner = (context: CompactionContext, signal: AbortSignal) => Promise<PlanResult>;

export interface Lifecycle {
  actor: Actor<typeof compactionMachine>;
  outcome: Promise<CompactionOutcome>;
}

/** Start a lifecycle for one request. */
export async function startLifecycle(input: CompactionInput, planner: Planner, options: { inspect: boolean; warn: (m: string) => void }): Promise<Lifecycle> {
  const inspect = options.inspect ? await getInspector(options.warn) : undefined;
  const machine = compactionMachine.provide({
    actors: { planCompaction: fromPromise<PlanResult, CompactionContext>(({ input: context, signal }) => planner(context, signal)) },
  });
  const actor = createActor(machine, { input, ...(inspect ? { inspect } : {}) });
  const outcome = toPromise(actor);
  actor.start();
  return { actor, outcome };
}

/**
 * Run one request to its final state. An abort of `signal` (Pi's, for the step or the compaction) reaches the
 * machine as `host.aborted`, which cancels planning.
 */
export async function runLifecycle(
  input: CompactionInput,
  planner: Planner,
  options: { inspect: boolean; warn: (m: string) => void; signal?: AbortSignal; abortReason?: string },
): Promise<CompactionOutcome> {
  const { actor, outcome } = await startLifecycle(input, planner, options);
  const { signal } = options;
  const onAbort = () => actor.send({ type: "host.aborted", ...(options.abortReason ? { reason: options.abortReason } : {}) });
  if (signal?.aborted) onAbort();
  else signal?.addEventListener("abort", onAbort, { once: true });
  try {
    return await outcome;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}
