// The `preserve` strategy's hooks. At every turn_end it checks the reserve and, when needed, appends one tool summary
// (model-written, cache-friendly first, then delta-only, then extractive). It plans session_before_compact for a
// manual /compact (a tool summary, then a marker compaction so /compact ends as a success) and renders the summary
// card with its token accounting.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type {
  Api,
  AssistantMessage,
  Context,
  Model,
  ModelThinkingLevel,
  SimpleStreamOptions,
} from "@earendil-works/pi-ai";
import type {
  ExtensionContext,
  SessionBeforeCompactEvent,
  SessionBoundaryDraft,
  TurnEndEvent,
  TurnEndEventResult,
} from "@earendil-works/pi-coding-agent";
import type { SessionEntry } from "../../log/entries.ts";
import { LedgerType, LEDGER_FACTS } from "../catalog.ts";
import { projectBranch } from "../../projection/project.ts";
import { contextStartId } from "../shared/context-start.ts";
import { estimateMessagesTokens, estimateTextTokens } from "../../projection/tokens.ts";
import type {
  LedgerSessionView,
  LifecycleEffects,
  LifecycleRequest,
  ManualCompactSwitch,
  PlanResult,
  StrategyKit,
} from "../contract.ts";
import { checkpointDraft, type CheckpointWriter, type PreserveDetails, type PreserveDraft } from "./checkpoint.ts";
import { fitDelta, ordinalsOf, selectDelta, type Delta, type DeltaUnit } from "../shared/delta.ts";
import { writeExtractiveCheckpoint } from "./extractive.ts";
import {
  chooseRequestShape,
  continuationAsk,
  deltaOnlyOverhead,
  deltaOnlyRequest,
  judgeReply,
  unitFitCost,
  type ReplyVerdict,
} from "./prompt.ts";
import { summaryReport } from "./report.ts";
import { liveRequestOptions } from "./request-options.ts";
import { checkpointDue, limitBefore } from "./due.ts";
import { reserveTokens } from "./reserve.ts";
import { preserveAppliesTo, type PreserveOptions } from "./settings.ts";
import { forTerminal } from "../../log/display.ts";

type AnyModel = Model<Api>;

/** What one summary attempt produced. */
type Attempt = { ok: true; body: string; requestTokens: number } | Extract<ReplyVerdict, { ok: false }>;

/** Outcome of writing a checkpoint for a delta. */
export type WriteOutcome = { ok: true; draft: PreserveDraft } | { ok: false; error: string; aborted?: boolean };

/** Where and why a checkpoint is written. */
export interface WriteRequest {
  contextWindow: number;
  /** Pi's usage at the boundary (null when unknown). */
  contextBefore: number | null;
  /** Custom instructions given to /compact: the checkpoint's focus. */
  focus?: string;
  signal?: AbortSignal;
}

function promptTokensOf(reply: AssistantMessage, fallback: number): number {
  const u = reply.usage;
  const reported = (u?.input ?? 0) + (u?.cacheRead ?? 0) + (u?.cacheWrite ?? 0);
  return reported > 0 ? reported : fallback;
}

/** Prompt tokens the provider reported for the newest reply on the branch (0 when none did). */
function reportedPromptTokens(branch: readonly SessionEntry[]): number {
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry.type === "message" && entry.message.role === "assistant") return promptTokensOf(entry.message, 0);
  }
  return 0;
}

function sameModel(a: AnyModel | undefined, b: AnyModel | undefined): boolean {
  return a !== undefined && b !== undefined && a.provider === b.provider && a.id === b.id;
}

export class PreserveHost {
  private readonly kit: StrategyKit<PreserveOptions>;
  private readonly session: () => LedgerSessionView;
  /** The messages of the last provider request, as sent (after every context handler), and the session it belongs to. */
  private lastRequest: { session: LedgerSessionView; messages: AgentMessage[] } | undefined;
  /** The thinking level the last live request asked for, as Pi recorded it on the response. */
  private liveThinking: { session: LedgerSessionView; level: ModelThinkingLevel | undefined } | undefined;
  /** The context of the current session, for the shim's "is preserve active" question. */
  private ctx: ExtensionContext | undefined;
  private readonly shim: ManualCompactSwitch;
  /** The newest assistant response of this session (an overflow error keeps Pi's own recovery). */
  private lastResponse: AssistantMessage | undefined;
  private readonly warned = new Set<string>();

  constructor(kit: StrategyKit<PreserveOptions>) {
    this.kit = kit;
    this.session = kit.session;
    this.shim = kit.manualCompactSwitch();
  }

  /**
   * The tool summary card: its full token accounting and the text, whether or not Pi's tool output is expanded (a
   * report that collapsed to one line would hide what the compaction did).
   */
  register(): void {
    this.kit.registerMessageCard<PreserveDetails>(LedgerType.preserve, ({ content, details }) =>
      details ? `${summaryReport(details)}\n\n${content}` : content,
    );
  }

  /** True when preserve manages this session's context for the current model (the host calls it only while configured). */
  active(ctx: ExtensionContext | undefined): boolean {
    return preserveAppliesTo(this.kit.options(), ctx?.model);
  }

  private warnOnce(ctx: ExtensionContext, key: string, message: string): void {
    if (this.warned.has(key)) return;
    this.warned.add(key);
    ctx.ui.notify(forTerminal(message), "warning");
  }

  /** session_start: install the manual /compact shim while the strategy is preserve. */
  onSessionStart(ctx: ExtensionContext): void {
    this.ctx = ctx;
    this.lastRequest = undefined;
    this.liveThinking = undefined;
    this.lastResponse = undefined;
    if (
      !this.shim.install(() => this.active(this.ctx), { autoCompactionOff: { lastResponse: () => this.lastResponse } })
    ) {
      this.warnOnce(
        ctx,
        "shim",
        "context-ledger: preserve could not adjust Pi's compaction settings in memory; Pi's automatic compaction may start before preserve's own (preserve then cancels it), and /compact on a short session keeps Pi's answer.",
      );
    }
  }

  /** session_shutdown: Pi's own compaction settings apply again. */
  onSessionShutdown(): void {
    this.shim.uninstall();
    this.ctx = undefined;
  }

  /** An agent run started or settled: between runs, only a manual /compact can start a compaction. */
  onBeforeAgentStart(): void {
    this.shim.beforeAgentStart();
  }

  onAgentSettled(): void {
    this.shim.agentSettled();
  }

  /**
   * context_with_system (notification): remember the request about to be sent. Keeps a reference only; the
   * cache-friendly summary request resends exactly these messages.
   */
  noteRequest(messages: AgentMessage[]): void {
    this.lastRequest = { session: this.session(), messages };
  }

  /** message_end of an assistant response: the reasoning level its request asked for (Pi records it there). */
  noteResponse(message: AssistantMessage): void {
    this.liveThinking = { session: this.session(), level: message.thinkingLevel };
    this.lastResponse = message;
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
   * handlers already return for this boundary; the checkpoint is appended after them. Whether one is due is decided
   * here (a cheap check on every boundary); the write runs through the chart.
   */
  async onTurnEnd(
    event: TurnEndEvent,
    ctx: ExtensionContext,
    entries: SessionBoundaryDraft[] = event.entries,
  ): Promise<TurnEndEventResult | undefined> {
    if (!this.active(ctx)) return undefined;
    if (!this.due(event, ctx, entries)) return undefined;
    const request: LifecycleRequest = { moment: { type: "turn_end", event, entries }, ctx, trace: {} };
    const decision = await this.kit.chart.run("turnEnd", request, { signal: ctx.signal }).decision;
    if (decision.state !== "validated") {
      if (decision.reason && !ctx.signal?.aborted)
        ctx.ui.notify(forTerminal(`context-ledger: preserve: tool summary skipped: ${decision.reason}`), "warning");
      return undefined;
    }
    return { entries: [...entries, ...(decision.facts.entries ?? [])] };
  }

  /** Whether a checkpoint is due at this boundary: the one decision the lab's preserve row makes too. */
  private due(event: TurnEndEvent, ctx: ExtensionContext, entries: readonly SessionBoundaryDraft[]): boolean {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const usage = ctx.getContextUsage();
    return checkpointDue({
      branch: session.live.entries,
      stepEntryId: event.messageEntryId,
      stopReason: event.message.role === "assistant" ? event.message.stopReason : undefined,
      drafts: entries.map((d) => (d.type === "custom_message" ? d.customType : undefined)),
      usageTokens: usage?.tokens ?? null,
      contextWindow: usage?.contextWindow ?? ctx.model?.contextWindow,
    }).due;
  }

  /** The delta a checkpoint at this boundary would cover (older than the step that just ended), and the window. */
  private boundary(
    event: TurnEndEvent,
    ctx: ExtensionContext,
  ): { branch: readonly SessionEntry[]; delta: Delta; contextWindow: number; usageTokens: number | null } | undefined {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const branch = session.live.entries;
    const limitId = limitBefore(branch, event.messageEntryId);
    if (!limitId) return undefined;
    const usage = ctx.getContextUsage();
    const contextWindow = usage?.contextWindow ?? ctx.model?.contextWindow;
    if (!contextWindow) return undefined;
    const delta = selectDelta(branch, limitId);
    return delta ? { branch, delta, contextWindow, usageTokens: usage?.tokens ?? null } : undefined;
  }

  /** The chart's planner: a checkpoint at a step boundary, or for a manual /compact. */
  readonly effects: LifecycleEffects = {
    plan: async (request, signal) => {
      const { moment, ctx } = request;
      if (moment.type === "turn_end") {
        const boundary = this.boundary(moment.event, ctx);
        if (!boundary) return { ok: false, reason: "no tool state to summarize at this boundary" };
        const outcome = await this.write(boundary.delta, boundary.branch, ctx, {
          contextWindow: boundary.contextWindow,
          contextBefore: boundary.usageTokens,
          signal: AbortSignal.any([signal, ...(ctx.signal ? [ctx.signal] : [])]),
        });
        return outcome.ok ? { ok: true, plan: { entries: [outcome.draft] } } : { ok: false, reason: outcome.error };
      }
      if (moment.type === "session_before_compact") return this.planManual(moment.event, ctx, signal);
      return { ok: false, reason: "preserve plans step boundaries and /compact only" };
    },
  };

  /**
   * A manual /compact (threshold and overflow are routed by the chart): checkpoint all raw technical state now, then
   * answer Pi with a marker compaction so /compact ends as a success; the model view stays what it was, minus the
   * checkpointed state.
   */
  private async planManual(
    event: SessionBeforeCompactEvent,
    ctx: ExtensionContext,
    signal: AbortSignal,
  ): Promise<PlanResult> {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const branch = session.live.entries;
    const limitId = session.live.leafId;
    if (!limitId) return { ok: false, reason: "the session is empty" };
    // Pi prepared this compaction with keepRecentTokens lowered by the shim: its own summary would keep almost nothing.
    const lowered = event.preparation.settings.keepRecentTokens === 1;
    const delta = selectDelta(branch, limitId);
    if (!delta?.units.length) {
      if (!lowered) return { ok: false, reason: "no raw tool state since the last tool summary" };
      ctx.ui.notify(
        forTerminal(
          "context-ledger: no tool summary: no raw tool state since the last one, and preserve keeps the dialogue verbatim.",
        ),
        "info",
      );
      return { ok: true, plan: { declineCompaction: true } };
    }
    const usage = ctx.getContextUsage();
    const contextWindow = usage?.contextWindow ?? ctx.model?.contextWindow ?? 128_000;
    const outcome = await this.write(delta, branch, ctx, {
      contextWindow,
      contextBefore: usage?.tokens ?? null,
      focus: event.customInstructions,
      signal: AbortSignal.any([signal, event.signal]),
    });
    if (!outcome.ok) {
      if (outcome.aborted) return { ok: false, reason: "aborted" };
      return lowered ? { ok: true, plan: { declineCompaction: true } } : { ok: false, reason: outcome.error };
    }
    const { customType, content, display, details } = outcome.draft;
    return {
      ok: true,
      plan: {
        messages: [{ customType, content, display, details }],
        compaction: {
          summary: content,
          firstKeptEntryId: contextStartId(session),
          tokensBefore: event.preparation.tokensBefore,
          details: { v: 1, strategy: "preserve", checkpoint: details.checkpoint },
        },
      },
    };
  }

  /** The model that writes tool summaries: `preserve.summaryModel`, else `plannerModel`, else the active model. */
  private summaryModel(ctx: ExtensionContext): AnyModel | undefined {
    const options = this.kit.options();
    const configured = options.summaryModel ?? this.session().settings.plannerModel;
    const model = this.kit.resolveModel(ctx, configured) as AnyModel | undefined;
    if (configured && !model) {
      const key = options.summaryModel ? "contextLedger.preserve.summaryModel" : "contextLedger.plannerModel";
      this.warnOnce(
        ctx,
        `model:${configured}`,
        `context-ledger: ${key} "${configured}" is not available; preserve writes its tool summaries with the active model.`,
      );
      return ctx.model as AnyModel | undefined;
    }
    return model;
  }

  /**
   * Write a checkpoint for `delta`: the cache-friendly continuation when it fits, else (or after a failure or length
   * stop) one delta-only request, else the extractive writer. A reply that calls a tool or shows no text gets one
   * text-only retry. Fails only on abort or when there is nothing to write.
   */
  async write(
    delta: Delta,
    branch: readonly SessionEntry[],
    ctx: ExtensionContext,
    request: WriteRequest,
  ): Promise<WriteOutcome> {
    const session = this.session();
    const { contextWindow, contextBefore, focus, signal } = request;
    const model = this.summaryModel(ctx);
    const reserve = reserveTokens(contextWindow);
    const outputCap = Math.max(256, Math.min(reserve, model?.maxTokens || reserve));
    const aborted = () => signal?.aborted === true;
    const draftOf = (
      included: readonly DeltaUnit[],
      carried: readonly DeltaUnit[],
      throughId: string,
      body: string,
      writer: CheckpointWriter,
      requestTokens: number,
      note?: string,
    ) =>
      checkpointDraft({
        delta,
        included,
        carried,
        throughId,
        body,
        writer,
        contextBefore,
        contextWindow,
        requestTokens,
        note,
      });
    const ordinals = ordinalsOf(delta.units);
    let textOnlyRetry = true;
    const attempt = async (writer: AnyModel, context: Context, maxTokens: number): Promise<Attempt> => {
      let result = await this.ask(ctx, writer, context, this.requestOptions(ctx, maxTokens, signal));
      if (!result.ok && result.textOnlyRetry && textOnlyRetry && !aborted()) {
        textOnlyRetry = false;
        ctx.ui.notify(
          forTerminal(`context-ledger: preserve: ${result.reason}; asking once more with tools off.`),
          "info",
        );
        result = await this.ask(ctx, writer, context, this.requestOptions(ctx, maxTokens, signal, "none"));
      }
      return result;
    };
    // Every switch to the delta-only request is told: it re-sends the delta uncached, and a long compaction should not
    // look stuck.
    const toDeltaOnly = (why: string) =>
      ctx.ui.notify(
        forTerminal(
          `context-ledger: preserve: ${why}; writing tool summary #${delta.checkpoint} from its tool activity only (delta-only).`,
        ),
        "info",
      );

    // 1. Cache-friendly: the previous request's exact messages (system message with prompt and tools first), then one
    // ask. It covers the whole delta, since that prefix shows all of it and the ask names its ordinals. Only the live
    // model has that prefix cached, so another summary model goes straight to the delta-only form.
    if (model && sameModel(model, ctx.model as AnyModel | undefined)) {
      const prefix = this.previousRequest(branch, delta.limitId);
      const ask = continuationAsk(delta.checkpoint, ordinals, focus);
      // When the prefix is the request just sent, the provider already said how big it is; one large report barely
      // moves the averaged estimate, and a continuation of an overflowing request would only overflow again.
      const estimated = estimateMessagesTokens(prefix, session.calibration);
      const shape = chooseRequestShape({
        contextWindow,
        prefixTokens:
          prefix === this.lastRequest?.messages ? Math.max(estimated, reportedPromptTokens(branch)) : estimated,
        askTokens: estimateTextTokens(ask),
        outputCap,
        deltaOverhead: deltaOnlyOverhead(delta.checkpoint, ordinals, focus),
      });
      if (shape.mode === "continuation") {
        const messages = [...this.kit.convertToLlm(prefix), { role: "user" as const, content: ask, timestamp: 0 }];
        const result = await attempt(model, { messages }, shape.maxOutput);
        if (aborted()) return { ok: false, error: "aborted", aborted: true };
        if (result.ok)
          return {
            ok: true,
            draft: draftOf(delta.units, [], delta.limitId, result.body, "model", result.requestTokens),
          };
        toDeltaOnly(`the cache-friendly summary request failed (${result.reason.slice(0, 200)})`);
      } else {
        toDeltaOnly("the cache-friendly summary request would not fit the window");
      }
    }

    // The delta-only request must fit on its own: the largest older prefix of units that does, the rest stays raw.
    const fitBudget = contextWindow - outputCap - deltaOnlyOverhead(delta.checkpoint, ordinals, focus);
    const fitted = fitDelta(delta, fitBudget, unitFitCost);
    if (!fitted.ok) {
      // No summary request can hold the oldest unit (fitDelta fails closed for the model path). The extractive writer
      // needs no request, so it still records that unit's evidence; the raw entries stay recoverable by recall tools.
      if (!delta.units.length) return { ok: false, error: fitted.error };
      const first = delta.units[0];
      const note = `one tool step (~${unitFitCost(first).toLocaleString("en-US")} tokens) is larger than any summary request (~${Math.max(0, fitBudget).toLocaleString("en-US")} tokens), so this tool summary was written without a model`;
      ctx.ui.notify(
        forTerminal(
          `context-ledger: ${note}; its raw output stays recoverable with context_grep and context_show_entry.`,
        ),
        "warning",
      );
      return {
        ok: true,
        draft: draftOf(delta.units, [], delta.limitId, writeExtractiveCheckpoint(delta.units), "extractive", 0, note),
      };
    }
    if (model) {
      // 2. Delta-only: a tiny instruction and exactly the (fitted) technical delta.
      const shell = deltaOnlyRequest(delta.checkpoint, ordinalsOf(fitted.included), fitted.included, focus);
      const result = await attempt(
        model,
        { systemPrompt: shell.system, messages: [{ role: "user", content: shell.prompt, timestamp: 0 }] },
        outputCap,
      );
      if (aborted()) return { ok: false, error: "aborted", aborted: true };
      if (result.ok)
        return {
          ok: true,
          draft: draftOf(
            fitted.included,
            fitted.carried,
            fitted.throughId,
            result.body,
            "delta-only",
            result.requestTokens,
          ),
        };
    }
    // 3. No model, or both requests failed: the deterministic writer never loses the evidence it can read.
    if (aborted()) return { ok: false, error: "aborted", aborted: true };
    const body = writeExtractiveCheckpoint(fitted.included);
    return { ok: true, draft: draftOf(fitted.included, fitted.carried, fitted.throughId, body, "extractive", 0) };
  }

  /**
   * Options of a checkpoint request: those of the live request it continues (session id as prompt-cache key,
   * reasoning, transport, timeouts, retries), the configured reasoning effort and cache retention when set, and
   * `disableContinuation`, so a provider that threads requests server-side does not take this side request for the
   * conversation's next turn. Tool choice stays unset like the live request's, except on the text-only retry.
   */
  private requestOptions(
    ctx: ExtensionContext,
    maxTokens: number,
    signal: AbortSignal | undefined,
    toolChoice?: "none",
  ): SimpleStreamOptions {
    const configured = this.kit.options();
    const thinking = this.liveThinking?.session === this.session() ? this.liveThinking.level : this.kit.thinkingLevel();
    const live = liveRequestOptions(this.kit.piSettings(), ctx.sessionManager.getSessionId(), thinking);
    const options: SimpleStreamOptions = { ...live, maxTokens, signal, disableContinuation: true };
    if (configured.reasoningEffort === "off") delete options.reasoning;
    else if (configured.reasoningEffort) options.reasoning = configured.reasoningEffort;
    if (configured.cacheRetention) options.cacheRetention = configured.cacheRetention;
    if (toolChoice) options.toolChoice = toolChoice;
    return options;
  }

  /**
   * One summary request, retried on transient provider errors under Pi's `settings.retry` (each retry is told), and
   * judged by {@link judgeReply}.
   */
  private async ask(
    ctx: ExtensionContext,
    model: AnyModel,
    context: Context,
    options: SimpleStreamOptions,
  ): Promise<Attempt> {
    try {
      const reply = await this.kit.retrying(
        () => ctx.modelRegistry.streamSimple(model, context, options).result(),
        options.signal,
        (n) =>
          ctx.ui.notify(
            // The provider's words (cut to 200 characters by the retry loop) are escaped before they reach the terminal.
            forTerminal(
              `context-ledger: preserve: the tool summary request failed (${n.error}); retry ${n.attempt}/${n.maxRetries} in ${(n.delayMs / 1000).toFixed(1)}s.`,
            ),
            "warning",
          ),
      );
      const text = reply.content
        .filter((b) => b.type === "text")
        .map((b) => b.text)
        .join("");
      const toolCalls = reply.content.filter((b) => b.type === "toolCall").length;
      const verdict = judgeReply(
        { stopReason: reply.stopReason, errorMessage: reply.errorMessage, text, toolCalls },
        options.maxTokens ?? Number.POSITIVE_INFINITY,
      );
      if (!verdict.ok) return verdict;
      const fallback =
        estimateMessagesTokens(context.messages as AgentMessage[]) + estimateTextTokens(context.systemPrompt ?? "");
      return { ok: true, body: verdict.body, requestTokens: promptTokensOf(reply, fallback) };
    } catch (error) {
      return { ok: false, reason: error instanceof Error ? error.message : String(error), textOnlyRetry: false };
    }
  }
}

/** The model view as the previous provider request saw it: the branch projected up to the boundary. */
export function prefixMessages(branch: readonly SessionEntry[], limitId: string): AgentMessage[] {
  const limit = branch.findIndex((e) => e.id === limitId);
  return projectBranch(branch.slice(0, limit + 1), LEDGER_FACTS).messages;
}
