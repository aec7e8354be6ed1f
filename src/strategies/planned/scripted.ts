// A scripted stand-in for the planned strategy's model planner, for the lab: it reads nothing of the request and
// answers, through `submit_deletion_plan`, the ranking the heuristic gives for the same region. Deterministic; pure.
import type { CompactionInput, CompleteText, ModelReply } from "../contract.ts";
import { DELETION_PLAN_TOOL } from "./model-plan.ts";
import { heuristicRanking } from "./planner.ts";

export function scriptedPlanner(input: CompactionInput): CompleteText {
  return async () => {
    // The heuristic's ranking of this compaction, ranked once whoever asks (the heuristic row ranks the same region).
    const ranges = heuristicRanking(input).map((r) => ({ start: r.from, end: r.to }));
    const reply: ModelReply = {
      text: "",
      toolCalls: [{ name: DELETION_PLAN_TOOL.name, arguments: { ranges } }],
      model: "lab/scripted-planner",
    };
    return reply;
  };
}
