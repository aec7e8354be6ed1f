// The event adapter: where every Pi event enters the package. Each Pi event is handled once here and dispatched to
// the strategies' hooks in registry order; this file names no strategy. Handlers translate events into ledger syncs
// and lifecycle-machine events and return Pi's answer; notification handlers only update caches and never block.
import { fileURLToPath } from "node:url";
import type {
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
  SessionBoundaryDraft,
} from "@earendil-works/pi-coding-agent";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { InspectionEvent, Observer } from "xstate";
import { quoted } from "../log/display.ts";
import type {
  ContextFile,
  MessageFact,
  LifecycleEffects,
  StrategyHooks,
  StrategyPlanner,
} from "../strategies/contract.ts";
import { PLUGINS, type RegisteredStrategy } from "../strategies/registry.ts";
import type { PlannerFailureDetails } from "../strategies/shared/fallback.ts";
import { BudgetNotices } from "./budget.ts";
import { answerCompaction } from "./compaction-handler.ts";
import { renderDashboard } from "./dashboard.ts";
import { registerFallbackCards } from "./fallback-cards.ts";
import { LedgerSession } from "./ledger-session.ts";
import { StrategyLifecycle } from "./lifecycle.ts";
import { competingExtensions, neighbourWarning } from "./neighbours.ts";
import { registerRecallTools } from "./recall-tools.ts";
import { PinHost } from "./pins.ts";
import { RestoreHost } from "./restore.ts";
import { loadSettings } from "./settings.ts";
import { strategyKit } from "./strategy-kit.ts";
import type { Sleep } from "./summary-retry.ts";

/** How `/context` is called, for its description and for a subcommand it does not know. */
const CONTEXT_USAGE =
  "Usage: /context (the dashboard), /context details (adds estimator figures), /context restore [<id|name|last> [--newest]] (undo one act, or list them), /context pin <id|label|last> [note], /context unpin <target>, /context pins.";
import { forTerminal } from "../log/display.ts";

/** The skill that teaches the recall tools; it ships with them rather than in the package manifest. */
const RECALL_SKILL = fileURLToPath(new URL("../../skills/context-recall/SKILL.md", import.meta.url));

export interface LedgerOptions {
  /** Tests only: wrap each compaction planner (to hold it at chosen points under a scheduler). */
  wrapPlanner?: (planner: StrategyPlanner) => StrategyPlanner;
  /** Tests only: observe every lifecycle actor (next to the Stately inspector, when that is on too). */
  inspect?: Observer<InspectionEvent>;
  /** Tests only: the wait between retries of a side request (the default really waits). */
  sleep?: Sleep;
}

/** A strategy as this extension instance runs it: its definition, its chart and its hooks. */
interface Running {
  strategy: RegisteredStrategy;
  chart: StrategyLifecycle;
  hooks: StrategyHooks;
}

export function registerContextLedger(pi: ExtensionAPI, options: LedgerOptions = {}): void {
  const loaded = loadSettings();
  let session = new LedgerSession(loaded.settings);
  let contextFiles: readonly ContextFile[] = [];
  const inspect = () => session.settings.inspect;
  const host = {
    pi,
    session: () => session,
    contextFiles: () => contextFiles,
    wrapPlanner: options.wrapPlanner ?? ((p: StrategyPlanner) => p),
    sleep: options.sleep,
  };
  // One chart per strategy and extension instance, its effects provided once; the kit closes over the chart.
  const running: Running[] = PLUGINS.map((strategy) => {
    // The chart exists before the hooks (the kit hands it to them), so its effects reach the hooks once they exist.
    let hooks: StrategyHooks | undefined;
    const effects: LifecycleEffects = {
      plan: (request, signal) =>
        hooks
          ? hooks.effects.plan(request, signal)
          : Promise.resolve({ ok: false, reason: "the strategy is not ready" }),
      validate: (request, plan) => hooks?.effects.validate?.(request, plan),
    };
    const chart = new StrategyLifecycle(
      strategy.name,
      strategy.routes,
      effects,
      inspect,
      options.inspect,
      () => session,
    );
    hooks = strategy.create(strategyKit(host, () => Reflect.get(session.settings, strategy.name) as unknown, chart));
    return { strategy, chart, hooks };
  });
  const restore = new RestoreHost(pi, () => session);
  const pins = new PinHost(pi, () => session);
  if (session.settings.foldTools) {
    restore.registerTool();
    pins.registerTools();
  }
  const budget = new BudgetNotices(pi, () => session);
  const cards = registerFallbackCards(pi);
  if (session.settings.recallTools) {
    registerRecallTools(pi, () => session.settings.recall);
    // Offered only with the tools it describes: with them switched off it would send the model after tools it lacks.
    pi.on("resources_discover", () => ({ skillPaths: [RECALL_SKILL] }));
  }

  /** `/context`: the dashboard, or a restore. Its identity also tells this extension apart from the others loaded. */
  const contextCommand = async (args: string, ctx: ExtensionCommandContext): Promise<void> => {
    const [sub, ...rest] = args.trim().split(/\s+/);
    if (sub === "restore") return restore.command(rest.join(" "), ctx);
    if (sub === "pin" || sub === "unpin" || sub === "pins") return pins.command(sub, rest.join(" "), ctx);
    if (sub !== "" && sub !== "details")
      return ctx.ui.notify(forTerminal(`context: unknown subcommand ${quoted(sub, 40)}. ${CONTEXT_USAGE}`), "error");
    session.sync(ctx.sessionManager);
    ctx.ui.notify(forTerminal(renderDashboard(session, ctx, { details: sub === "details" })), "info");
  };

  /** The strategies whose hooks run now: those that always act, and the configured one. */
  const active = (): Running[] =>
    running.filter((r) => r.strategy.scope === "always" || r.strategy.name === session.settings.strategy);
  const configured = (): Running => running.find((r) => r.strategy.name === session.settings.strategy)!;

  const warnOnce = (ctx: ExtensionContext) => {
    for (const warning of loaded.warnings) ctx.ui.notify(forTerminal(`context-ledger: ${warning}`), "warning");
    loaded.warnings.length = 0;
    if (neighboursChecked) return;
    neighboursChecked = true;
    const neighbours = neighbourWarning(competingExtensions(pi, "context", contextCommand) ?? []);
    if (neighbours) ctx.ui.notify(forTerminal(`context-ledger: ${neighbours}`), "warning");
  };
  let neighboursChecked = false;

  // Ledger rebuilds: the branch is the truth, so every session switch folds it again.
  let started = false;
  const start = (ctx: ExtensionContext) => {
    started = true;
    warnOnce(ctx);
    restore.reset();
    pins.reset();
    cards.reset();
    session.rebuild(ctx.sessionManager);
    for (const r of active()) r.hooks.sessionStart?.(ctx);
  };
  // An SDK embedder that never calls `session.bindExtensions()` gets no session_start: the first event of a run
  // starts the session instead, so what session_start sets up (preserve's compaction switch) is there by /compact.
  const ensureStarted = (ctx: ExtensionContext) => {
    if (!started) start(ctx);
  };
  pi.on("session_start", (_event, ctx) => start(ctx));
  pi.on("session_tree", (_event, ctx) => session.sync(ctx.sessionManager));
  pi.on("session_shutdown", () => {
    session.abandonStores("the session was replaced before Pi stored the fact");
    restore.reset();
    pins.reset();
    for (const r of active()) r.hooks.sessionShutdown?.();
    session = new LedgerSession(session.settings);
    started = false;
  });

  // Model view: runs before every provider request; cost grows with entries appended since the last request.
  pi.on("context", (event, ctx) => {
    ensureStarted(ctx);
    session.sync(ctx.sessionManager);
    const messages = session.live.requestContext(event.messages, "conversation");
    session.noteRequest();
    return messages ? { messages } : undefined;
  });
  pi.on("message_end", (event) => {
    if (event.message.role !== "assistant") return;
    session.noteUsage(event.message.usage);
    for (const r of active()) r.hooks.messageEnd?.(event.message);
  });
  pi.on("agent_start", () => {
    for (const r of active()) r.hooks.agentStart?.();
  });
  pi.on("before_agent_start", (event, ctx) => {
    ensureStarted(ctx);
    contextFiles = event.systemPromptOptions.contextFiles.map((f) => ({ path: f.path, content: f.content }));
    // First answer wins; every strategy still hears the event.
    let message: MessageFact | undefined;
    for (const r of active()) {
      const answer = r.hooks.beforeAgentStart?.(ctx)?.message;
      message ??= answer;
    }
    return message ? { message } : undefined;
  });
  pi.on("agent_settled", (_event, ctx) => {
    // Whatever a boundary handed Pi during the run is stored by now; what is missing never will be.
    session.sync(ctx.sessionManager);
    session.abandonStores("Pi did not store the fact before the run settled");
    for (const r of active()) r.hooks.agentSettled?.();
  });
  // The request about to be sent, chained: each strategy sees it as the ones before it left it.
  pi.on("context_with_system", (event, ctx) => {
    let messages: AgentMessage[] | undefined;
    for (const r of active()) messages = r.hooks.contextWithSystem?.(messages ?? event.messages, ctx) ?? messages;
    return messages ? { messages } : undefined;
  });

  // Boundaries, drafts accumulating: the strategies that act always (a requested fold commits or cancels at the end of
  // its step), then a requested restore, then the configured strategy (it declines when a range fact was already
  // appended here); last, when nothing else changed the context here, a budget notice may be appended.
  pi.on("turn_end", async (event, ctx) => {
    let entries: SessionBoundaryDraft[] = event.entries;
    let changed = false;
    let resume = false;
    const apply = (result: { entries?: SessionBoundaryDraft[]; continue?: boolean } | undefined) => {
      if (!result) return;
      changed = true;
      entries = result.entries ?? entries;
      resume ||= result.continue === true;
    };
    const now = active();
    for (const r of now) if (r.strategy.scope === "always") apply(await r.hooks.turnEnd?.(event, ctx, entries));
    apply(restore.onTurnEnd(event, ctx, entries));
    apply(pins.onTurnEnd(entries));
    for (const r of now) if (r.strategy.scope !== "always") apply(await r.hooks.turnEnd?.(event, ctx, entries));
    const notice = budget.onTurnEnd(event, ctx, entries, changed);
    if (!changed && !notice) return undefined;
    return { entries: notice?.entries ?? entries, ...(resume ? { continue: true } : {}) };
  });
  pi.on("agent_end", (_event, ctx) => {
    for (const r of active()) r.hooks.agentEnd?.(ctx);
    restore.onAgentEnd();
    pins.onAgentEnd();
  });

  // Compaction requested by Pi (manual, threshold, overflow): the configured strategy's chart routes and plans it.
  // Whether the strategy manages the active model is part of the chart's input: when it does not, the chart leaves
  // the compaction to Pi.
  pi.on("session_before_compact", async (event, ctx) => {
    const r = configured();
    const host = {
      recordFallback: (details: PlannerFailureDetails) => cards.recordFailure(details),
      sendMessage: (message: MessageFact) => pi.sendMessage(message),
      now: () => Date.now(),
    };
    return answerCompaction(event, ctx, session, r.chart, host, r.hooks.appliesTo?.(ctx) !== false);
  });
  // Pi stored a compaction (ours or its own), or could not: the chart that handed it over commits or cancels.
  pi.on("session_compact", (event, ctx) => {
    cards.compacted(event);
    session.sync(ctx.sessionManager);
    for (const r of active()) r.hooks.sessionCompact?.(event, ctx);
  });
  pi.on("session_compact_failed", (_event, ctx) => {
    cards.reset();
    session.sync(ctx.sessionManager);
    session.abandonStores("Pi could not store the compaction", (facts) => facts.compaction !== undefined);
    for (const r of active()) r.hooks.sessionCompactFailed?.();
  });

  pi.registerCommand("context", {
    description:
      "Context ledger dashboard: usage, labels, pins, folds, tool summaries, digests and compactions on this branch; `/context restore <id|name> [--newest]` undoes one; `/context pin <id|label|last> [note]`, `/context unpin <target>`, `/context pins`; `/context details` adds estimator figures",
    handler: contextCommand,
  });
}
