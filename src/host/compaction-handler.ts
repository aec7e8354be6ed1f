// `session_before_compact`: Pi prepared a compaction (manual /compact, threshold or overflow). The request runs
// through the lifecycle machine with the configured strategy; anything unexpected falls back to Pi's native path.
import type { ExtensionContext, SessionBeforeCompactEvent, SessionBeforeCompactResult, SessionEntry } from "@earendil-works/pi-coding-agent";
import { collectFileOps } from "../projection/file-ops.ts";
import {
  compactionInput,
  type CompactionFactPlan,
  type CompleteText,
  type ContextFile,
  type LifecycleRequest,
  type MessageFact,
  type ModelReply,
  type PreparedCut,
  type StrategyPlanner,
} from "../strategies/contract.ts";
import { PlanError } from "../strategies/planned/apply.ts";
import { failureDetails, type PlannerFailureDetails } from "../strategies/planned/report.ts";
import type { LedgerSession } from "./ledger-session.ts";
import type { LifecycleEffects, StrategyLifecycle } from "./lifecycle.ts";

/**
 * Drop folded messages from Pi's summary input and rebuild its file lists from what remains, carrying the
 * previous summary's cumulative lists forward. Pi's own summarizer (and ours) then never re-reads folded text.
 * This mutates Pi's preparation object, which Pi reads after the hook returns.
 */
export function filterPreparation(event: Pick<SessionBeforeCompactEvent, "preparation" | "branchEntries">, session: LedgerSession): void {
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
export function validatePlan(plan: CompactionFactPlan, branch: readonly SessionEntry[], strategy: string): string | undefined {
  if (typeof plan?.summary !== "string" || !plan.summary.trim()) return "the strategy produced an empty summary";
  if (!branch.some((e) => e.id === plan.firstKeptEntryId)) return "the strategy kept an entry that is not on the branch";
  if (plan.details?.v !== 1 || plan.details.strategy !== strategy) return "the strategy's details are not versioned";
  return undefined;
}

export interface CompactionHost {
  contextFiles(): readonly ContextFile[];
  /** Persist the bounded record of an attempt that ended in Pi's native compaction (and show its card). */
  recordFallback?(details: PlannerFailureDetails): void;
  /** Answer a model request from a prepared candidate when it matches exactly (speculative planning). */
  reuse?(complete: CompleteText, model: string, settings: SessionBeforeCompactEvent["preparation"]["settings"]): CompleteText;
}

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
export function compactionEffects(planner: StrategyPlanner, session: () => LedgerSession, host: CompactionHost): LifecycleEffects {
  return {
    async plan(request, signal) {
      const { moment, ctx, trace } = request;
      if (moment.type !== "session_before_compact") return { ok: false, reason: "only Pi's compaction is planned here" };
      const event = moment.event;
      const call = plannerCall(ctx, session().settings.plannerModel);
      const complete = call.complete && call.model && host.reuse ? host.reuse(call.complete, call.model, event.preparation.settings) : call.complete;
      const input = strategyInput(event, ctx, host.contextFiles(), complete);
      try {
        const plan = await planner.plan(input, AbortSignal.any([signal, event.signal]));
        return { ok: true, plan: { compaction: plan } };
      } catch (error) {
        trace.failure = error;
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

/**
 * `session_before_compact` for every strategy: the strategy's chart routes the trigger (plan, decline, or Pi's own
 * compaction) and validates the plan; its facts become Pi's answer, and the chart commits when Pi stores them.
 */
export async function answerCompaction(
  event: SessionBeforeCompactEvent,
  ctx: ExtensionContext,
  session: LedgerSession,
  lifecycle: StrategyLifecycle,
  host: Pick<CompactionHost, "recordFallback"> & { sendMessage(message: MessageFact): void },
): Promise<SessionBeforeCompactResult | undefined> {
  session.sync(ctx.sessionManager);
  filterPreparation(event, session);
  const request: LifecycleRequest = { moment: { type: "session_before_compact", event }, ctx, trace: { startedAt: Date.now() } };
  const run = await lifecycle.start(event.reason, request);
  run.abortOn(event.signal, "compaction aborted");
  const decision = await run.decided();
  switch (decision.state) {
    case "validated": {
      const facts = decision.facts;
      for (const message of facts.messages ?? []) host.sendMessage(message);
      session.expectStored(run, facts);
      if (facts.compaction) return { compaction: { ...facts.compaction } };
      return facts.declineCompaction ? { cancel: true } : undefined;
    }
    case "cancelled":
      return { cancel: true };
    case "nativeFallback": {
      // A trigger the strategy leaves to Pi is not a failure; only a planning attempt that failed is reported.
      if (request.trace.attempted !== true) return undefined;
      // Only our own reasons (PlanError messages, validation problems) are shown and kept; a provider's error text
      // is neither persisted nor shown beyond its category.
      const failure = request.trace.failure;
      const details = failureDetails(failure, {
        strategy: lifecycle.strategy,
        trigger: event.reason,
        durationMs: Date.now() - (request.trace.startedAt ?? Date.now()),
        model: request.trace.model,
        usage: request.trace.usage,
        reason: failure === undefined ? decision.reason : undefined,
      });
      ctx.ui.notify(`context-ledger: ${lifecycle.strategy} compaction fell back to Pi's native compaction (${details.category}: ${details.reason}).`, "warning");
      host.recordFallback?.(details);
      return undefined;
    }
  }
}

/** A strategy's model access for one compaction, and what it used (read after the call, for the failure record). */
export interface PlannerCall {
  complete?: CompleteText;
  /** `provider/model` of the resolved model. */
  model?: string;
  /** Set once the model was asked. */
  used?: boolean;
  usage?: { input: number; output: number };
}

/**
 * Model access on the active model, or on `provider/model` from the global settings (split at the first slash, so
 * the model id may hold more). A configured model that does not resolve is not silently replaced: every call
 * rejects with a reason naming the setting, so the strategy falls back to Pi's native compaction with a warning.
 * Without any model, `complete` is absent and strategies that can work without one do.
 */
export function plannerCall(ctx: ExtensionContext, configured: string | undefined): PlannerCall {
  const call: PlannerCall = {};
  const model = strategyModel(ctx, configured);
  if (configured && !model) {
    call.complete = async () => {
      throw new PlanError("model-unresolved", `contextLedger.plannerModel "${configured}" is not a known model`);
    };
    return call;
  }
  if (!model) return call;
  call.model = `${model.provider}/${model.id}`;
  call.complete = async (request, signal) => {
    call.used = true;
    const context = {
      systemPrompt: request.system,
      messages: [{ role: "user" as const, content: request.prompt, timestamp: 0 }],
      ...(request.tools?.length ? { tools: [...request.tools] } : {}),
    };
    const reply = await withDeadline(
      (callSignal) =>
        ctx.modelRegistry.complete(model, context, {
          signal: callSignal,
          ...(request.maxOutputTokens ? { maxTokens: request.maxOutputTokens } : {}),
          ...(request.timeoutMs ? { timeoutMs: request.timeoutMs } : {}),
        }),
      signal,
      request.timeoutMs,
    );
    // Prompt tokens whether or not the provider served them from its cache.
    const u = reply.usage;
    call.usage = { input: (u?.input ?? 0) + (u?.cacheRead ?? 0) + (u?.cacheWrite ?? 0), output: u?.output ?? 0 };
    if (reply.stopReason === "aborted" && signal.aborted) throw abortReason(signal);
    if (reply.stopReason === "error" || reply.stopReason === "aborted") {
      // The provider's words are shown once, bounded, and never persisted: they may quote the request.
      if (reply.errorMessage) ctx.ui.notify(`context-ledger: the planner model ${call.model} reported: ${reply.errorMessage.slice(0, 200)}`, "warning");
      throw new PlanError("model-error", `the planner call ended with ${reply.stopReason}`);
    }
    const answer: ModelReply = {
      text: reply.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(""),
      toolCalls: reply.content.flatMap((b) => (b.type === "toolCall" ? [{ name: b.name, arguments: b.arguments }] : [])),
      model: call.model,
      usage: call.usage,
    };
    return answer;
  };
  return call;
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error("compaction aborted");
}

/**
 * Run a model call under a deadline. The call gets a signal that aborts on the caller's abort or at the deadline,
 * and the result also races both, so a provider that ignores its signal cannot hold the compaction.
 */
export function withDeadline<T>(work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal, timeoutMs: number | undefined): Promise<T> {
  const deadline = new AbortController();
  const timer = timeoutMs
    ? setTimeout(() => deadline.abort(new PlanError("timeout", `the planner gave no answer within ${timeoutMs} ms`)), timeoutMs)
    : undefined;
  const both = AbortSignal.any([signal, deadline.signal]);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.aborted ? abortReason(signal) : abortReason(deadline.signal));
    const done = () => {
      clearTimeout(timer);
      both.removeEventListener("abort", onAbort);
    };
    if (both.aborted) {
      done();
      onAbort();
      return;
    }
    both.addEventListener("abort", onAbort, { once: true });
    work(both).then(
      (value) => (done(), resolve(value)),
      (error: unknown) => (done(), reject(both.aborted ? (signal.aborted ? abortReason(signal) : abortReason(deadline.signal)) : error)),
    );
  });
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

