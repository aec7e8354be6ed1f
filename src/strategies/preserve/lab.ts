// How the lab replays preserve: at each step boundary the host's own decision (`checkpointDue`), then the
// deterministic writer in place of the model. Pure: no I/O.
import type { LabBoundary, LabBoundaryAct } from "../../lab/row-spec.ts";
import { extractiveFromDelta } from "./checkpoint.ts";
import { checkpointDue } from "./due.ts";

export function extractiveCheckpointAt(boundary: LabBoundary): LabBoundaryAct {
  const { branch, stepEntryId, stopReason, usageTokens, contextWindow, view } = boundary;
  // The row's live view stands in for a projection of the whole branch at every boundary past the threshold.
  const decision = checkpointDue({ branch, stepEntryId, stopReason, drafts: [], usageTokens, contextWindow, view });
  // With no older raw state at this boundary, nothing changes there until the next step.
  if (!decision.due) return { ok: false, settled: decision.why === "nothing to compact" };
  // The extractive writer sends no request, so no request budget limits the delta: it covers what the host's
  // continuation request covers, the whole delta.
  const result = extractiveFromDelta(decision.delta, Number.POSITIVE_INFINITY, usageTokens);
  if (!result.ok) return { ok: false, settled: true };
  const { customType, content, display, details } = result.draft;
  return { ok: true, fact: { customType, content, display, details }, kind: "checkpoint" };
}
