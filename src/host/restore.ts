// Reversible context, host side: the `context_restore` tool for the model and `/context restore` for the user. Both
// append one `context-ledger/restore` fact that revokes what one fold, checkpoint or compaction hid; the projection
// does the rest. The tool records its request in execute() and commits at turn_end, like a fold; the command appends
// at once (after waiting for the agent to be idle) and tells the model in one short hidden message.
import type {
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
  SessionBoundaryDraft,
  TurnEndEvent,
  TurnEndEventResult,
} from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { LedgerType } from "../strategies/catalog.ts";
import {
  listActs,
  planRestore,
  type RestorePlanResult,
  renderRestored,
  resolveRestoreTarget,
} from "../projection/restore.ts";
import { isStrategyFact } from "../strategies/registry.ts";
import { currentThreshold } from "./budget.ts";
import { guardedTool } from "./tool-boundary.ts";
import type { LedgerSession } from "./ledger-session.ts";
import { forTerminal, quoted, shownName } from "../log/display.ts";

interface PendingRestore {
  actId: string;
}

/** The short hidden notice for a restore that could not be applied. */
function cancelledNotice(reason: string): SessionBoundaryDraft {
  return {
    type: "custom_message",
    customType: LedgerType.notice,
    content: `context_restore was cancelled and nothing came back: ${reason}.`,
    display: false,
    details: { v: 1, kind: "restoreCancelled", reason },
  };
}

/** `/context restore` arguments: the target, and `--newest` to bring back the newest part that fits. */
export function parseRestoreArgs(args: string): { target: string; newest: boolean } | { error: string } {
  const words = args.trim().split(/\s+/).filter(Boolean);
  const newest = words.includes("--newest");
  const rest = words.filter((w) => w !== "--newest");
  const unknown = rest.find((w) => w.startsWith("--"));
  if (unknown) return { error: `unknown option ${quoted(unknown, 40)} (only --newest)` };
  if (rest.length > 1) return { error: "give one target: an act's id, a label, the id of a hidden entry, or last" };
  return { target: rest[0] ?? "", newest };
}

export class RestoreHost {
  private pending: PendingRestore | undefined;
  private readonly pi: ExtensionAPI;
  private readonly session: () => LedgerSession;

  constructor(pi: ExtensionAPI, session: () => LedgerSession) {
    this.pi = pi;
    this.session = session;
  }

  /** Resolve and plan against the live branch; figures start from Pi's usage when it is known. */
  private plan(target: string, newest: boolean, ctx: ExtensionContext): RestorePlanResult & { limit?: number } {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const live = session.live;
    const resolved = resolveRestoreTarget(target, live.entries, live.state, live.facts);
    if (!resolved.ok) return resolved;
    const threshold = currentThreshold(this.pi, session, ctx);
    const limit = threshold?.tokens ?? Number.POSITIVE_INFINITY;
    const usage = ctx.getContextUsage()?.tokens ?? undefined;
    const result = planRestore({
      path: live.entries,
      state: live.state,
      facts: live.facts,
      act: resolved.act,
      limit,
      newest,
      currentTokens: usage,
      calibration: session.calibration,
    });
    return { ...result, limit };
  }

  registerTool(): void {
    this.pi.registerTool(
      guardedTool({
        name: "context_restore",
        label: "Restore context",
        description:
          "Bring back history that a fold, a tool summary, a digest or a compaction hid from your context. `target` is the act's entry id (context_timeline " +
          "marks them), a label, the id of a hidden entry (from context_grep or context_list_entries), or `last` for the newest act. " +
          "At the end of this step the hidden messages return in their original place and the act's summary leaves. It is refused, with the " +
          "figures, when the context would no longer fit below the point where it gets compacted. Call it at most once per step.",
        promptSnippet: "Bring back history a fold, tool summary, digest or compaction hid",
        parameters: Type.Object({ target: Type.String({ description: "Act id, label, hidden entry id, or last" }) }),
        execute: async (_toolCallId, params, _signal, _onUpdate, ctx) => {
          if (this.pending)
            throw new Error("context_restore may be called once per step; this step already restores something.");
          const result = this.plan(params.target, false, ctx);
          if (!result.ok) throw new Error(result.error);
          this.pending = { actId: result.plan.act.id };
          return {
            content: [
              {
                type: "text" as const,
                text: `Restore accepted; it applies when this step ends. ${renderRestored(result.plan, result.limit ?? 0)}`,
              },
            ],
            details: { actId: result.plan.act.id },
          };
        },
      }),
    );
  }

  /** `/context restore <target> [--newest]`, or the list of acts when no target is given. */
  async command(args: string, ctx: ExtensionCommandContext): Promise<void> {
    const parsed = parseRestoreArgs(args);
    if ("error" in parsed) return ctx.ui.notify(forTerminal(`context restore: ${parsed.error}`), "error");
    // The fact must not land between a step's tool call and its result.
    if (!ctx.isIdle()) await ctx.waitForIdle();
    if (!parsed.target) return ctx.ui.notify(forTerminal(this.listing(ctx)), "info");
    const result = this.plan(parsed.target, parsed.newest, ctx);
    if (!result.ok) {
      const hint =
        !parsed.newest && /above the limit/.test(result.error)
          ? ` Run /context restore ${shownName(parsed.target)} --newest to bring back the newest part that fits.`
          : "";
      return ctx.ui.notify(forTerminal(`context restore: ${result.error}${hint}`), "error");
    }
    const text = renderRestored(result.plan, result.limit ?? 0);
    this.pi.appendEntry(LedgerType.restore, result.plan.data);
    this.pi.sendMessage(
      {
        customType: LedgerType.notice,
        content: text,
        display: false,
        details: { v: 1, kind: "restored", targetId: result.plan.act.id },
      },
      { triggerTurn: false },
    );
    ctx.ui.notify(forTerminal(text), "info");
  }

  /** The acts a user can restore on this branch. */
  private listing(ctx: ExtensionContext): string {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const acts = listActs(session.live.entries, session.live.state, session.live.facts);
    if (!acts.length) return "context restore: nothing on this branch hid any history.";
    const lines = ["What you can bring back on this branch (newest last). Use /context restore <id|name> [--newest]:"];
    for (const act of acts.slice(-20)) {
      const status = act.revokedBy
        ? ` (already undone by ${act.revokedBy})`
        : act.narrowedBy
          ? ` (newest part brought back by ${act.narrowedBy})`
          : "";
      // A name the title already shows (a digest's or tool summary's "#n") is not repeated.
      const names = act.names.filter((name) => !act.title.endsWith(` ${name}`));
      lines.push(
        `  ${shownName(act.id)} ${act.title}${names.length ? `, also called ${names.map((n) => quoted(n, 80)).join(", ")}` : ""}${status}`,
      );
    }
    return lines.join("\n");
  }

  /**
   * turn_end: commit the step's restore request. It is planned again on the branch as it now stands, and cancelled
   * (with a notice) when a fold committed at this same boundary: the fold decided what leaves after the restore was asked.
   */
  onTurnEnd(
    event: TurnEndEvent,
    ctx: ExtensionContext,
    entries: SessionBoundaryDraft[],
  ): TurnEndEventResult | undefined {
    const pending = this.pending;
    this.pending = undefined;
    if (!pending) return undefined;
    if (entries.some((d) => d.type === "custom_message" && isStrategyFact(d.customType)))
      return { entries: [...entries, cancelledNotice("a fold was committed in the same step")] };
    if (event.outcome === "aborted" || ctx.signal?.aborted)
      return { entries: [...entries, cancelledNotice("the step was aborted")] };
    const result = this.plan(pending.actId, false, ctx);
    if (!result.ok) return { entries: [...entries, cancelledNotice(result.error.replace(/\.$/, ""))] };
    return { entries: [...entries, { type: "custom", customType: LedgerType.restore, data: result.plan.data }] };
  }

  /** A request whose step never reached turn_end is dropped; the model hears about it on the next turn. */
  onAgentEnd(): void {
    if (!this.pending) return;
    this.pending = undefined;
    const notice = cancelledNotice("the step ended before the restore could be applied") as Extract<
      SessionBoundaryDraft,
      { type: "custom_message" }
    >;
    this.pi.sendMessage(
      { customType: notice.customType, content: notice.content, display: false, details: notice.details },
      { deliverAs: "nextTurn" },
    );
  }

  reset(): void {
    this.pending = undefined;
  }
}
