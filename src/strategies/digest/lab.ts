// How the lab replays digest: at each step boundary the host's own check (`digestDue`) and plan (`planDigest`); no
// model is involved in either. Pure: no I/O.
import type { LabBoundary, LabBoundaryAct } from "../../lab/row-spec.ts";
import { type DigestAttempt, digestDue, keptAttempt, planDigest } from "./plan.ts";
import { digestPolicy, type DigestOptions } from "./policy.ts";

/** The default digest row. */
export function digestAt(boundary: LabBoundary): LabBoundaryAct {
  return digestWith(boundary, {});
}

/** The row with `contextLedger.digest.workingSet` on. */
export function workingSetDigestAt(boundary: LabBoundary): LabBoundaryAct {
  return digestWith(boundary, { workingSet: true });
}

/** What the row carries from one boundary to the next: the last attempt that wrote no digest, as the host keeps it. */
function lastAttempt(carry: unknown): DigestAttempt | undefined {
  return carry && typeof carry === "object" && "retryAt" in carry ? (carry as DigestAttempt) : undefined;
}

function digestWith(boundary: LabBoundary, options: Partial<DigestOptions>): LabBoundaryAct {
  const { branch, stepEntryId, usageTokens, contextWindow, cwd, view } = boundary;
  const policy = digestPolicy(contextWindow, options);
  const previous = lastAttempt(boundary.carry);
  const due = digestDue({ branch, stepEntryId, drafts: [], usageTokens, policy, cwd, lastAttempt: previous });
  if (!due.due) return { ok: false, settled: false, carry: previous };
  const outcome = planDigest({ branch, limitId: due.limitId, contextWindow, usageTokens, cwd, policy, view: view?.() });
  if (!outcome.ok) return { ok: false, settled: false, carry: keptAttempt(due.tail, outcome.reason, previous) };
  const { customType, content, display, details } = outcome.draft;
  return { ok: true, fact: { customType, content, display, details }, kind: "digest" };
}
