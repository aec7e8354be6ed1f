// Whether preserve writes a Tool Context checkpoint at a step boundary. One decision for the host's turn_end hook and
// the lab's preserve row, so the lab cannot drift from the product. Pure: no I/O.
import type { SessionEntry } from "../../log/entries.ts";
import type { ProjectedEntry } from "../../projection/project.ts";
import { LEDGER_FACTS } from "../catalog.ts";
import { branchLookup, selectDelta, type Delta } from "../shared/delta.ts";
import { decideTrigger } from "./reserve.ts";

/** What a step boundary (Pi's turn_end) shows the decision. */
export interface Boundary {
  /** Active branch, root to leaf, with the step just ended. */
  branch: readonly SessionEntry[];
  /** The step's assistant message entry: a checkpoint covers only what is older. */
  stepEntryId: string;
  /** Stop reason of that message, when it is an assistant message. */
  stopReason?: string;
  /** customTypes of the drafts earlier handlers already return for this boundary. */
  drafts: readonly (string | undefined)[];
  /** Context usage after the step (null when unknown). */
  usageTokens: number | null;
  /** The model's context window (undefined when unknown). */
  contextWindow: number | undefined;
  /**
   * The branch's model view, exactly `projectBranch(branch, LEDGER_FACTS).entries`, when the caller keeps it (the
   * lab's rows do); without it the delta projects the branch itself.
   */
  view?: () => readonly ProjectedEntry[];
}

/**
 * The entry right before `stepEntryId` (the newest a checkpoint may cover), found in the branch's kept index: the
 * same entry `entryBefore` finds with a scan from the root, without a pass over the branch at every step.
 */
export function limitBefore(branch: readonly SessionEntry[], stepEntryId: string): string | undefined {
  const at = branchLookup(branch).indexOf(stepEntryId);
  return at > 0 ? branch[at - 1].id : undefined;
}

export type CheckpointDue =
  | { due: true; delta: Delta; contextWindow: number }
  | {
      due: false;
      why:
        | "failed step"
        | "range fact here"
        | "no boundary"
        | "usage unknown"
        | "below threshold"
        | "nothing to compact";
    };

/**
 * A checkpoint is due when the step completed, no range fact was written at this boundary, usage reached
 * window − reserve, and older raw technical state exists. The usage check runs first: most boundaries are far below
 * the threshold and need no delta at all.
 */
export function checkpointDue(boundary: Boundary): CheckpointDue {
  // A failed or aborted response is Pi's to recover (overflow compaction, retry); its request already failed, so a
  // continuation of it would too. The next completed step checkpoints.
  if (boundary.stopReason === "error" || boundary.stopReason === "aborted") return { due: false, why: "failed step" };
  // One range fact per boundary: a fold (or any range record) here already changed the view (the usage figure is
  // stale until the next turn), and a second preserve handler must not checkpoint the same delta twice.
  if (boundary.drafts.some((t) => LEDGER_FACTS.declaresRange(t))) return { due: false, why: "range fact here" };
  const { contextWindow, usageTokens } = boundary;
  if (!contextWindow) return { due: false, why: "no boundary" };
  const limitId = limitBefore(boundary.branch, boundary.stepEntryId);
  if (!limitId) return { due: false, why: "no boundary" };
  const early = decideTrigger({ usageTokens, contextWindow, compactableTokens: 1 });
  if (!early.checkpoint) return { due: false, why: early.reason };
  const delta = selectDelta(boundary.branch, limitId, boundary.view?.());
  if (!delta || !decideTrigger({ usageTokens, contextWindow, compactableTokens: delta.tokens }).checkpoint)
    return { due: false, why: "nothing to compact" };
  return { due: true, delta, contextWindow };
}
