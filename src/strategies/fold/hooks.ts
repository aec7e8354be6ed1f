// The `fold` strategy's hooks: the context_compact / context_checkpoint / context_timeline tools and the
// turn_end boundary that commits or cancels a requested fold. execute() only records a request; the fold is
// decided at turn_end, when every sibling result of the step is persisted.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ExtensionContext, TurnEndEvent, TurnEndEventResult } from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { quoted } from "../../log/display.ts";
import type { SessionEntry } from "../../log/entries.ts";
import { LedgerType } from "../catalog.ts";
import { idRecord } from "../../projection/ledger-state.ts";
import type { ChartRun, FoldCall, LedgerSessionView, LifecycleEffects, StrategyKit } from "../contract.ts";
import { foldDraft, noticeDraft, summarySizeError, type StepOutput } from "./fold-message.ts";
import { assistantAtOrBefore, checkName, validateTarget, type FoldView } from "./targets.ts";
import { renderTimelinePage } from "./timeline.ts";

/** The step's fold request: its chart run (the one record of "a request was made in this step"), and what it asked. */
interface PendingFold {
  /** Claimed synchronously at the call, so a parallel sibling call of the same step sees it. */
  run: ChartRun;
  /** Assistant entry of the step that asked (the parent, for nested codemode calls). */
  requestEntryId: string;
  /** Set when the request was refused at the call: the model already heard why, so no notice follows. */
  refused: boolean;
}

type SessionManagerView = ExtensionContext["sessionManager"];

/** Window assumed when no model is selected, as for compaction. */
const DEFAULT_CONTEXT_WINDOW = 128_000;

/**
 * A read-only view of the branch for the pure fold targeting rules. Labels come from Pi's label store
 * (`getLabel`), whatever branch the label entry sits on: `/tree` can leave a label entry behind on another branch
 * (back to the labelled entry, or a label set from the tree view), and the label still holds for its target.
 */
export function foldView(session: LedgerSessionView, sm: SessionManagerView): FoldView {
  const live = session.live;
  const labels = idRecord<string>();
  // Off-path holders per name, newest label entry first.
  const elsewhere = new Map<string, string[]>();
  const targets = new Set<string>();
  const entries = sm.getEntries();
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (entry.type !== "label" || targets.has(entry.targetId)) continue;
    targets.add(entry.targetId);
    const label = sm.getLabel(entry.targetId);
    if (!label) continue;
    if (live.indexOf(entry.targetId) >= 0) labels[entry.targetId] = label;
    else {
      const holders = elsewhere.get(label);
      if (holders) holders.push(entry.targetId);
      else elsewhere.set(label, [entry.targetId]);
    }
  }
  return {
    path: live.entries,
    indexOf: (id) => live.indexOf(id),
    isHidden: (id) => live.isHidden(id),
    revokedBy: (id) => live.state.revoked[id],
    isPinned: (id) => live.isPinned(id),
    state: live.state,
    labels,
    exists: (id) => sm.getEntry(id) !== undefined,
    labelledElsewhere: (name) => elsewhere.get(name) ?? [],
  };
}

/** Find the assistant entry that made `toolCallId`; nested calls resolve to the step's assistant. */
function findRequest(
  session: LedgerSessionView,
  toolCallId: string,
  nestedCount: number,
): { entryId: string; key: string } | undefined {
  const path = session.live.entries;
  let lastAssistant: string | undefined;
  for (let i = path.length - 1; i >= 0; i--) {
    const entry = path[i];
    if (entry.type !== "message" || entry.message.role !== "assistant") continue;
    lastAssistant ??= entry.id;
    if (entry.message.content.some((b) => b.type === "toolCall" && b.id === toolCallId))
      return { entryId: entry.id, key: entry.id };
    break;
  }
  return lastAssistant ? { entryId: lastAssistant, key: `${lastAssistant}/${nestedCount}` } : undefined;
}

export class FoldCoordinator {
  private pending: PendingFold | undefined;
  private readonly pendingNames = new Set<string>();
  private nested = 0;

  private readonly kit: StrategyKit;
  private readonly session: () => LedgerSessionView;

  constructor(kit: StrategyKit) {
    this.kit = kit;
    this.session = kit.session;
  }

  /** The tools, and the fold's card: the transcript keeps showing folded history, the fold itself is one line. */
  register(): void {
    const kit = this.kit;
    kit.registerMessageCard(LedgerType.fold, (message, options) =>
      options.expanded ? message.content : "Context compacted (expand to read the summary)",
    );
    kit.registerTool({
      name: "context_compact",
      label: "Compact context",
      description:
        "Fold the conversation after `target` into your `summary`, to free context space once a piece of work is finished. " +
        "Everything after the target (including this call) leaves your context at the end of this step and is replaced by the summary; " +
        "the full history stays recoverable with the context_* recall tools. `target` is a label set with context_checkpoint, an entry id from " +
        "context_timeline, or `root` (the start of the current context). Write the summary as a handoff: goal, decisions, current state, " +
        "exact facts still needed (paths, commands, errors), next steps. Optionally name a `backupCheckpoint` to label the pre-fold position. " +
        "Call it at most once per step.",
      promptSnippet: "Fold finished work after a label or entry into a summary",
      parameters: Type.Object({
        target: Type.String({ description: "Label, entry id from context_timeline, or root" }),
        summary: Type.String({ description: "Handoff summary that replaces the folded history" }),
        backupCheckpoint: Type.Optional(
          Type.String({ description: "Optional new label for the position before folding" }),
        ),
      }),
      execute: async (toolCallId, params, _signal, _onUpdate, ctx) => this.requestFold(toolCallId, params, ctx),
    });
    kit.registerTool({
      name: "context_checkpoint",
      label: "Context label",
      description:
        "Set a label on the current position, so a later context_compact can fold everything after it. " +
        "A label must be new: not root, not an entry id, not an existing label.",
      promptSnippet: "Label the current position for a later context_compact",
      parameters: Type.Object({ name: Type.String({ description: "New label" }) }),
      execute: async (toolCallId, params, _signal, _onUpdate, ctx) => this.checkpoint(toolCallId, params.name, ctx),
    });
    kit.registerTool({
      name: "context_timeline",
      label: "Context timeline",
      description:
        "Show the entries currently in your context, oldest first, with their ids and labels. Entries marked " +
        "'compacted: not a compact target' are already folded or summarized and cannot be used as a context_compact target. " +
        "A long timeline is paged: the first page holds the newest entries; its cursor leads to earlier ones.",
      promptSnippet: "List context entries and labels usable as compact targets",
      parameters: Type.Object({
        cursor: Type.Optional(Type.String({ description: "Cursor from the previous page, for earlier entries" })),
      }),
      execute: async (_toolCallId, params, _signal, _onUpdate, ctx) => {
        const session = this.session();
        session.sync(ctx.sessionManager);
        const page = renderTimelinePage(foldView(session, ctx.sessionManager), params.cursor);
        if ("error" in page) throw new Error(page.error);
        return {
          content: [{ type: "text", text: page.text }],
          details: page.nextCursor ? { nextCursor: page.nextCursor } : undefined,
        };
      },
    });
  }

  private async requestFold(toolCallId: string, params: FoldCall, ctx: ExtensionContext) {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const request = findRequest(session, toolCallId, ++this.nested);
    if (!request) throw new Error("context_compact could not find the message that called it; nothing was folded.");
    const current = this.pending;
    if (current?.requestEntryId === request.entryId) {
      // A second request in the step voids every request of the step, a refused first one included: folding after
      // either would discard what the other one meant to keep. The step's run records it. The model heard why the
      // first call was refused, not that the step's requests are void: the notice at turn_end says so.
      current.refused = false;
      current.run.send({ type: "tool.compactRequested" });
      throw new Error("context_compact may be called once per step; this step's requests are all cancelled.");
    }
    if (current) current.run.send({ type: "host.runEnded" });
    const refusal = this.refusal(params, request.entryId, ctx);
    const moment = {
      type: "tool" as const,
      call: params,
      toolCallId,
      requestEntryId: request.entryId,
      requestKey: request.key,
    };
    const run = this.kit.chart.run("tool", { moment, ctx, trace: {} }, { refused: refusal });
    this.pending = { run, requestEntryId: request.entryId, refused: refusal !== undefined };
    if (refusal !== undefined) throw new Error(refusal);
    return {
      content: [
        {
          type: "text" as const,
          text: "Compaction requested. It is applied when this step ends; the summary then replaces the history after the target.",
        },
      ],
      details: { requestKey: request.key },
    };
  }

  /** Why a request cannot be accepted as written, or undefined. */
  private refusal(params: FoldCall, requestEntryId: string, ctx: ExtensionContext): string | undefined {
    if (!params.summary?.trim())
      return "summary must not be empty: it is all that remains of the folded history in your context.";
    const tooLong = summarySizeError(params.summary, ctx.model?.contextWindow ?? DEFAULT_CONTEXT_WINDOW);
    if (tooLong) return tooLong;
    const view = foldView(this.session(), ctx.sessionManager);
    const target = validateTarget(params.target, requestEntryId, view);
    if (!target.ok) return target.error;
    if (params.backupCheckpoint !== undefined) {
      const problem = checkName(params.backupCheckpoint, view, this.pendingNames);
      if (problem) return `backupCheckpoint: ${problem}`;
      this.pendingNames.add(params.backupCheckpoint);
    }
    return undefined;
  }

  /** The chart's planner and validator: the fold's range and summary at the end of the step, on the branch as stored. */
  readonly effects: LifecycleEffects = {
    plan: async (request) => {
      const { moment, ctx } = request;
      if (moment.type !== "tool") return { ok: false, reason: "a fold is planned from a context_compact call" };
      const session = this.session();
      session.sync(ctx.sessionManager);
      const view = foldView(session, ctx.sessionManager);
      const target = validateTarget(moment.call.target, moment.requestEntryId, view);
      if (!target.ok) return { ok: false, reason: `the target left the context (${target.error})` };
      const throughId = session.live.leafId;
      if (!throughId) return { ok: false, reason: "the session is empty" };
      const targetIndex = target.afterId === null ? -1 : session.live.indexOf(target.afterId);
      const keeper = targetIndex >= 0 ? assistantAtOrBefore(view, targetIndex) : undefined;
      const keepsResults =
        keeper?.type === "message" &&
        keeper.message.role === "assistant" &&
        keeper.message.content.some((b) => b.type === "toolCall");
      const draft = foldDraft({
        summary: moment.call.summary,
        outputs: this.stepOutputs(moment.requestEntryId, session),
        range: {
          afterId: target.afterId,
          throughId,
          ...(keepsResults && keeper ? { keepToolResultsOf: keeper.id } : {}),
        },
        requestEntryId: moment.requestEntryId,
        target: moment.call.target,
        backupCheckpoint: moment.call.backupCheckpoint,
      });
      return {
        ok: true,
        plan: {
          entries: [draft],
          continue: true,
          ...(moment.call.backupCheckpoint
            ? { label: { entryId: throughId, name: moment.call.backupCheckpoint } }
            : {}),
        },
      };
    },
    validate: (request, facts) => {
      const { moment, ctx } = request;
      if (moment.type !== "tool") return "not a fold request";
      const fold = facts.entries?.length === 1 ? facts.entries[0] : undefined;
      if (fold?.type !== "custom_message" || fold.customType !== LedgerType.fold)
        return "a fold stores exactly one fold summary";
      // The range must still start inside the context and end at the stored end of the step.
      const session = this.session();
      const target = validateTarget(moment.call.target, moment.requestEntryId, foldView(session, ctx.sessionManager));
      return target.ok ? undefined : `the target left the context (${target.error})`;
    },
  };

  /** The step's tool calls with their persisted results, in call order. */
  private stepOutputs(requestEntryId: string, session: LedgerSessionView): StepOutput[] {
    const request = session.live.getEntry(requestEntryId);
    if (request?.type !== "message" || request.message.role !== "assistant") return [];
    const results = new Map<string, AgentMessage>();
    const path = session.live.entries;
    for (let i = session.live.indexOf(requestEntryId) + 1; i < path.length; i++) {
      const entry = path[i] as SessionEntry;
      if (entry.type === "message" && entry.message.role === "toolResult")
        results.set(entry.message.toolCallId, entry.message);
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
    if (existing)
      throw new Error(
        `this position already has the label ${quoted(existing)}; relabelling would lose it. Use that label.`,
      );
    this.kit.setLabel(request.entryId, name);
    return {
      content: [{ type: "text" as const, text: `Label "${name}" set at entry ${request.entryId}.` }],
      details: { entryId: request.entryId },
    };
  }

  /** turn_end boundary: the step's fold request plans now (or cancels), and its facts go to Pi with this boundary. */
  async onTurnEnd(event: TurnEndEvent, ctx: ExtensionContext): Promise<TurnEndEventResult | undefined> {
    const pending = this.pending;
    if (!pending) return undefined;
    this.pending = undefined;
    this.session().sync(ctx.sessionManager);
    const run = pending.run;
    run.send({
      type: "host.turnEnded",
      aborted: Boolean(ctx.signal?.aborted) || event.outcome === "aborted",
      sameStep: event.messageEntryId === pending.requestEntryId,
    });
    const decision = await run.decision;
    this.pendingNames.clear();
    if (decision.state === "validated") {
      const facts = decision.facts;
      if (facts.label) this.kit.setLabel(facts.label.entryId, facts.label.name);
      return { entries: [...event.entries, ...(facts.entries ?? [])], ...(facts.continue ? { continue: true } : {}) };
    }
    // A refused request already told the model why; a notice would repeat it.
    if (pending.refused) return undefined;
    return { entries: [...event.entries, noticeDraft(decision.reason ?? "it could not be applied")] };
  }

  /** Safety net: a request whose step never reached turn_end is dropped, and the model hears about it next turn. */
  onAgentEnd(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    this.pendingNames.clear();
    pending.run.send({ type: "host.runEnded" });
    if (pending.refused) return;
    const notice = noticeDraft("the step ended before the fold could be applied");
    this.kit.sendMessage(
      { customType: notice.customType, content: notice.content, display: false, details: notice.details },
      { deliverAs: "nextTurn" },
    );
  }

  /** Session replaced (new, resume, fork): nothing pending survives. */
  reset(): void {
    this.pending?.run.send({ type: "host.sessionReplaced" });
    this.pending = undefined;
    this.pendingNames.clear();
  }
}
