// The part every strategy that answers Pi's compaction with a compaction entry shares (checkpoint, planned): Pi's
// preparation filtered by the ranges, the strategy's input built from it, and the chart effects that ask the
// strategy's pure planner with model access from the kit and check its plan before Pi stores it.
import type { ExtensionContext, SessionBeforeCompactEvent, SessionEntry } from "@earendil-works/pi-coding-agent";
import { collectFileOps } from "../../projection/file-ops.ts";
import { backwardLookup } from "../../projection/project.ts";
import {
  type CompactionPlan,
  compactionInput,
  type CompleteText,
  type ContextFile,
  type CutSettings,
  type LedgerSessionView,
  type PreparedCut,
  type LifecycleEffects,
  type StrategyKit,
  type StrategyPlanner,
} from "../contract.ts";

/**
 * Drop folded messages from Pi's summary input and rebuild its file lists from what remains, carrying the
 * previous summary's cumulative lists forward. Pi's own summarizer (and ours) then never re-reads folded text.
 * This mutates Pi's preparation object, which Pi reads after the hook returns.
 */
export function filterPreparation(
  event: Pick<SessionBeforeCompactEvent, "preparation" | "branchEntries">,
  session: LedgerSessionView,
): void {
  const p = event.preparation;
  const summarize = session.live.filterContext(p.messagesToSummarize);
  const prefix = session.live.filterContext(p.turnPrefixMessages);
  if (!summarize && !prefix) return;
  if (summarize) p.messagesToSummarize = summarize;
  if (prefix) p.turnPrefixMessages = prefix;
  const previous = [...event.branchEntries].reverse().find((e) => e.type === "compaction");
  const carried = (previous?.type === "compaction" ? previous.details : undefined) as
    | { readFiles?: unknown; modifiedFiles?: unknown }
    | undefined;
  const ops = collectFileOps([...p.messagesToSummarize, ...p.turnPrefixMessages]);
  for (const f of Array.isArray(carried?.readFiles) ? carried.readFiles : [])
    if (typeof f === "string") ops.read.add(f);
  for (const f of Array.isArray(carried?.modifiedFiles) ? carried.modifiedFiles : [])
    if (typeof f === "string") ops.edited.add(f);
  p.fileOps = ops;
}

/** Check a plan before Pi persists it. Garbage never reaches the ledger. */
export function validatePlan(
  plan: CompactionPlan,
  branch: readonly SessionEntry[],
  strategy: string,
): string | undefined {
  if (typeof plan?.summary !== "string" || !plan.summary.trim()) return "the strategy produced an empty summary";
  // From the leaf: the kept entry is near it, and a scan from the root at every compaction grows with the session.
  if (backwardLookup(branch).indexOf(plan.firstKeptEntryId) < 0)
    return "the strategy kept an entry that is not on the branch";
  if (plan.details?.v !== 1 || plan.details.strategy !== strategy) return "the strategy's details are not versioned";
  return undefined;
}

/** Answer a model request from a prepared candidate when it matches exactly (speculative planning). */
export type ReuseReply = (complete: CompleteText, model: string, settings: CutSettings) => CompleteText;

/** A strategy's input from Pi's (filtered) preparation and the session's facts. Shared with speculative planning. */
export function strategyInput(
  event: Pick<SessionBeforeCompactEvent, "preparation" | "branchEntries" | "reason" | "customInstructions">,
  ctx: ExtensionContext,
  contextFiles: readonly ContextFile[],
  complete: CompleteText | undefined,
) {
  return compactionInput(event.preparation as PreparedCut, {
    reason: event.reason,
    branch: event.branchEntries,
    contextWindow: ctx.model?.contextWindow ?? 128_000,
    cwd: ctx.cwd,
    contextFiles,
    systemPrompt: safe(() => ctx.getSystemPrompt()),
    customInstructions: event.customInstructions,
    complete,
  });
}

/**
 * The lifecycle effects of a strategy that answers Pi's compaction with a compaction entry (its planner is pure):
 * the plan asks the planner with model access bound to the settings, the validator checks the entry before Pi
 * stores it.
 */
export function compactionEffects<O>(
  planner: StrategyPlanner,
  kit: StrategyKit<O>,
  reuse?: ReuseReply,
): LifecycleEffects {
  return {
    async plan(request, signal) {
      const { moment, ctx, trace } = request;
      if (moment.type !== "session_before_compact")
        return { ok: false, reason: "only Pi's compaction is planned here" };
      const event = moment.event;
      const call = kit.modelCall(ctx, kit.session().settings.plannerModel);
      const complete =
        call.complete && call.model && reuse
          ? reuse(call.complete, call.model, event.preparation.settings)
          : call.complete;
      const input = strategyInput(event, ctx, kit.contextFiles(), complete);
      try {
        const plan = await planner.plan(input, AbortSignal.any([signal, event.signal]));
        return { ok: true, plan: { compaction: plan } };
      } catch (error) {
        trace.failure = error instanceof Error ? error : new Error(String(error));
        throw error;
      } finally {
        if (call.used) trace.model = call.model;
        if (call.usage) trace.usage = call.usage;
      }
    },
    validate(request, facts) {
      if (request.moment.type !== "session_before_compact") return "not a compaction";
      if (!facts.compaction) return "the strategy produced no compaction";
      return validatePlan(facts.compaction, request.moment.event.branchEntries, planner.name);
    },
  };
}

function safe<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}
