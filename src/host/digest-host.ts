// The `digest` strategy's host side: at every turn_end it asks the pure planner whether a digest of older tool steps
// is due and appends it as a boundary draft (no model call); on /compact and Pi's threshold compaction it digests every
// raw step instead of a summary, and hands overflow and an already digested history back to Pi.
import type {
  ExtensionAPI,
  ExtensionContext,
  SessionBeforeCompactEvent,
  SessionBeforeCompactResult,
  SessionBoundaryDraft,
  TurnEndEvent,
  TurnEndEventResult,
} from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import { LedgerType, type SessionEntry } from "../log/entries.ts";
import type { ContextFile } from "../strategies/contract.ts";
import { planDigest, rawTokensBound, type DigestDetails, type DigestDraft, type DigestInput, type DigestOutcome } from "../strategies/digest/plan.ts";
import { decideDigest, digestPolicy } from "../strategies/digest/policy.ts";
import { entryBefore } from "../strategies/preserve/delta.ts";
import { ManualCompactShim } from "./compact-shim.ts";
import type { LedgerSession } from "./ledger-session.ts";
import { runLifecycle } from "./lifecycle.ts";
import { contextStartId } from "./preserve-host.ts";

/** The one-line card of a digest: number, what it covered and its size. */
export function digestCardLine(details: DigestDetails | undefined): string {
  if (!details) return "Context digest";
  const t = details.tokens;
  const n = (value: number) => value.toLocaleString("en-US");
  const kept = t.keptRaw ? `, newest ~${n(t.keptRaw)} tok kept raw` : "";
  return `Context digest #${details.checkpoint}: ${details.steps.steps} tool steps, ~${n(t.hidden)} tok → ~${n(t.digest)} tok (${details.trigger}${kept})`;
}

export class DigestHost {
  private readonly pi: ExtensionAPI;
  private readonly session: () => LedgerSession;
  private readonly contextFiles: () => readonly ContextFile[];
  /** Lets a manual /compact reach the digest on a short session (see compact-shim.ts). */
  private readonly shim = new ManualCompactShim();

  constructor(pi: ExtensionAPI, session: () => LedgerSession, contextFiles: () => readonly ContextFile[]) {
    this.pi = pi;
    this.session = session;
    this.contextFiles = contextFiles;
  }

  register(): void {
    this.pi.registerMessageRenderer<DigestDetails>(LedgerType.digest, (message, options) => {
      const text = typeof message.content === "string" ? message.content : "";
      return new Text(options.expanded ? text : digestCardLine(message.details), 1, 0);
    });
  }

  private active(): boolean {
    return this.session().settings.strategy === "digest";
  }

  /** session_start: install the manual /compact shim while the strategy is digest. */
  onSessionStart(ctx: ExtensionContext): void {
    if (!this.active()) return;
    if (!this.shim.install(this.pi, () => this.active())) ctx.ui.notify("context-ledger: digest could not adjust Pi's compaction settings; /compact on a short session keeps Pi's answer.", "warning");
  }

  /** session_shutdown: Pi's own compaction settings apply again. */
  onSessionShutdown(): void {
    this.shim.uninstall();
  }

  /** An agent run started or settled: between runs, only a manual /compact can start a compaction. */
  onRunStarted(): void {
    this.shim.runStarted();
  }

  onRunSettled(): void {
    this.shim.runSettled();
  }

  private input(branch: readonly SessionEntry[], limitId: string, ctx: ExtensionContext, extra: Partial<DigestInput> = {}): DigestInput {
    const usage = ctx.getContextUsage();
    let systemPrompt: string | undefined;
    try {
      systemPrompt = ctx.getSystemPrompt();
    } catch {
      systemPrompt = undefined; // startup reads then fall back to the instruction files Pi listed
    }
    return {
      branch,
      limitId,
      contextWindow: usage?.contextWindow ?? ctx.model?.contextWindow ?? 128_000,
      usageTokens: usage?.tokens ?? null,
      cwd: ctx.cwd,
      contextFiles: this.contextFiles(),
      systemPrompt,
      ...extra,
    };
  }

  /**
   * turn_end: the step's assistant message and tool results are persisted. When a digest is due, it covers older raw
   * steps (never this one) and is appended after the drafts other handlers return for this boundary.
   */
  async onTurnEnd(event: TurnEndEvent, ctx: ExtensionContext, entries: SessionBoundaryDraft[] = event.entries): Promise<TurnEndEventResult | undefined> {
    const session = this.session();
    if (session.settings.strategy !== "digest") return undefined;
    // One range fact per boundary: a fold committed here already changed what the model sees.
    if (entries.some((d) => d.type === "custom_message" && (d.customType === LedgerType.fold || d.customType === LedgerType.preserve || d.customType === LedgerType.digest)))
      return undefined;
    session.sync(ctx.sessionManager);
    const branch = session.live.entries;
    const limitId = entryBefore(branch, event.messageEntryId);
    if (!limitId) return undefined;
    const input = this.input(branch, limitId, ctx);
    // Most boundaries are far from a batch: a bound over the entries since the last digest settles them.
    const bound = rawTokensBound(branch, session.live.indexOf(limitId));
    if (!decideDigest({ rawTokens: bound, usageTokens: input.usageTokens, policy: digestPolicy(input.contextWindow) }).act) return undefined;
    const outcome = await this.throughLifecycle(input, ctx, ctx.signal);
    if (!outcome.ok) return undefined;
    return { entries: [...entries, outcome.draft] };
  }

  /**
   * session_before_compact in digest mode. `/compact` and Pi's threshold compaction digest every raw step up to now
   * instead of a summary; `/compact` then answers Pi with a marker compaction so it ends as a success. Overflow, a
   * history with nothing left to digest, and a threshold a digest cannot get under go to Pi's native compaction (with a
   * notice): only a summary can shrink a context that is all conversation. A `/compact` that only the shim let through
   * (a short session) and finds nothing to digest is cancelled: Pi's summary would keep almost nothing verbatim.
   */
  async onBeforeCompact(event: SessionBeforeCompactEvent, ctx: ExtensionContext): Promise<SessionBeforeCompactResult | undefined> {
    const session = this.session();
    if (!this.active()) return undefined;
    if (event.reason === "overflow") return undefined;
    session.sync(ctx.sessionManager);
    const limitId = session.live.leafId;
    if (!limitId) return undefined;
    const manual = event.reason === "manual";
    // Pi prepared this compaction with keepRecentTokens lowered by the shim: its own summary would keep almost nothing.
    const lowered = event.preparation.settings.keepRecentTokens === 1;
    const input = this.input(session.live.entries, limitId, ctx, { force: manual ? "manual" : "window" });
    // Pi compacts at window − its reserve. A digest that cannot bring the context under that point only postpones the
    // compaction (the conversation itself fills the window), so Pi's summary runs now instead.
    const limit = input.contextWindow - event.preparation.settings.reserveTokens;
    const fits = (draft: DigestDraft): string | undefined => {
      if (manual || input.usageTokens === null) return undefined;
      const after = input.usageTokens - draft.details.tokens.hidden + draft.details.tokens.digest;
      return after > limit ? `a digest would leave ~${Math.round(after)} tokens, above Pi's compaction point of ${limit}` : undefined;
    };
    const outcome = await this.throughLifecycle(input, ctx, event.signal, fits);
    if (!outcome.ok) {
      if (outcome.reason === "aborted") return { cancel: true };
      if (manual && lowered) {
        ctx.ui.notify(`context-ledger: no digest (${outcome.reason}); the conversation stays verbatim.`, "info");
        return { cancel: true };
      }
      ctx.ui.notify(`context-ledger: no digest (${outcome.reason}); Pi compacts natively.`, "info");
      return undefined;
    }
    const { customType, content, display, details } = outcome.draft;
    this.pi.sendMessage({ customType, content, display, details });
    if (!manual) return { cancel: true };
    // A marker compaction lets /compact end as a success; it keeps the view from where it starts and hides nothing.
    return {
      compaction: {
        summary: content,
        firstKeptEntryId: contextStartId(session),
        tokensBefore: event.preparation.tokensBefore,
        details: { v: 1, strategy: "digest", checkpoint: details.checkpoint },
      },
    };
  }

  /** One digest as a compaction lifecycle (requested → planning → validated → committed), like every strategy. */
  private async throughLifecycle(input: DigestInput, ctx: ExtensionContext, signal?: AbortSignal, fits: (draft: DigestDraft) => string | undefined = () => undefined): Promise<DigestOutcome> {
    const result = await runLifecycle(
      { kind: "compaction", strategy: "digest", request: { limitId: input.limitId, force: input.force ?? null } },
      async () => {
        const outcome = planDigest(input);
        if (!outcome.ok) return { ok: false, reason: outcome.reason };
        const problem = fits(outcome.draft);
        return problem ? { ok: false, reason: problem } : { ok: true, plan: outcome.draft };
      },
      { inspect: this.session().settings.inspect, warn: (m) => ctx.ui.notify(m, "warning"), signal },
    );
    switch (result.outcome) {
      case "committed":
        return { ok: true, draft: result.plan as DigestDraft };
      case "cancelled":
        return { ok: false, reason: "aborted" };
      case "nativeFallback":
        return { ok: false, reason: result.reason ?? "no digest was written" };
    }
  }
}
