// `session_before_compact`: Pi prepared a compaction (manual /compact, threshold or overflow). The request runs
// through the lifecycle machine with the configured strategy; anything unexpected falls back to Pi's native path.
import type { ExtensionContext, SessionBeforeCompactEvent, SessionBeforeCompactResult, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { CompactionStrategyName } from "../log/entries.ts";
import { collectFileOps } from "../projection/file-ops.ts";
import { compactionInput, type CompactionInput as StrategyInput, type CompactionPlan, type ContextFile, type PreparedCut } from "../strategies/contract.ts";
import type { LedgerSession } from "./ledger-session.ts";
import { startLifecycle } from "./lifecycle.ts";
import { getStrategy } from "./strategies.ts";

/**
 * Drop folded messages from Pi's summary input and rebuild its file lists from what remains, carrying the
 * previous summary's cumulative lists forward. Pi's own summarizer (and ours) then never re-reads folded text.
 * This mutates Pi's preparation object, which Pi reads after the hook returns.
 */
export function filterPreparation(event: SessionBeforeCompactEvent, session: LedgerSession): void {
  const p = event.preparation;
  const summarize = session.live.filterContext(p.messagesToSummarize);
  const prefix = session.live.filterContext(p.turnPrefixMessages);
  if (!summarize && !prefix) return;
  if (summarize) p.messagesToSummarize = summarize;
  if (prefix) p.turnPrefixMessages = prefix;
  const previous = [...event.branchEntries].reverse().find((e) => e.type === "compaction");
  const carried = (previous?.type === "compaction" ? previous.details : undefined) as { readFiles?: unknown; modifiedFiles?: unknown } | undefined;
  const ops = collectFileOps([...p.messagesToSummarize, ...p.turnPrefixMessages]);
  for (const f of Array.isArray(carried?.readFiles) ? carried.readFiles : []) if (typeof f === "string") ops.read.add(f);
  for (const f of Array.isArray(carried?.modifiedFiles) ? carried.modifiedFiles : []) if (typeof f === "string") ops.edited.add(f);
  p.fileOps = ops;
}

/** Check a plan before Pi persists it. Garbage never reaches the ledger. */
export function validatePlan(plan: CompactionPlan, branch: readonly SessionEntry[], strategy: string): string | undefined {
  if (typeof plan?.summary !== "string" || !plan.summary.trim()) return "the strategy produced an empty summary";
  if (!branch.some((e) => e.id === plan.firstKeptEntryId)) return "the strategy kept an entry that is not on the branch";
  if (plan.details?.v !== 1 || plan.details.strategy !== strategy) return "the strategy's details are not versioned";
  return undefined;
}

export interface CompactionHost {
  contextFiles(): readonly ContextFile[];
}

export async function handleBeforeCompact(
  event: SessionBeforeCompactEvent,
  ctx: ExtensionContext,
  session: LedgerSession,
  host: CompactionHost,
): Promise<SessionBeforeCompactResult | undefined> {
  session.sync(ctx.sessionManager);
  filterPreparation(event, session);
  const strategy = session.settings.strategy;
  if (strategy === "native") return undefined;

  const planner = getStrategy(strategy as CompactionStrategyName);
  const warn = (message: string) => ctx.ui.notify(message, "warning");
  if (!planner) {
    warn(`context-ledger: strategy "${strategy}" is not available in this version; Pi compacts natively.`);
    return undefined;
  }
  const p = event.preparation;
  const input = compactionInput(p as PreparedCut, {
    reason: event.reason,
    branch: event.branchEntries,
    contextWindow: ctx.model?.contextWindow ?? 128_000,
    cwd: ctx.cwd,
    contextFiles: host.contextFiles(),
    systemPrompt: safe(() => ctx.getSystemPrompt()),
    customInstructions: event.customInstructions,
    complete: modelCompleter(ctx, session.settings.plannerModel),
  });
  const lifecycle = await startLifecycle(
    { kind: "compaction", strategy, request: { reason: event.reason, firstKeptEntryId: p.firstKeptEntryId } },
    async (_context, signal) => {
      const plan = await planner.plan(input, anySignal(signal, event.signal));
      const problem = validatePlan(plan, event.branchEntries, strategy);
      return problem ? { ok: false, reason: problem } : { ok: true, plan };
    },
    { inspect: session.settings.inspect, warn },
  );
  const onAbort = () => lifecycle.actor.send({ type: "host.aborted", reason: "compaction aborted" });
  if (event.signal.aborted) onAbort();
  else event.signal.addEventListener("abort", onAbort, { once: true });
  const outcome = await lifecycle.outcome;
  event.signal.removeEventListener("abort", onAbort);

  switch (outcome.outcome) {
    case "committed": {
      const plan = outcome.plan as CompactionPlan;
      return {
        compaction: {
          summary: plan.summary,
          firstKeptEntryId: plan.firstKeptEntryId,
          tokensBefore: plan.tokensBefore,
          estimatedTokensAfter: plan.estimatedTokensAfter,
          details: plan.details,
        },
      };
    }
    case "cancelled":
      return { cancel: true };
    case "nativeFallback":
      warn(`context-ledger: ${strategy} compaction fell back to Pi's native compaction (${outcome.reason ?? "no reason given"}).`);
      return undefined;
  }
}

/**
 * Text completion on the active model, or on `provider/model` from the global settings. Returns undefined when no
 * model is available, so strategies that need one decline and Pi compacts natively.
 */
export function modelCompleter(ctx: ExtensionContext, configured: string | undefined): StrategyInput["complete"] {
  const model = strategyModel(ctx, configured);
  if (!model) return undefined;
  return async ({ system, prompt }, signal) => {
    const reply = await ctx.modelRegistry.complete(model, { systemPrompt: system, messages: [{ role: "user", content: prompt, timestamp: 0 }] }, { signal });
    if (reply.stopReason === "error" || reply.stopReason === "aborted") throw new Error(reply.errorMessage ?? `model call ${reply.stopReason}`);
    return reply.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  };
}

/** The model a strategy may call: `provider/model` from the global settings, else the active model. */
export function strategyModel(ctx: ExtensionContext, configured: string | undefined): ExtensionContext["model"] {
  const slash = configured ? configured.indexOf("/") : -1;
  return configured && slash > 0 ? ctx.modelRegistry.find(configured.slice(0, slash), configured.slice(slash + 1)) : ctx.model;
}

function safe<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/** A signal that aborts when either input does. */
function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  return AbortSignal.any([a, b]);
}
