// The event adapter: where every Pi event enters the package. Handlers translate events into ledger syncs and
// lifecycle-machine events and return Pi's answer; notification handlers only update caches and never block.
import { fileURLToPath } from "node:url";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { InspectionEvent, Observer } from "xstate";
import { Text } from "@earendil-works/pi-tui";
import { LedgerType } from "../log/entries.ts";
import { effectiveCompaction } from "../projection/ledger-state.ts";
import type { ContextFile, StrategyPlanner } from "../strategies/contract.ts";
import { createCheckpointPlanner } from "../strategies/checkpoint/planner.ts";
import { createPlannedPlanner } from "../strategies/planned/planner.ts";
import { answerCompaction, compactionEffects } from "./compaction-handler.ts";
import { renderDashboard } from "./dashboard.ts";
import { DigestHost } from "./digest-host.ts";
import { FoldCoordinator } from "./fold-tools.ts";
import { LedgerSession } from "./ledger-session.ts";
import { registerPlannerCards } from "./planner-cards.ts";
import { PlannerSpeculation } from "./planned-speculation.ts";
import { PreserveHost } from "./preserve-host.ts";
import { registerRecap } from "./recap.ts";
import { registerRecallTools } from "./recall-tools.ts";
import { BudgetNotices } from "./budget.ts";
import { RestoreHost } from "./restore.ts";
import { loadSettings } from "./settings.ts";
import { plannerRegistry } from "./strategies.ts";
import { StrategyLifecycle, type LifecycleEffects } from "./lifecycle.ts";
import { STRATEGIES } from "../strategies/registry.ts";
import type { StrategyName } from "../log/entries.ts";

/** The skill that teaches the recall tools; it ships with them rather than in the package manifest. */
const RECALL_SKILL = fileURLToPath(new URL("../../skills/context-recall/SKILL.md", import.meta.url));

export interface LedgerOptions {
  /** Tests only: wrap each compaction planner (to hold it at chosen points under a scheduler). */
  wrapPlanner?: (planner: StrategyPlanner) => StrategyPlanner;
  /** Tests only: observe every lifecycle actor (next to the Stately inspector, when that is on too). */
  inspect?: Observer<InspectionEvent>;
}

export function registerContextLedger(pi: ExtensionAPI, options: LedgerOptions = {}): void {
  const loaded = loadSettings();
  let session = new LedgerSession(loaded.settings);
  let contextFiles: readonly ContextFile[] = [];
  const folds = new FoldCoordinator(pi, () => session);
  if (session.settings.foldTools) folds.register();
  const preserve = new PreserveHost(pi, () => session);
  preserve.register();
  const digests = new DigestHost(pi, () => session, () => contextFiles);
  digests.register();
  const restore = new RestoreHost(pi, () => session);
  if (session.settings.foldTools) restore.registerTool();
  const budget = new BudgetNotices(pi, () => session);
  const wrap = options.wrapPlanner ?? ((p: StrategyPlanner) => p);
  const planners = plannerRegistry([createCheckpointPlanner(() => session.settings.checkpoint), createPlannedPlanner(() => session.settings.planned)].map(wrap));
  const cards = registerPlannerCards(pi);
  const speculation = new PlannerSpeculation(() => session, () => contextFiles, (ctx, message) => ctx.ui.notify(message, "warning"));
  const compactionHost = {
    contextFiles: () => contextFiles,
    reuse: (complete: Parameters<typeof speculation.reuse>[0], model: string, settings: Parameters<typeof speculation.reuse>[2]) => speculation.reuse(complete, model, settings),
  };
  const effects: Record<StrategyName, LifecycleEffects> = {
    fold: folds.effects,
    checkpoint: compactionEffects(planners.get("checkpoint")!, () => session, compactionHost),
    planned: compactionEffects(planners.get("planned")!, () => session, compactionHost),
    preserve: preserve.effects,
    digest: digests.effects,
    native: { plan: async () => ({ ok: false, reason: "Pi compacts" }) },
  };
  // One chart per strategy, its effects provided once for this extension instance.
  const charts = new Map(STRATEGIES.map((s) => [s.name, new StrategyLifecycle(s.name, s.routes, effects[s.name], () => session.settings.inspect, options.inspect)] as const));
  folds.lifecycle = charts.get("fold");
  preserve.lifecycle = charts.get("preserve");
  digests.lifecycle = charts.get("digest");
  pi.on("agent_start", () => speculation.onRunStart());
  pi.on("agent_end", (_event, ctx) => speculation.onRunEnd(ctx));
  pi.on("session_shutdown", () => speculation.reset());
  registerRecap(pi, () => ({ enabled: true }), (ctx) => {
    session.sync(ctx.sessionManager);
    // The recap follows the compaction the view follows: a revoked one has no recap in view.
    const last = effectiveCompaction(session.live.state);
    return { branch: session.live.entries, lastCompaction: last ? session.live.indexOf(last.entryId) : -1 };
  });
  if (session.settings.recallTools) {
    registerRecallTools(pi, () => session.settings.recall);
    // Offered only with the tools it describes: with them switched off it would send the model after tools it lacks.
    pi.on("resources_discover", () => ({ skillPaths: [RECALL_SKILL] }));
  }

  const warnOnce = (ctx: ExtensionContext) => {
    for (const warning of loaded.warnings) ctx.ui.notify(`context-ledger: ${warning}`, "warning");
    loaded.warnings.length = 0;
  };

  // Ledger rebuilds: the branch is the truth, so every session switch folds it again.
  pi.on("session_start", (_event, ctx) => {
    warnOnce(ctx);
    speculation.reset();
    folds.reset();
    restore.reset();
    session.rebuild(ctx.sessionManager);
    preserve.onSessionStart(ctx);
    digests.onSessionStart(ctx);
  });
  pi.on("session_tree", (_event, ctx) => session.sync(ctx.sessionManager));
  pi.on("session_shutdown", () => {
    session.abandonStores("the session was replaced before Pi stored the fact");
    folds.reset();
    restore.reset();
    preserve.onSessionShutdown();
    digests.onSessionShutdown();
    session = new LedgerSession(session.settings);
  });

  // Model view: runs before every provider request; cost grows with entries appended since the last request.
  pi.on("context", (event, ctx) => {
    session.sync(ctx.sessionManager);
    const messages = session.live.requestContext(event.messages, "conversation");
    session.noteRequest();
    return messages ? { messages } : undefined;
  });
  pi.on("message_end", (event) => {
    if (event.message.role !== "assistant") return;
    session.noteUsage(event.message.usage);
    preserve.noteResponse(event.message);
  });
  pi.on("before_agent_start", (event) => {
    contextFiles = event.systemPromptOptions.contextFiles.map((f) => ({ path: f.path, content: f.content }));
    preserve.onRunStarted();
    digests.onRunStarted();
  });
  pi.on("agent_settled", (_event, ctx) => {
    // Whatever a boundary handed Pi during the run is stored by now; what is missing never will be.
    session.sync(ctx.sessionManager);
    session.abandonStores("Pi did not store the fact before the run settled");
    preserve.onRunSettled();
    digests.onRunSettled();
  });

  // The preserve strategy's cache-friendly summary request continues exactly the last request sent.
  pi.on("context_with_system", (event) => {
    preserve.noteRequest(event.messages);
  });

  // Boundaries: a requested fold commits or cancels at the end of its step, then a requested restore; then preserve
  // (or digest) may checkpoint (it declines when the fold already appended a range fact at this boundary); last, when
  // nothing else changed the context here, a budget notice may be appended.
  pi.on("turn_end", async (event, ctx) => {
    const fold = await folds.onTurnEnd(event, ctx);
    const restored = restore.onTurnEnd(event, ctx, fold?.entries ?? event.entries);
    const entries = restored?.entries ?? fold?.entries ?? event.entries;
    const checkpoint = (await preserve.onTurnEnd(event, ctx, entries)) ?? (await digests.onTurnEnd(event, ctx, entries));
    const notice = budget.onTurnEnd(event, ctx, checkpoint?.entries ?? entries, Boolean(fold || restored || checkpoint));
    if (!fold && !restored && !checkpoint && !notice) return undefined;
    return { entries: notice?.entries ?? checkpoint?.entries ?? entries, ...(fold?.continue || checkpoint?.continue ? { continue: true } : {}) };
  });
  pi.on("agent_end", () => {
    folds.onAgentEnd();
    restore.onAgentEnd();
  });

  // Compaction requested by Pi (manual, threshold, overflow): the configured strategy's chart routes and plans it.
  // A strategy that does not apply to the active model leaves it to Pi, as the native strategy does.
  pi.on("session_before_compact", async (event, ctx) => {
    const chart = preserve.appliesElsewhere(ctx) ? charts.get("native")! : charts.get(session.settings.strategy)!;
    return answerCompaction(event, ctx, session, chart, {
      recordFallback: (details) => cards.recordFailure(details),
      sendMessage: (message) => pi.sendMessage(message),
    });
  });
  // Pi stored a compaction (ours or its own), or could not: the chart that handed it over commits or cancels.
  pi.on("session_compact", (_event, ctx) => session.sync(ctx.sessionManager));
  pi.on("session_compact_failed", (_event, ctx) => {
    session.sync(ctx.sessionManager);
    session.abandonStores("Pi could not store the compaction", (facts) => facts.compaction !== undefined);
  });

  pi.registerCommand("context", {
    description: "Context ledger dashboard: usage, checkpoints, folds and compactions on this branch; `/context restore <id|name> [--newest]` undoes one; `/context details` adds estimator figures",
    handler: async (args, ctx) => {
      const [sub, ...rest] = args.trim().split(/\s+/);
      if (sub === "restore") return restore.command(rest.join(" "), ctx);
      session.sync(ctx.sessionManager);
      ctx.ui.notify(renderDashboard(session, ctx, { details: sub === "details" }), "info");
    },
  });

  // The transcript keeps showing folded history; the fold itself is one line that expands to the summary.
  pi.registerMessageRenderer(LedgerType.fold, (message, options) => {
    const text = typeof message.content === "string" ? message.content : "";
    return new Text(options.expanded ? text : "Context compacted (expand to read the summary)", 1, 0);
  });
}
