// The `fold` strategy's host side: the context_compact / context_checkpoint / context_timeline tools and the
// turn_end boundary that commits or cancels a requested fold. execute() only records a request; the fold is
// decided at turn_end, when every sibling result of the step is persisted.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ExtensionAPI, ExtensionContext, TurnEndEvent, TurnEndEventResult } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { quoted } from "../log/display.ts";
import type { SessionEntry } from "../log/entries.ts";
import { foldDraft, noticeDraft, summarySizeError, type StepOutput } from "../strategies/fold/fold-message.ts";
import { assistantAtOrBefore, checkName, validateTarget, type FoldView } from "../strategies/fold/targets.ts";
import { renderTimelinePage } from "../strategies/fold/timeline.ts";
import type { LedgerSession } from "./ledger-session.ts";
import { guardedTool } from "./tool-boundary.ts";
import { startLifecycle, type Lifecycle } from "./lifecycle.ts";

interface PendingFold {
  /** Claimed synchronously in execute(), so parallel sibling calls see each other. */
  lifecycle: Promise<Lifecycle>;
  /** Assistant entry of the step that asked (the parent, for nested codemode calls). */
  requestEntryId: string;
  /** `<id>` or `<parent id>/<n>` for nested calls. */
  requestKey: string;
  target: string;
  summary: string;
  backupCheckpoint?: string;
}

type SessionManagerView = ExtensionContext["sessionManager"];

/** Window assumed when no model is selected, as for compaction. */
const DEFAULT_CONTEXT_WINDOW = 128_000;

/** A read-only view of the branch for the pure fold rules. */
export function foldView(session: LedgerSession, sm: SessionManagerView): FoldView {
  const live = session.live;
  const labels: Record<string, string> = {};
  for (const [id, label] of Object.entries(live.state.labels)) if (live.indexOf(id) >= 0) labels[id] = label;
  return {
    path: live.entries,
    indexOf: (id) => live.indexOf(id),
    isFolded: (id) => live.isFolded(id),
    revokedBy: (id) => live.state.revoked[id],
    state: live.state,
    labels,
    exists: (id) => sm.getEntry(id) !== undefined,
    labelledElsewhere: (name) => {
      const hits: string[] = [];
      for (const entry of sm.getEntries()) {
        if (entry.type === "label" && entry.label === name && live.indexOf(entry.targetId) < 0 && sm.getLabel(entry.targetId) === name)
          hits.unshift(entry.targetId);
      }
      return [...new Set(hits)];
    },
  };
}

/** Find the assistant entry that made `toolCallId`; nested calls resolve to the step's assistant. */
function findRequest(session: LedgerSession, toolCallId: string, nestedCount: number): { entryId: string; key: string } | undefined {
  const path = session.live.entries;
  let lastAssistant: string | undefined;
  for (let i = path.length - 1; i >= 0; i--) {
    const entry = path[i];
    if (entry.type !== "message" || entry.message.role !== "assistant") continue;
    lastAssistant ??= entry.id;
    if (entry.message.content.some((b) => b.type === "toolCall" && b.id === toolCallId)) return { entryId: entry.id, key: entry.id };
    break;
  }
  return lastAssistant ? { entryId: lastAssistant, key: `${lastAssistant}/${nestedCount}` } : undefined;
}

export class FoldCoordinator {
  private pending: PendingFold | undefined;
  /** Steps in which a second compact request voided all of them. */
  private readonly voidedSteps = new Set<string>();
  /** Steps that already made a compact request, accepted or refused. */
  private readonly requestedSteps = new Set<string>();
  private readonly pendingNames = new Set<string>();
  private nested = 0;

  private readonly pi: ExtensionAPI;
  private readonly session: () => LedgerSession;

  constructor(pi: ExtensionAPI, session: () => LedgerSession) {
    this.pi = pi;
    this.session = session;
  }

  register(): void {
    const pi = this.pi;
    pi.registerTool(guardedTool({
      name: "context_compact",
      label: "Compact context",
      description:
        "Fold the conversation after `target` into your `summary`, to free context space once a piece of work is finished. " +
        "Everything after the target (including this call) leaves your context at the end of this step and is replaced by the summary; " +
        "the full history stays recoverable with the context_* recall tools. `target` is a checkpoint name, an entry id from " +
        "context_timeline, or `root` (the start of the current context). Write the summary as a handoff: goal, decisions, current state, " +
        "exact facts still needed (paths, commands, errors), next steps. Optionally name a `backupCheckpoint` to label the pre-fold position. " +
        "Call it at most once per step.",
      promptSnippet: "Fold finished work after a checkpoint into a summary",
      parameters: Type.Object({
        target: Type.String({ description: "Checkpoint name, entry id from context_timeline, or root" }),
        summary: Type.String({ description: "Handoff summary that replaces the folded history" }),
        backupCheckpoint: Type.Optional(Type.String({ description: "Optional checkpoint name for the position before folding" })),
      }),
      execute: async (toolCallId, params, _signal, _onUpdate, ctx) => this.requestFold(toolCallId, params, ctx),
    }));
    pi.registerTool(guardedTool({
      name: "context_checkpoint",
      label: "Context checkpoint",
      description:
        "Label the current position with a checkpoint name, so a later context_compact can fold everything after it. " +
        "Names must be new: not root, not an entry id, not an existing checkpoint.",
      promptSnippet: "Label the current position for a later context_compact",
      parameters: Type.Object({ name: Type.String({ description: "New checkpoint name" }) }),
      execute: async (toolCallId, params, _signal, _onUpdate, ctx) => this.checkpoint(toolCallId, params.name, ctx),
    }));
    pi.registerTool(guardedTool({
      name: "context_timeline",
      label: "Context timeline",
      description:
        "Show the entries currently in your context, oldest first, with their ids and checkpoint names. Entries marked " +
        "'compacted: not a compact target' are already folded or summarized and cannot be used as a context_compact target. " +
        "A long timeline is paged: the first page holds the newest entries; its cursor leads to earlier ones.",
      promptSnippet: "List context entries and checkpoints usable as compact targets",
      parameters: Type.Object({ cursor: Type.Optional(Type.String({ description: "Cursor from the previous page, for earlier entries" })) }),
      execute: async (_toolCallId, params, _signal, _onUpdate, ctx) => {
        const session = this.session();
        session.sync(ctx.sessionManager);
        const page = renderTimelinePage(foldView(session, ctx.sessionManager), params.cursor);
        if ("error" in page) throw new Error(page.error);
        return { content: [{ type: "text", text: page.text }], details: page.nextCursor ? { nextCursor: page.nextCursor } : undefined };
      },
    }));
  }

  private async requestFold(toolCallId: string, params: { target: string; summary: string; backupCheckpoint?: string }, ctx: ExtensionContext) {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const request = findRequest(session, toolCallId, ++this.nested);
    if (!request) throw new Error("context_compact could not find the message that called it; nothing was folded.");
    if (this.requestedSteps.has(request.entryId)) {
      // Every request of the step becomes void, a refused first one included: folding after either would discard
      // what the other one meant to keep.
      this.voidedSteps.add(request.entryId);
      if (this.pending?.requestEntryId === request.entryId) void this.pending.lifecycle.then((l) => l.actor.send({ type: "tool.compactRequested" }));
    }
    this.requestedSteps.add(request.entryId);
    if (this.voidedSteps.has(request.entryId)) throw new Error("context_compact may be called once per step; this step's requests are all cancelled.");
    if (this.pending) void this.pending.lifecycle.then((l) => l.actor.send({ type: "host.runEnded" }));

    if (!params.summary?.trim()) throw new Error("summary must not be empty: it is all that remains of the folded history in your context.");
    const tooLong = summarySizeError(params.summary, ctx.model?.contextWindow ?? DEFAULT_CONTEXT_WINDOW);
    if (tooLong) throw new Error(tooLong);
    const view = foldView(session, ctx.sessionManager);
    const target = validateTarget(params.target, request.entryId, view);
    if (!target.ok) throw new Error(target.error);
    if (params.backupCheckpoint !== undefined) {
      const problem = checkName(params.backupCheckpoint, view, this.pendingNames);
      if (problem) throw new Error(`backupCheckpoint: ${problem}`);
      this.pendingNames.add(params.backupCheckpoint);
    }

    const pending: PendingFold = {
      requestEntryId: request.entryId,
      requestKey: request.key,
      target: params.target,
      summary: params.summary,
      backupCheckpoint: params.backupCheckpoint,
      lifecycle: Promise.resolve(undefined as unknown as Lifecycle),
    };
    pending.lifecycle = startLifecycle(
      { kind: "fold", strategy: "fold", request: { target: params.target, requestKey: request.key } },
      async () => this.planFold(pending, ctx),
      { inspect: session.settings.inspect, warn: (m) => ctx.ui.notify(m, "warning") },
    );
    this.pending = pending;
    await pending.lifecycle;
    return {
      content: [{ type: "text" as const, text: "Compaction requested. It is applied when this step ends; the summary then replaces the history after the target." }],
      details: { requestKey: request.key },
    };
  }


  private async planFold(pending: PendingFold, ctx: ExtensionContext) {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const view = foldView(session, ctx.sessionManager);
    const target = validateTarget(pending.target, pending.requestEntryId, view);
    if (!target.ok) return { ok: false as const, reason: `the target left the context (${target.error})` };
    const throughId = session.live.leafId;
    if (!throughId) return { ok: false as const, reason: "the session is empty" };
    const targetIndex = target.afterId === null ? -1 : session.live.indexOf(target.afterId);
    const keeper = targetIndex >= 0 ? assistantAtOrBefore(view, targetIndex) : undefined;
    const keepsResults = keeper?.type === "message" && keeper.message.role === "assistant" && keeper.message.content.some((b) => b.type === "toolCall");
    const draft = foldDraft({
      summary: pending.summary,
      outputs: this.stepOutputs(pending.requestEntryId, session),
      range: { afterId: target.afterId, throughId, ...(keepsResults ? { keepToolResultsOf: keeper!.id } : {}) },
      requestEntryId: pending.requestEntryId,
      target: pending.target,
      backupCheckpoint: pending.backupCheckpoint,
    });
    return { ok: true as const, plan: draft };
  }

  /** The step's tool calls with their persisted results, in call order. */
  private stepOutputs(requestEntryId: string, session: LedgerSession): StepOutput[] {
    const request = session.live.getEntry(requestEntryId);
    if (request?.type !== "message" || request.message.role !== "assistant") return [];
    const results = new Map<string, AgentMessage>();
    const path = session.live.entries;
    for (let i = session.live.indexOf(requestEntryId) + 1; i < path.length; i++) {
      const entry = path[i] as SessionEntry;
      if (entry.type === "message" && entry.message.role === "toolResult") results.set(entry.message.toolCallId, entry.message);
    }
    return request.message.content
      .filter((b) => b.type === "toolCall")
      .map((call) => ({ toolName: call.name, args: call.arguments, result: results.get(call.id) }));
  }

  private checkpoint(toolCallId: string, name: string, ctx: ExtensionContext) {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const request = findRequest(session, toolCallId, ++this.nested);
    if (!request) throw new Error("context_checkpoint could not find the message that called it.");
    const view = foldView(session, ctx.sessionManager);
    const problem = checkName(name, view, this.pendingNames);
    if (problem) throw new Error(problem);
    const existing = ctx.sessionManager.getLabel(request.entryId);
    if (existing) throw new Error(`this position already has the checkpoint ${quoted(existing)}; relabelling would lose it. Use that name.`);
    this.pi.setLabel(request.entryId, name);
    return { content: [{ type: "text" as const, text: `Checkpoint "${name}" set at entry ${request.entryId}.` }], details: { entryId: request.entryId } };
  }

  /** turn_end boundary: commit or cancel the pending fold of this step. */
  async onTurnEnd(event: TurnEndEvent, ctx: ExtensionContext): Promise<TurnEndEventResult | undefined> {
    const pending = this.pending;
    // The step is over: its request bookkeeping goes with it.
    this.requestedSteps.clear();
    this.voidedSteps.clear();
    if (!pending) return undefined;
    this.pending = undefined;
    this.session().sync(ctx.sessionManager);
    const lifecycle = await pending.lifecycle;
    lifecycle.actor.send({
      type: "host.turnEnded",
      aborted: Boolean(ctx.signal?.aborted) || event.outcome === "aborted",
      sameStep: event.messageEntryId === pending.requestEntryId,
    });
    const outcome = await lifecycle.outcome;
    this.pendingNames.clear();
    if (outcome.outcome === "committed") {
      const draft = outcome.plan as ReturnType<typeof foldDraft>;
      if (pending.backupCheckpoint) this.pi.setLabel(draft.details.range.throughId, pending.backupCheckpoint);
      return { entries: [...event.entries, draft], continue: true };
    }
    return { entries: [...event.entries, noticeDraft(outcome.reason ?? "it could not be applied")] };
  }

  /** Safety net: a request whose step never reached turn_end is dropped, and the model hears about it next turn. */
  onAgentEnd(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    this.pendingNames.clear();
    void pending.lifecycle.then((l) => l.actor.send({ type: "host.runEnded" }));
    const notice = noticeDraft("the step ended before the fold could be applied");
    this.pi.sendMessage({ customType: notice.customType, content: notice.content, display: false, details: notice.details }, { deliverAs: "nextTurn" });
  }

  /** Session replaced (new, resume, fork): nothing pending survives. */
  reset(): void {
    void this.pending?.lifecycle.then((l) => l.actor.send({ type: "host.sessionReplaced" }));
    this.pending = undefined;
    this.pendingNames.clear();
    this.voidedSteps.clear();
    this.requestedSteps.clear();
  }
}
