// The `digest` strategy's hooks: at every turn_end it asks the pure planner whether a digest of older tool steps
// is due and appends it as a boundary draft (no model call); on /compact and Pi's threshold compaction it digests every
// raw step instead of a summary, and hands overflow and an already digested history back to Pi.
import type {
  ExtensionContext,
  SessionBeforeCompactEvent,
  SessionBoundaryDraft,
  TurnEndEvent,
  TurnEndEventResult,
} from "@earendil-works/pi-coding-agent";
import type { SessionEntry } from "../../log/entries.ts";
import { LedgerType } from "../catalog.ts";
import type { LedgerSessionView, LifecycleEffects, ManualCompactSwitch, PlanResult, StrategyKit } from "../contract.ts";
import { entryBefore } from "../shared/delta.ts";
import { contextStartId } from "../shared/context-start.ts";
import {
  type DigestAttempt,
  digestDue,
  type DigestDetails,
  type DigestInput,
  keptAttempt,
  planDigest,
} from "./plan.ts";
import { digestPolicy, type DigestOptions } from "./policy.ts";
import { forTerminal } from "../../log/display.ts";

/** The one-line card of a digest: number, what it covered and its size. */
export function digestCardLine(details: DigestDetails | undefined): string {
  if (!details) return "Context digest";
  const t = details.tokens;
  const n = (value: number) => value.toLocaleString("en-US");
  const kept = t.keptRaw ? `, newest ~${n(t.keptRaw)} tok kept raw` : "";
  const steps = `${details.steps.steps} tool step${details.steps.steps === 1 ? "" : "s"}`;
  return `Context digest #${details.checkpoint}: ${steps}, ~${n(t.hidden)} tok → ~${n(t.digest)} tok (${details.trigger}${kept})`;
}

export class DigestHost {
  private readonly kit: StrategyKit<DigestOptions>;
  private readonly session: () => LedgerSessionView;
  /** Lets a manual /compact reach the digest on a short session. */
  private readonly shim: ManualCompactSwitch;
  /** The last turn_end digest declined as not worth it yet: digestDue waits for its tail to grow (see DigestAttempt). */
  private lastAttempt: DigestAttempt | undefined;

  constructor(kit: StrategyKit<DigestOptions>) {
    this.kit = kit;
    this.session = kit.session;
    this.shim = kit.manualCompactSwitch();
  }

  register(): void {
    this.kit.registerMessageCard<DigestDetails>(LedgerType.digest, ({ content, details }, options) =>
      options.expanded ? content : digestCardLine(details),
    );
  }

  /** session_start (called only while digest is the configured strategy): install the manual /compact shim. */
  onSessionStart(ctx: ExtensionContext): void {
    this.lastAttempt = undefined;
    if (!this.shim.install(() => true))
      ctx.ui.notify(
        forTerminal(
          "context-ledger: digest could not adjust Pi's compaction settings; /compact on a short session keeps Pi's answer.",
        ),
        "warning",
      );
  }

  /** session_shutdown: Pi's own compaction settings apply again. */
  onSessionShutdown(): void {
    this.shim.uninstall();
  }

  /** An agent run started or settled: between runs, only a manual /compact can start a compaction. */
  onBeforeAgentStart(): void {
    this.shim.beforeAgentStart();
  }

  onAgentSettled(): void {
    this.shim.agentSettled();
  }

  private input(
    branch: readonly SessionEntry[],
    limitId: string,
    ctx: ExtensionContext,
    extra: Partial<DigestInput> = {},
  ): DigestInput {
    const usage = ctx.getContextUsage();
    let systemPrompt: string | undefined;
    try {
      systemPrompt = ctx.getSystemPrompt();
    } catch {
      systemPrompt = undefined; // startup reads then fall back to the instruction files Pi listed
    }
    const contextWindow = usage?.contextWindow ?? ctx.model?.contextWindow ?? 128_000;
    return {
      branch,
      limitId,
      contextWindow,
      policy: digestPolicy(contextWindow, this.kit.options()),
      usageTokens: usage?.tokens ?? null,
      cwd: ctx.cwd,
      contextFiles: this.kit.contextFiles(),
      systemPrompt,
      ...extra,
    };
  }

  /**
   * turn_end: the step's assistant message and tool results are persisted. When a digest is due, it covers older raw
   * steps (never this one) and is appended after the drafts other handlers return for this boundary.
   */
  async onTurnEnd(
    event: TurnEndEvent,
    ctx: ExtensionContext,
    entries: SessionBoundaryDraft[] = event.entries,
  ): Promise<TurnEndEventResult | undefined> {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const usage = ctx.getContextUsage();
    const due = digestDue({
      branch: session.live.entries,
      stepEntryId: event.messageEntryId,
      drafts: entries.map((d) => (d.type === "custom_message" ? d.customType : undefined)),
      usageTokens: usage?.tokens ?? null,
      policy: digestPolicy(usage?.contextWindow ?? ctx.model?.contextWindow ?? 128_000, this.kit.options()),
      indexOf: (id) => session.live.indexOf(id),
      cwd: ctx.cwd,
      lastAttempt: this.lastAttempt,
    });
    if (!due.due) return undefined;
    const request = { moment: { type: "turn_end" as const, event, entries }, ctx, trace: {} };
    const decision = await this.kit.chart.run("turnEnd", request, { signal: ctx.signal }).decision;
    if (decision.state !== "validated") {
      this.lastAttempt = keptAttempt(due.tail, decision.reason, this.lastAttempt);
      return undefined;
    }
    return { entries: [...entries, ...(decision.facts.entries ?? [])] };
  }

  private boundaryInput(event: TurnEndEvent, ctx: ExtensionContext): DigestInput | undefined {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const branch = session.live.entries;
    const limitId = entryBefore(branch, event.messageEntryId);
    return limitId ? this.input(branch, limitId, ctx) : undefined;
  }

  /** The chart's planner: a digest at a step boundary, or for /compact and Pi's threshold (overflow is routed to Pi). */
  readonly effects: LifecycleEffects = {
    plan: async (request) => {
      const { moment, ctx } = request;
      if (moment.type === "turn_end") {
        const input = this.boundaryInput(moment.event, ctx);
        if (!input) return { ok: false, reason: "nothing to digest at this boundary" };
        const outcome = planDigest(input);
        return outcome.ok ? { ok: true, plan: { entries: [outcome.draft] } } : { ok: false, reason: outcome.reason };
      }
      if (moment.type === "session_before_compact") return this.planCompaction(moment.event, ctx);
      return { ok: false, reason: "digest plans step boundaries and Pi's compaction only" };
    },
    validate: (request, facts) => {
      // Pi compacts at window − its reserve. A digest that cannot bring the context under that point only postpones
      // the compaction (the conversation itself fills the window), so Pi's summary runs now instead.
      const { moment, ctx } = request;
      if (moment.type !== "session_before_compact" || moment.event.reason === "manual") return undefined;
      const usage = ctx.getContextUsage();
      const tokens = facts.messages?.[0]?.details;
      if (!usage?.tokens || !isDigestDetails(tokens)) return undefined;
      const contextWindow = usage.contextWindow ?? ctx.model?.contextWindow ?? 128_000;
      const limit = contextWindow - moment.event.preparation.settings.reserveTokens;
      const after = usage.tokens - tokens.tokens.hidden + tokens.tokens.digest;
      return after > limit
        ? `a digest would leave ~${Math.round(after)} tokens, above Pi's compaction point of ${limit}`
        : undefined;
    },
  };

  /**
   * /compact and Pi's threshold compaction digest every raw step up to now instead of a summary; /compact then
   * answers Pi with a marker compaction so it ends as a success, and the threshold one is declined (the digest made
   * the room). A /compact that only the shim let through (a short session) and finds nothing to digest is declined:
   * Pi's summary would keep almost nothing verbatim.
   */
  private planCompaction(event: SessionBeforeCompactEvent, ctx: ExtensionContext): PlanResult {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const limitId = session.live.leafId;
    if (!limitId) return { ok: false, reason: "the session is empty" };
    const manual = event.reason === "manual";
    const lowered = event.preparation.settings.keepRecentTokens === 1;
    const outcome = planDigest(this.input(session.live.entries, limitId, ctx, { force: manual ? "manual" : "window" }));
    if (!outcome.ok) {
      if (!(manual && lowered)) return { ok: false, reason: outcome.reason };
      ctx.ui.notify(
        forTerminal(`context-ledger: no digest (${outcome.reason}); the conversation stays verbatim.`),
        "info",
      );
      return { ok: true, plan: { declineCompaction: true } };
    }
    const { customType, content, display, details } = outcome.draft;
    const message = { customType, content, display, details };
    if (!manual) return { ok: true, plan: { messages: [message], declineCompaction: true } };
    // A marker compaction lets /compact end as a success; it keeps the view from where it starts and hides nothing.
    // Pi shows it as "Compacted from <tokensBefore> tokens": that is the tool steps the digest condensed, since the
    // marker left the rest of the context as it was.
    return {
      ok: true,
      plan: {
        messages: [message],
        compaction: {
          summary: content,
          firstKeptEntryId: contextStartId(session),
          tokensBefore: details.tokens.hidden,
          details: { v: 1, strategy: "digest", checkpoint: details.checkpoint },
        },
      },
    };
  }
}

function isDigestDetails(details: { readonly v: 1 } | undefined): details is DigestDetails {
  return details !== undefined && "tokens" in details && "steps" in details;
}
