// A scripted stand-in for the planned strategy's model planner, for the lab: it reads nothing of the request and
// answers, through `submit_deletion_plan`, the ranking the heuristic gives for the same region. Deterministic; pure.
import type { CompactionInput, CompleteText, ModelReply } from "../contract.ts";
import { rankDeletions } from "./heuristic.ts";
import { DELETION_PLAN_TOOL } from "./model-plan.ts";
import { laterContextOf, transcriptOf } from "./planner.ts";

export function scriptedPlanner(input: CompactionInput): CompleteText {
  return async () => {
    const ranges = rankDeletions(transcriptOf(input), laterContextOf(input)).map((r) => ({ start: r.from, end: r.to }));
    const reply: ModelReply = {
      text: "",
      toolCalls: [{ name: DELETION_PLAN_TOOL.name, arguments: { ranges } }],
      model: "lab/scripted-planner",
    };
    return reply;
  };
}
