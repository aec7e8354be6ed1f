// The `preserve` strategy's host side. At every turn_end it checks the reserve and, when needed, appends one Tool
// Context checkpoint (model-written, cache-friendly first, then delta-only, then extractive). It also answers
// session_before_compact in preserve mode and renders the checkpoint card.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { Api, AssistantMessage, Context, Model } from "@earendil-works/pi-ai";
import {
  convertToLlm,
  type ExtensionAPI,
  type ExtensionContext,
  type SessionBeforeCompactEvent,
  type SessionBeforeCompactResult,
  type SessionBoundaryDraft,
  type TurnEndEvent,
  type TurnEndEventResult,
} from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import { LedgerType, type SessionEntry } from "../log/entries.ts";
import { projectBranch } from "../projection/project.ts";
import { estimateMessagesTokens, estimateTextTokens } from "../projection/tokens.ts";
import { checkpointDraft, type PreserveDetails, type PreserveDraft } from "../strategies/preserve/checkpoint.ts";
import { entryBefore, fitDelta, ordinalsOf, selectDelta, type Delta, type DeltaUnit } from "../strategies/preserve/delta.ts";
import { writeExtractiveCheckpoint } from "../strategies/preserve/extractive.ts";
import {
  chooseRequestShape,
  continuationAsk,
  deltaOnlyOverhead,
  deltaOnlyRequest,
  normalizeCheckpointText,
  unitFitCost,
} from "../strategies/preserve/prompt.ts";
import { decideTrigger, reserveTokens } from "../strategies/preserve/reserve.ts";
import { strategyModel } from "./compaction-handler.ts";
import { startLifecycle } from "./lifecycle.ts";
import type { LedgerSession } from "./ledger-session.ts";

type AnyModel = Model<Api>;

/** What one summary attempt produced. */
type Attempt = { ok: true; body: string; requestTokens: number } | { ok: false; reason: string };

/** Outcome of writing a checkpoint for a delta. */
export type WriteOutcome = { ok: true; draft: PreserveDraft } | { ok: false; error: string; aborted?: boolean };

function promptTokensOf(reply: AssistantMessage, fallback: number): number {
  const u = reply.usage;
  const reported = (u?.input ?? 0) + (u?.cacheRead ?? 0) + (u?.cacheWrite ?? 0);
  return reported > 0 ? reported : fallback;
}

function replyText(reply: AssistantMessage): string {
  return reply.content.filter((b) => b.type === "text").map((b) => b.text).join("");
}

export class PreserveHost {
  private readonly pi: ExtensionAPI;
  private readonly session: () => LedgerSession;
  /** The messages of the last provider request, as sent (after every context handler), and the session it belongs to. */
  private lastRequest: { session: LedgerSession; messages: AgentMessage[] } | undefined;

  constructor(pi: ExtensionAPI, session: () => LedgerSession) {
    this.pi = pi;
    this.session = session;
  }

  /** The checkpoint card: one line in the transcript, the full text when expanded. */
  register(): void {
    this.pi.registerMessageRenderer<PreserveDetails>(LedgerType.preserve, (message, options) => {
      const text = typeof message.content === "string" ? message.content : "";
      return new Text(options.expanded ? text : checkpointCardLine(message.details), 1, 0);
    });
  }

  /**
   * context_with_system (notification): remember the request about to be sent. Keeps a reference only; the
   * cache-friendly summary request resends exactly these messages.
   */
  noteRequest(messages: AgentMessage[]): void {
    if (this.session().settings.strategy === "preserve") this.lastRequest = { session: this.session(), messages };
  }

  /**
   * The prefix the summary request continues: the last request as sent when it ended exactly at the boundary (the
   * turn_end case), else the branch projected up to the boundary (manual /compact, after a reload).
   */
  private previousRequest(branch: readonly SessionEntry[], limitId: string): AgentMessage[] {
    const projected = prefixMessages(branch, limitId);
    const last = this.lastRequest;
    if (last && last.session === this.session()) {
      const a = last.messages.at(-1) as { role?: string; timestamp?: number } | undefined;
      const b = projected.at(-1) as { role?: string; timestamp?: number } | undefined;
      if (a && b && a.role === b.role && a.timestamp === b.timestamp) return last.messages;
    }
    return projected;
  }

  /**
   * turn_end: checkpoint older technical state when usage reached window − reserve. `entries` are the drafts other
   * handlers already return for this boundary; the checkpoint is appended after them.
   */
  async onTurnEnd(event: TurnEndEvent, ctx: ExtensionContext, entries: SessionBoundaryDraft[] = event.entries): Promise<TurnEndEventResult | undefined> {
    const session = this.session();
    if (session.settings.strategy !== "preserve") return undefined;
    // One range fact per boundary: a fold committed here already changed the view (the usage figure is stale until
    // the next turn), and a second preserve handler must not checkpoint the same delta twice.
    if (entries.some((d) => d.type === "custom_message" && (d.customType === LedgerType.fold || d.customType === LedgerType.preserve))) return undefined;
    session.sync(ctx.sessionManager);
    const branch = session.live.entries;
    const limitId = entryBefore(branch, event.messageEntryId);
    if (!limitId) return undefined;
    const usage = ctx.getContextUsage();
    const contextWindow = usage?.contextWindow ?? ctx.model?.contextWindow;
    if (!contextWindow) return undefined;
    const delta = selectDelta(branch, limitId);
    if (!delta) return undefined;
    const decision = decideTrigger({ usageTokens: usage?.tokens ?? null, contextWindow, compactableTokens: delta.tokens });
    if (!decision.checkpoint) return undefined;
    const outcome = await this.writeThroughLifecycle(delta, branch, ctx, contextWindow, usage?.tokens ?? null, ctx.signal);
    if (!outcome.ok) {
      if (!outcome.aborted) ctx.ui.notify(`context-ledger: preserve checkpoint skipped: ${outcome.error}`, "warning");
      return undefined;
    }
    return { entries: [...entries, outcome.draft] };
  }

  /**
   * session_before_compact in preserve mode. Threshold: cancelled, because preserve keeps the window at turn_end.
   * Overflow: Pi's native compaction runs, since the request already failed and only a smaller context can recover
   * it (a checkpoint may not free enough when most of the context is dialogue). Manual: checkpoint all raw
   * technical state now and cancel Pi's summary; with nothing to checkpoint, Pi compacts as usual.
   */
  async onBeforeCompact(event: SessionBeforeCompactEvent, ctx: ExtensionContext): Promise<SessionBeforeCompactResult | undefined> {
    const session = this.session();
    if (session.settings.strategy !== "preserve") return undefined;
    if (event.reason === "threshold") return { cancel: true };
    if (event.reason === "overflow") return undefined;
    session.sync(ctx.sessionManager);
    const branch = session.live.entries;
    const limitId = session.live.leafId;
    if (!limitId) return undefined;
    const delta = selectDelta(branch, limitId);
    if (!delta?.units.length) return undefined;
    const usage = ctx.getContextUsage();
    const contextWindow = usage?.contextWindow ?? ctx.model?.contextWindow ?? 128_000;
    const outcome = await this.writeThroughLifecycle(delta, branch, ctx, contextWindow, usage?.tokens ?? null, event.signal);
    if (!outcome.ok) {
      if (outcome.aborted) return { cancel: true };
      ctx.ui.notify(`context-ledger: preserve checkpoint failed (${outcome.error}); Pi compacts natively.`, "warning");
      return undefined;
    }
    const { customType, content, display, details } = outcome.draft;
    this.pi.sendMessage({ customType, content, display, details });
    return { cancel: true };
  }

  /**
   * Run one checkpoint write as a compaction lifecycle (requested → planning → validated → committed, or cancelled on
   * abort, or nativeFallback when it could not be written), so preserve is driven by the same statechart as the
   * other strategies and shows up in the inspector.
   */
  private async writeThroughLifecycle(delta: Delta, branch: readonly SessionEntry[], ctx: ExtensionContext, contextWindow: number, contextBefore: number | null, signal?: AbortSignal): Promise<WriteOutcome> {
    const lifecycle = await startLifecycle(
      { kind: "compaction", strategy: "preserve", request: { units: delta.units.length, tokens: delta.tokens } },
      async (_context, lifecycleSignal) => {
        const outcome = await this.write(delta, branch, ctx, contextWindow, contextBefore, signal ? AbortSignal.any([signal, lifecycleSignal]) : lifecycleSignal);
        return outcome.ok ? { ok: true, plan: outcome.draft } : { ok: false, reason: outcome.error };
      },
      { inspect: this.session().settings.inspect, warn: (m) => ctx.ui.notify(m, "warning") },
    );
    const onAbort = () => lifecycle.actor.send({ type: "host.aborted" });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    const result = await lifecycle.outcome;
    signal?.removeEventListener("abort", onAbort);
    switch (result.outcome) {
      case "committed":
        return { ok: true, draft: result.plan as PreserveDraft };
      case "cancelled":
        return { ok: false, aborted: true, error: result.reason ?? "aborted" };
      case "nativeFallback":
        return { ok: false, error: result.reason ?? "the checkpoint could not be written" };
    }
  }

  /**
   * Write a checkpoint for `delta`: the cache-friendly continuation when it fits, else (or after a failure or length
   * stop) one delta-only request, else the extractive writer. Fails only on abort or when there is nothing to write.
   */
  async write(delta: Delta, branch: readonly SessionEntry[], ctx: ExtensionContext, contextWindow: number, contextBefore: number | null, signal?: AbortSignal): Promise<WriteOutcome> {
    const session = this.session();
    const model = strategyModel(ctx, session.settings.plannerModel) as AnyModel | undefined;
    const reserve = reserveTokens(contextWindow);
    const outputCap = Math.max(256, Math.min(reserve, model?.maxTokens || reserve));
    const aborted = () => signal?.aborted === true;
    const draftOf = (included: readonly DeltaUnit[], carried: readonly DeltaUnit[], throughId: string, body: string, writer: "model" | "delta-only" | "extractive", requestTokens: number) =>
      checkpointDraft({ delta, included, carried, throughId, body, writer, contextBefore, requestTokens });

    if (model) {
      // 1. Cache-friendly: the previous request's exact messages (system message with prompt and tools first), then one
      // ask. It covers the whole delta, since that prefix shows all of it and the ask names its ordinals.
      const prefix = this.previousRequest(branch, delta.limitId);
      const ask = continuationAsk(delta.checkpoint, ordinalsOf(delta.units));
      const shape = chooseRequestShape({
        contextWindow,
        prefixTokens: estimateMessagesTokens(prefix, session.calibration),
        askTokens: estimateTextTokens(ask),
        outputCap,
        deltaOverhead: deltaOnlyOverhead(delta.checkpoint, ordinalsOf(delta.units)),
      });
      if (shape.mode === "continuation") {
        const messages = [...convertToLlm(prefix), { role: "user" as const, content: ask, timestamp: 0 }];
        const attempt = await this.ask(ctx, model, { messages }, shape.maxOutput, signal);
        if (aborted()) return { ok: false, error: "aborted", aborted: true };
        if (attempt.ok) return { ok: true, draft: draftOf(delta.units, [], delta.limitId, attempt.body, "model", attempt.requestTokens) };
      }
    }

    // The delta-only request must fit on its own: the largest older prefix of units that does, the rest stays raw.
    const fitBudget = contextWindow - outputCap - deltaOnlyOverhead(delta.checkpoint, ordinalsOf(delta.units));
    const fitted = fitDelta(delta, fitBudget, unitFitCost);
    if (!fitted.ok) {
      // No summary request can hold the oldest unit (fitDelta fails closed for the model path). The extractive writer
      // needs no request, so it still records that unit's evidence; the raw entries stay recoverable by recall tools.
      if (!delta.units.length) return { ok: false, error: fitted.error };
      ctx.ui.notify(`context-ledger: ${fitted.error}; the checkpoint is written without a model.`, "warning");
      return { ok: true, draft: draftOf(delta.units, [], delta.limitId, writeExtractiveCheckpoint(delta.units), "extractive", 0) };
    }
    if (model) {
      // 2. Delta-only: a tiny instruction and exactly the (fitted) technical delta.
      const request = deltaOnlyRequest(delta.checkpoint, ordinalsOf(fitted.included), fitted.included);
      const attempt = await this.ask(
        ctx,
        model,
        { systemPrompt: request.system, messages: [{ role: "user", content: request.prompt, timestamp: 0 }] },
        outputCap,
        signal,
      );
      if (aborted()) return { ok: false, error: "aborted", aborted: true };
      if (attempt.ok) return { ok: true, draft: draftOf(fitted.included, fitted.carried, fitted.throughId, attempt.body, "delta-only", attempt.requestTokens) };
    }
    // 3. No model, or both requests failed: the deterministic writer never loses the evidence it can read.
    if (aborted()) return { ok: false, error: "aborted", aborted: true };
    const body = writeExtractiveCheckpoint(fitted.included);
    return { ok: true, draft: draftOf(fitted.included, fitted.carried, fitted.throughId, body, "extractive", 0) };
  }

  /** One summary request. Errors, length stops and replies that are not a checkpoint all count as failures. */
  private async ask(ctx: ExtensionContext, model: AnyModel, context: Context, maxTokens: number, signal?: AbortSignal): Promise<Attempt> {
    try {
      const reply = await ctx.modelRegistry.complete(model, context, { signal, maxTokens });
      if (reply.stopReason === "error" || reply.stopReason === "aborted") return { ok: false, reason: reply.errorMessage ?? reply.stopReason };
      if (reply.stopReason === "length") return { ok: false, reason: "the summary stopped at its length limit" };
      const body = normalizeCheckpointText(replyText(reply));
      if (!body) return { ok: false, reason: "the reply was not a Tool Context checkpoint" };
      const fallback = estimateMessagesTokens(context.messages as AgentMessage[]) + estimateTextTokens(context.systemPrompt ?? "");
      return { ok: true, body, requestTokens: promptTokensOf(reply, fallback) };
    } catch (error) {
      return { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
  }
}

/** The model view as the previous provider request saw it: the branch projected up to the boundary. */
export function prefixMessages(branch: readonly SessionEntry[], limitId: string): AgentMessage[] {
  const limit = branch.findIndex((e) => e.id === limitId);
  return projectBranch(branch.slice(0, limit + 1)).messages;
}

/** The configured planner model, or the active one. */
/** The one-line card: checkpoint number, hidden tokens → checkpoint size, and who wrote it. */
export function checkpointCardLine(details: PreserveDetails | undefined): string {
  if (!details) return "Tool Context checkpoint";
  const t = details.tokens;
  const carried = t.carried ? `, ~${t.carried.toLocaleString("en-US")} kept raw` : "";
  return `Tool Context checkpoint #${details.checkpoint}: ~${t.hidden.toLocaleString("en-US")} tok of tool traffic → ~${t.checkpoint.toLocaleString("en-US")} tok (${details.writer}${carried})`;
}

