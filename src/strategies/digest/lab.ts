// How the lab replays digest: at each step boundary the host's own check (`digestDue`) and plan (`planDigest`); no
// model is involved in either. Pure: no I/O.
import type { LabBoundary, LabBoundaryAct } from "../contract.ts";
import { digestDue, planDigest } from "./plan.ts";
import { digestPolicy } from "./policy.ts";

export function digestAt(boundary: LabBoundary): LabBoundaryAct {
  const { branch, stepEntryId, usageTokens, contextWindow, cwd } = boundary;
  const policy = digestPolicy(contextWindow);
  const due = digestDue({ branch, stepEntryId, drafts: [], usageTokens, policy, cwd });
  if (!due.due) return { ok: false, settled: false };
  const outcome = planDigest({ branch, limitId: due.limitId, contextWindow, usageTokens, cwd, policy });
  if (!outcome.ok) return { ok: false, settled: false };
  const { customType, content, display, details } = outcome.draft;
  return { ok: true, fact: { customType, content, display, details }, kind: "digest" };
}
