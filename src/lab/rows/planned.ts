// The `planned` strategy as a lab row: Pi's own preparation picks the boundary and the built-in heuristic
// planner ranks deletions (no model call). When the plan cannot save enough, the host would let Pi compact
// natively, so the row does the same with the native stand-in and counts it as a model call.
import { PlanError } from "../../strategies/planned/apply.ts";
import { planHeuristic } from "../../strategies/planned/planner.ts";
import { compactionInput } from "../../strategies/contract.ts";
import type { Row, SessionSettings } from "../row.ts";
import { compactionRow } from "./compaction-row.ts";
import { nativeSummary } from "./native.ts";

export const plannedRow = (settings: SessionSettings): Row =>
  compactionRow(
    { id: "planned", label: "planned (heuristic)", family: "ours", note: "planned strategy: heuristic deletion ranking, surviving lines verbatim, no model call" },
    settings,
    (prep, branch) => {
      try {
        const plan = planHeuristic(compactionInput(prep, { branch, contextWindow: settings.window, cwd: settings.cwd }));
        return { summary: plan.summary, firstKeptEntryId: plan.firstKeptEntryId, details: plan.details, sideCalls: [], modelCall: false };
      } catch (error) {
        // Same fallback as the host: a plan that cannot save enough hands the compaction to Pi.
        if (error instanceof PlanError) return nativeSummary(prep);
        throw error;
      }
    },
  );
