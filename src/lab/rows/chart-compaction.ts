// Pi's compaction in a lab row, answered as the host answers `session_before_compact`: the strategy's own chart
// routes the trigger, its compaction effects ask its planner (a scripted model stands in for a model call) and check
// the entry, and a failed or refused plan ends in Pi's native compaction, as in the extension.
import type { ExtensionContext, SessionBeforeCompactEvent } from "@earendil-works/pi-coding-agent";
import { StrategyLifecycle } from "../../host/lifecycle.ts";
import type { SessionEntry } from "../../log/entries.ts";
import { estimateTextTokens } from "../../projection/tokens.ts";
import { compactionEffects, strategyInput } from "../../strategies/shared/compaction-effects.ts";
import type { CompleteText, LedgerSessionView, ModelCall, StrategyKit } from "../../strategies/contract.ts";
import type { LabReplay } from "../row-spec.ts";
import type { RegisteredStrategy } from "../../strategies/registry.ts";
import type { SideCall } from "../metrics.ts";
import type { PiPreparation } from "../pi-internals.ts";
import type { SessionSettings } from "../row.ts";
import type { Summarized, Summarizer } from "./compaction-row.ts";
import { nativeSummary } from "./native.ts";

type CompactionReplay = Extract<LabReplay, { engine: "compaction" }>;

/** The row's summarizer: one chart run per compaction, with the strategy's effects built once per row. */
export function chartSummarizer(
  strategy: RegisteredStrategy,
  replay: CompactionReplay,
  settings: SessionSettings,
): Summarizer {
  let scripted: { complete: CompleteText; sideCalls: SideCall[] } | undefined;
  const kit = labKit(() => scripted);
  const effects = compactionEffects(replay.planner(), kit);
  const chart = new StrategyLifecycle(strategy.name, strategy.routes, effects, () => false);
  return async (prep, branch): Promise<Summarized | undefined> => {
    const event = compactionEvent(prep, branch, settings);
    const ctx = labContext(settings);
    const sideCalls: SideCall[] = [];
    // The scripted model reads the same input the planner gets (built before the model is bound to it).
    scripted = replay.model
      ? { complete: measured(replay.model(strategyInput(event, ctx, [], undefined)), sideCalls), sideCalls }
      : undefined;
    const request = { moment: { type: "session_before_compact" as const, event }, ctx, trace: {} };
    const decision = await chart.run(event.reason, request).decision;
    scripted = undefined;
    if (decision.state === "validated" && decision.facts.compaction) {
      const { summary, firstKeptEntryId, details } = decision.facts.compaction;
      return { summary, firstKeptEntryId, details, sideCalls, modelCall: replay.model !== undefined };
    }
    if (decision.state === "cancelled") return undefined;
    // Pi compacts natively; a planner call already made still cost its tokens.
    const native = await nativeSummary(prep);
    return { ...native, sideCalls: [...sideCalls, ...native.sideCalls] };
  };
}

/** Pi's `session_before_compact` for the threshold, from the lab's run of Pi's preparation. */
function compactionEvent(
  prep: PiPreparation,
  branch: readonly SessionEntry[],
  settings: SessionSettings,
): SessionBeforeCompactEvent {
  return {
    type: "session_before_compact",
    preparation: {
      ...prep,
      settings: { enabled: true, reserveTokens: settings.reserve, keepRecentTokens: settings.keepRecent },
    },
    // Pi hands a hook a fresh list; a frozen one lets the planners' memos keep it without a copy of their own.
    branchEntries: Object.freeze(branch.slice()) as SessionEntry[],
    reason: "threshold",
    willRetry: false,
    signal: new AbortController().signal,
  };
}

/**
 * The extension context the compaction effects read in the lab: the window, the working directory, no system prompt,
 * and warnings dropped. Reading anything else is a lab bug and throws a clear error rather than returning undefined.
 */
function labContext(settings: SessionSettings): ExtensionContext {
  const known: Record<string, unknown> = {
    model: { contextWindow: settings.window },
    cwd: settings.cwd,
    getSystemPrompt: () => {
      throw new Error("the lab replays without a system prompt");
    },
    ui: { notify: () => undefined },
  };
  const ctx = new Proxy(known, {
    get(target, key) {
      if (typeof key === "string" && !(key in target))
        throw new Error(`lab: a strategy read ctx.${key}, which the lab does not replay`);
      return Reflect.get(target, key);
    },
  });
  return ctx as Partial<ExtensionContext> as ExtensionContext;
}

/** The kit parts the compaction effects use: no settings of the user's, no instruction files, the scripted model. */
function labKit(model: () => { complete: CompleteText } | undefined): StrategyKit<unknown> {
  const session = {
    settings: { strategy: "checkpoint", foldTools: false },
  } as Partial<LedgerSessionView> as LedgerSessionView;
  const kit: Partial<StrategyKit<unknown>> = {
    session: () => session,
    contextFiles: () => [],
    modelCall: (): ModelCall => {
      const scripted = model();
      return scripted ? { complete: scripted.complete, model: "lab/scripted-planner" } : {};
    },
  };
  return kit as StrategyKit<unknown>;
}

/** Count each scripted request and reply as one side call: the prompt with its tools in, the answer out. */
function measured(complete: CompleteText, calls: SideCall[]): CompleteText {
  return async (request, signal) => {
    const reply = await complete(request, signal);
    const text = typeof reply === "string" ? reply : reply.text;
    const toolCalls = typeof reply === "string" ? [] : reply.toolCalls;
    const answer =
      estimateTextTokens(text) + toolCalls.reduce((sum, c) => sum + estimateTextTokens(JSON.stringify(c.arguments)), 0);
    const input =
      estimateTextTokens(request.system) +
      estimateTextTokens(request.prompt) +
      estimateTextTokens(JSON.stringify(request.tools ?? []));
    calls.push({ input, output: Math.min(answer, request.maxOutputTokens ?? Number.POSITIVE_INFINITY) });
    return reply;
  };
}
