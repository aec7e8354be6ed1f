// The kit: what the host gives every strategy plug-in. Everything that needs Pi at runtime (the tool boundary, the
// transcript component, the model registry, Pi's message conversion, its settings manager and compaction module)
// is injected here, so strategy folders import Pi only for types.
import { convertToLlm, DEFAULT_COMPACTION_SETTINGS, type ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import type {
  ContextFile,
  EntryCard,
  LedgerSessionView,
  MessageCard,
  PrepareCompaction,
  StrategyChart,
  StrategyKit,
  StrategyPlanner,
} from "../strategies/contract.ts";
import { ManualCompactShim } from "./compact-shim.ts";
import { modelCall, resolveModel, withDeadline } from "./model-call.ts";
import { retrying, retryPolicyOf, type Sleep } from "./summary-retry.ts";
import { guardedTool } from "./tool-boundary.ts";

let prepareLoaded: Promise<PrepareCompaction | undefined> | undefined;

/** Pi's own `prepareCompaction` (not exported from its package root), loaded next to its root entry; undefined if moved. */
function loadPrepare(): Promise<PrepareCompaction | undefined> {
  prepareLoaded ??= (async () => {
    try {
      const root = import.meta.resolve("@earendil-works/pi-coding-agent");
      const mod = (await import(new URL("./core/compaction/compaction.js", root).href)) as {
        prepareCompaction?: unknown;
      };
      return typeof mod.prepareCompaction === "function" ? (mod.prepareCompaction as PrepareCompaction) : undefined;
    } catch {
      return undefined;
    }
  })();
  return prepareLoaded;
}

/** What one extension instance shares with every strategy's kit. */
export interface KitHost {
  pi: ExtensionAPI;
  session(): LedgerSessionView;
  contextFiles(): readonly ContextFile[];
  wrapPlanner(planner: StrategyPlanner): StrategyPlanner;
  /** The wait between retries of a side request (tests inject one that does not sleep). */
  sleep?: Sleep;
}

/** A strategy's kit: `options` reads its settings section, `chart` is its lifecycle chart. */
export function strategyKit(host: KitHost, options: () => unknown, chart: StrategyChart): StrategyKit<unknown> {
  const { pi } = host;
  return {
    session: host.session,
    options,
    chart,
    contextFiles: host.contextFiles,
    registerTool: (tool) => pi.registerTool(guardedTool(tool)),
    registerMessageCard: <D>(customType: string, card: MessageCard<D>) =>
      pi.registerMessageRenderer<D>(customType, (message, options, theme) => {
        const content = typeof message.content === "string" ? message.content : "";
        return new Text(card({ content, details: message.details }, { expanded: options.expanded }, theme), 1, 0);
      }),
    registerEntryCard: <D>(customType: string, card: EntryCard<D>) =>
      pi.registerEntryRenderer<D>(customType, (entry, options, theme) => {
        const text = card(entry.data, { expanded: options.expanded }, theme);
        return text === undefined ? undefined : new Text(text, 1, 0);
      }),
    modelCall,
    resolveModel,
    withDeadline,
    convertToLlm,
    manualCompactSwitch: () => new ManualCompactShim(pi),
    piCompaction: { defaults: DEFAULT_COMPACTION_SETTINGS, prepare: loadPrepare },
    now: () => Date.now(),
    sendMessage: (message, options) => pi.sendMessage(message, options),
    appendEntry: (customType, data) => pi.appendEntry(customType, data),
    setLabel: (entryId, name) => pi.setLabel(entryId, name),
    retrying: (produce, signal, onRetry) =>
      retrying(produce, retryPolicyOf(pi.getSettings()), signal, onRetry, host.sleep),
    piSettings: () => pi.getSettings(),
    thinkingLevel: () => pi.getThinkingLevel(),
    wrapPlanner: host.wrapPlanner,
  };
}
