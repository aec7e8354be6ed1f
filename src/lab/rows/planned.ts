// The `planned` strategy as lab rows: Pi's own preparation picks the boundary, then either the built-in heuristic
// ranks deletions (no model call), or the model planner path runs against a scripted model that answers through
// `submit_deletion_plan`, so the request, the tool-plan parsing and the cost of the planner call are measured too.
// When a plan cannot save enough, the host would let Pi compact natively, so the rows do the same with the native
// stand-in and count it as a model call.
import { estimateTextTokens } from "../../projection/tokens.ts";
import { compactionInput, type CompactionInput, type CompleteText, type ModelReply } from "../../strategies/contract.ts";
import { PlanError } from "../../strategies/planned/apply.ts";
import { rankDeletions } from "../../strategies/planned/heuristic.ts";
import { DELETION_PLAN_TOOL } from "../../strategies/planned/model-plan.ts";
import { DEFAULT_PLANNED_OPTIONS, planHeuristic, planPlanned, transcriptOf } from "../../strategies/planned/planner.ts";
import type { SideCall } from "../metrics.ts";
import type { PiPreparation } from "../pi-internals.ts";
import type { LabSettings, Row } from "../row.ts";
import { compactionRow, type Summarized } from "./compaction-row.ts";
import { nativeSummary } from "./native.ts";

function inputOf(prep: PiPreparation, branch: Parameters<typeof compactionInput>[1]["branch"], settings: LabSettings): CompactionInput {
  return compactionInput(prep, { branch, contextWindow: settings.window, cwd: "/" });
}

export const plannedRow = (settings: LabSettings): Row =>
  compactionRow(
    { id: "planned", label: "planned (heuristic)", family: "ours", note: "planned strategy: heuristic deletion ranking, surviving lines verbatim, no model call" },
    settings,
    (prep, branch) => {
      try {
        const plan = planHeuristic(inputOf(prep, branch, settings));
        return { summary: plan.summary, firstKeptEntryId: plan.firstKeptEntryId, details: plan.details, sideCalls: [], modelCall: false };
      } catch (error) {
        // Same fallback as the host: a plan that cannot save enough hands the compaction to Pi.
        if (error instanceof PlanError) return nativeSummary(prep);
        throw error;
      }
    },
  );

/**
 * A scripted stand-in for a model planner: it reads nothing but answers, through `submit_deletion_plan`, the ranking
 * the heuristic gives for the same region. Its request and reply are counted as one side call.
 */
function scriptedPlanner(input: CompactionInput, calls: SideCall[]): CompleteText {
  return async (request) => {
    const ranges = rankDeletions(transcriptOf(input)).map((r) => ({ start: r.from, end: r.to }));
    const args = { ranges };
    const tools = JSON.stringify(request.tools ?? []);
    const output = Math.min(estimateTextTokens(JSON.stringify(args)), request.maxOutputTokens ?? Number.POSITIVE_INFINITY);
    calls.push({ input: estimateTextTokens(request.system) + estimateTextTokens(request.prompt) + estimateTextTokens(tools), output });
    const reply: ModelReply = { text: "", toolCalls: [{ name: DELETION_PLAN_TOOL.name, arguments: args }], model: "lab/scripted-planner" };
    return reply;
  };
}

export const plannedModelRow = (settings: LabSettings): Row =>
  compactionRow(
    {
      id: "planned-model",
      label: "planned (scripted model)",
      family: "ours",
      note: "planned strategy, model planner path: a scripted model answers the heuristic's ranking through submit_deletion_plan; the planner request is a side call",
    },
    settings,
    async (prep, branch): Promise<Summarized> => {
      const input = inputOf(prep, branch, settings);
      const sideCalls: SideCall[] = [];
      try {
        const plan = await planPlanned({ ...input, complete: scriptedPlanner(input, sideCalls) }, { ...DEFAULT_PLANNED_OPTIONS, planner: "model" }, new AbortController().signal);
        return { summary: plan.summary, firstKeptEntryId: plan.firstKeptEntryId, details: plan.details, sideCalls, modelCall: true };
      } catch (error) {
        if (!(error instanceof PlanError)) throw error;
        // The planner call (when it was made) still cost its tokens before Pi's native summary.
        const native = await nativeSummary(prep);
        return { ...native, sideCalls: [...sideCalls, ...native.sideCalls] };
      }
    },
  );
