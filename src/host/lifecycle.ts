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
