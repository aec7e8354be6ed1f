// The contract between the host and a strategy plug-in: the strategy's definition (`Strategy`), the hooks it returns
// for one extension instance (`StrategyHooks`, named after Pi's events, each saying how several strategies' answers
// combine), the kit the host injects (`StrategyKit`: everything that needs Pi at run time) and the planner's input
// and output. Strategies never perform I/O; model calls arrive injected. The lab's replay types are the lab's own
// (src/lab/row-spec.ts); code two strategies share lives in ./shared/.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage, Message, Tool } from "@earendil-works/pi-ai";
import type {
  ExtensionContext,
  SessionBeforeCompactEvent,
  SessionBoundaryDraft,
  SessionCompactEvent,
  SessionEntry,
  Theme,
  ToolDefinition,
  TurnEndEvent,
  TurnEndEventResult,
} from "@earendil-works/pi-coding-agent";
import type { TSchema } from "typebox";
import type { CompactionPlan, LifecycleEffects, MessageFact, Routes, StrategyChart } from "../../machines/lifecycle.ts";
import type { BudgetRule } from "../projection/budget.ts";
import type { LiveLedger } from "../projection/live-ledger.ts";
import type { StrategyFacts } from "../log/facts.ts";
import type { Calibration } from "../projection/tokens.ts";

/** A project instruction file Pi loaded (AGENTS.md, CLAUDE.md, AGENTS.override.md). */
export interface ContextFile {
  path: string;
  content: string;
}

/** Everything a strategy may look at when Pi asks to compact. */
export interface CompactionInput {
  reason: "manual" | "threshold" | "overflow";
  /** Active branch, root to leaf, as persisted. */
  branch: readonly SessionEntry[];
  /** Pi's chosen boundary: the first entry kept verbatim. */
  firstKeptEntryId: string;
  /** Messages Pi would summarize (already filtered by fold range rules). */
  messagesToSummarize: readonly AgentMessage[];
  /** The split turn's prefix, when Pi cuts inside a turn. */
  turnPrefixMessages: readonly AgentMessage[];
  tokensBefore: number;
  contextWindow: number;
  cwd: string;
  contextFiles: readonly ContextFile[];
  systemPrompt?: string;
  customInstructions?: string;
  /**
   * Model access for strategies that need it (planned, preserve), bound by the host to the active model or the
   * model named in the trusted global settings. Absent in the lab and in deterministic strategies.
   */
  complete?: CompleteText;
}

/** One model request a strategy makes: a system prompt, one user prompt, optional tools and an output cap. */
export interface ModelRequest {
  system: string;
  prompt: string;
  /** Tools the model may answer with (pi-ai's shape, so schema-constrained sampling can be asked for). */
  tools?: readonly Tool[];
  /** Largest reply, in tokens. */
  maxOutputTokens?: number;
  /** Deadline of the call: the host aborts it past this many milliseconds and the call rejects. */
  timeoutMs?: number;
}

/** A model's reply: its text, its tool calls, and what it cost. */
export interface ModelReply {
  text: string;
  toolCalls: ReadonlyArray<{ name: string; arguments: unknown }>;
  /** `provider/model` that answered. */
  model?: string;
  usage?: { input: number; output: number };
  /** True when the reply was prepared before the compaction (speculative planning) and reused. */
  speculative?: boolean;
  /** Why the reply ended, as the provider reported it (`stop`, `length`, `toolUse`, …). */
  stopReason?: string;
}

/** Injected model access. A bare string is a text-only reply. */
export type CompleteText = (request: ModelRequest, signal: AbortSignal) => Promise<string | ModelReply>;

export interface StrategyPlanner {
  /** The strategy it plans for, by registry name. */
  name: string;
  plan(input: CompactionInput, signal: AbortSignal): Promise<CompactionPlan>;
}

/** The part of Pi's compaction preparation every strategy reads. */
export interface PreparedCut {
  firstKeptEntryId: string;
  messagesToSummarize: readonly AgentMessage[];
  turnPrefixMessages: readonly AgentMessage[];
  tokensBefore: number;
}

/** Build a strategy's input from Pi's preparation (or the lab's replay of it) and the session facts. */
export function compactionInput(
  cut: PreparedCut,
  session: Omit<CompactionInput, keyof PreparedCut | "reason" | "contextFiles"> &
    Partial<Pick<CompactionInput, "reason" | "contextFiles">>,
): CompactionInput {
  return {
    reason: session.reason ?? "threshold",
    firstKeptEntryId: cut.firstKeptEntryId,
    messagesToSummarize: cut.messagesToSummarize,
    turnPrefixMessages: cut.turnPrefixMessages,
    tokensBefore: cut.tokensBefore,
    contextFiles: session.contextFiles ?? [],
    ...session,
  };
}

// The lifecycle's types live in the chart's leaf module, so the chart depends on no strategy; strategies see them here.
export type {
  ChartRun,
  CompactionPlan,
  Decision,
  FoldCall,
  LifecycleEffects,
  LifecycleRequest,
  MessageFact,
  Moment,
  PlannedFacts,
  PlanResult,
  PlanTrace,
  RunOptions,
  StrategyChart,
  Validate,
} from "../../machines/lifecycle.ts";

/** Settings every strategy may read (the host's settings extend them); its own section comes from {@link StrategyKit.options}. */
export interface SharedSettings {
  /** The configured strategy, by registry name. */
  strategy: string;
  /** `provider/model` for strategies that call a model; absent means the active model. */
  plannerModel?: string;
  /** Agent-directed fold tools (context_compact, context_checkpoint, context_timeline) are on. */
  foldTools: boolean;
}

/** The session's runtime state as strategies see it (the host's ledger session satisfies it). */
export interface LedgerSessionView {
  readonly live: LiveLedger;
  readonly calibration: Calibration;
  readonly settings: SharedSettings;
  /** Bring the live ledger to the current leaf. */
  sync(sessionManager: Pick<ExtensionContext["sessionManager"], "getLeafId" | "getEntry">): void;
}

/** A strategy's model access for one call site, and what it used (read after the call, for the failure record). */
export interface ModelCall {
  complete?: CompleteText;
  /** `provider/model` of the resolved model. */
  model?: string;
  /** Set once the model was asked. */
  used?: boolean;
  usage?: { input: number; output: number };
}

/** A text card for a custom message; the host wraps it in Pi's transcript component. */
export type MessageCard<D> = (
  message: { content: string; details: D | undefined },
  options: { expanded: boolean },
  theme: Theme,
) => string;
/** A text card for a custom (never sent) entry; undefined leaves Pi's default. */
export type EntryCard<D> = (data: D | undefined, options: { expanded: boolean }, theme: Theme) => string | undefined;

/** Pi's compaction settings, as its preparation reports them. */
export type CutSettings = SessionBeforeCompactEvent["preparation"]["settings"];
/** Pi's `prepareCompaction`. */
export type PrepareCompaction = (
  entries: SessionEntry[],
  settings: CutSettings,
) => SessionBeforeCompactEvent["preparation"] | undefined;

/** What else the compact switch does while the strategy is active. */
export interface ManualCompactOptions {
  /**
   * Keep Pi's automatic (threshold and overflow) compaction off, except after a response `lastResponse` shows the
   * provider rejected as too long: only Pi's overflow recovery can shrink a context that is all dialogue.
   */
  autoCompactionOff?: { lastResponse: () => AssistantMessage | undefined };
}

/** The switch that lets a manual /compact reach a strategy on a short session (see the host's compact shim). */
export interface ManualCompactSwitch {
  /**
   * Install for this session; `active` says whether the strategy acts now. False when Pi's settings could not be
   * adjusted.
   */
  install(active: () => boolean, options?: ManualCompactOptions): boolean;
  uninstall(): void;
  /** `before_agent_start`: a run began, so the next compaction is Pi's threshold or overflow one. */
  beforeAgentStart(): void;
  /** `agent_settled`: the run ended, so the next compaction, if any, is a manual one. */
  agentSettled(): void;
}

/** One scheduled retry of a side request: the attempt about to be made, the wait before it, the bounded error. */
export interface RetryNotice {
  attempt: number;
  maxRetries: number;
  delayMs: number;
  error: string;
}

/** What the host gives a strategy: everything that needs Pi at runtime, injected. */
export interface StrategyKit<Options = undefined> {
  /** The current session (replaced on every session switch). */
  session(): LedgerSessionView;
  /** This strategy's own settings section. */
  options(): Options;
  /** This strategy's chart. */
  chart: StrategyChart;
  /** Instruction files Pi loaded for the current run. */
  contextFiles(): readonly ContextFile[];
  /** Register a tool through the host's tool boundary (bounded arguments, results and errors). */
  registerTool<P extends TSchema, D>(tool: ToolDefinition<P, D>): void;
  registerMessageCard<D>(customType: string, card: MessageCard<D>): void;
  registerEntryCard<D>(customType: string, card: EntryCard<D>): void;
  /** The one model-call helper: `configured` (`provider/model`) or the active model, with a deadline per request. */
  modelCall(ctx: ExtensionContext, configured: string | undefined): ModelCall;
  /** The model a strategy may call: `configured`, else the active model. */
  resolveModel(ctx: ExtensionContext, configured: string | undefined): ExtensionContext["model"];
  /** Run `work` under a deadline that also races a provider ignoring its signal. */
  withDeadline<T>(
    work: (signal: AbortSignal) => Promise<T>,
    signal: AbortSignal,
    timeoutMs: number | undefined,
  ): Promise<T>;
  /** Pi's conversion of agent messages to provider messages. */
  convertToLlm(messages: AgentMessage[]): Message[];
  /** A fresh manual-compact switch (one per strategy that needs it). */
  manualCompactSwitch(): ManualCompactSwitch;
  /** Pi's own compaction preparation and its default settings (undefined when Pi moved it). */
  piCompaction: { defaults: CutSettings; prepare(): Promise<PrepareCompaction | undefined> };
  /** The host clock. */
  now(): number;
  /** Tests only: the host may wrap a compaction planner (to hold it at chosen points). */
  wrapPlanner(planner: StrategyPlanner): StrategyPlanner;
  sendMessage(message: MessageFact, options?: { deliverAs?: "steer" | "followUp" | "nextTurn" }): void;
  appendEntry<D>(customType: string, data: D): void;
  setLabel(entryId: string, name: string): void;
  /**
   * Run a side model request under Pi's `settings.retry` policy and Pi's transient-error rules: while the reply is a
   * transient provider error, `onRetry` hears of the retry, the host waits Pi's backoff and asks again.
   */
  retrying(
    produce: () => Promise<AssistantMessage>,
    signal: AbortSignal | undefined,
    onRetry: (notice: RetryNotice) => void,
  ): Promise<AssistantMessage>;
  /** Pi's effective settings and the session's thinking level (for side requests that continue a live one). */
  piSettings(): ReturnType<import("@earendil-works/pi-coding-agent").ExtensionAPI["getSettings"]>;
  thinkingLevel(): ReturnType<import("@earendil-works/pi-coding-agent").ExtensionAPI["getThinkingLevel"]>;
}

/**
 * The Pi events a strategy hears, each hook named after its event (`before_agent_start` is `beforeAgentStart`). The
 * host handles each Pi event once and calls the hook on the active strategies in registry order; every hook is
 * optional. How the answers of several strategies combine is part of each hook's type, as plug-in hosts such as
 * rollup state it: see {@link SequentialHook}, {@link FirstAnswerHook}, {@link ChainedHook} and
 * {@link AccumulatingHook}.
 */
export interface EventHooks {
  /** `session_start`. Sequential. */
  sessionStart?(ctx: ExtensionContext): void;
  /** `session_shutdown`. Sequential. */
  sessionShutdown?(): void;
  /** `agent_start`. Sequential. */
  agentStart?(): void;
  /** `before_agent_start`: may add one message to the run. First answer wins; every hook still hears the event. */
  beforeAgentStart?(ctx: ExtensionContext): { message: MessageFact } | undefined;
  /** `agent_settled`. Sequential. */
  agentSettled?(): void;
  /**
   * `context_with_system`: the request about to be sent; may rewrite its messages. Chained: each hook gets the
   * messages as the hooks before it left them (undefined leaves them as they are).
   */
  contextWithSystem?(messages: AgentMessage[], ctx: ExtensionContext): AgentMessage[] | undefined;
  /** `message_end` of an assistant response (other roles are not passed on). Sequential. */
  messageEnd?(message: AssistantMessage): void;
  /**
   * `turn_end`: may append drafts at this step boundary. Drafts accumulate: `entries` are the drafts Pi and the
   * handlers before this one return for the boundary, and an answer's `entries` replace them for the next handler
   * (strategies of scope "always" go first, then the host's restore and pins, then the configured strategy).
   */
  turnEnd?(
    event: TurnEndEvent,
    ctx: ExtensionContext,
    entries: SessionBoundaryDraft[],
  ): Promise<TurnEndEventResult | undefined> | TurnEndEventResult | undefined;
  /** `agent_end`. Sequential. */
  agentEnd?(ctx: ExtensionContext): void;
  /** `session_compact`: Pi stored a compaction (ours or its own). Sequential. */
  sessionCompact?(event: SessionCompactEvent, ctx: ExtensionContext): void;
  /** `session_compact_failed`. Sequential. */
  sessionCompactFailed?(): void;
}

/** Every active strategy's hook runs, in registry order; answers are ignored. */
export type SequentialHook =
  | "sessionStart"
  | "sessionShutdown"
  | "agentStart"
  | "agentSettled"
  | "messageEnd"
  | "agentEnd"
  | "sessionCompact"
  | "sessionCompactFailed";
/** Every active strategy's hook runs, in registry order; the first answer that is not undefined is the one used. */
export type FirstAnswerHook = "beforeAgentStart";
/** Each hook receives the value the hooks before it produced; undefined passes the value on unchanged. */
export type ChainedHook = "contextWithSystem";
/** Each hook receives what the handlers before it appended and may replace it with a longer list. */
export type AccumulatingHook = "turnEnd";

/**
 * What a strategy plugs into the host: its chart's effects, the question of whether it manages the active model,
 * and its {@link EventHooks}.
 */
export interface StrategyHooks extends EventHooks {
  /** The chart's planner and validator. */
  effects: LifecycleEffects;
  /**
   * Asked of the configured strategy only, when Pi prepares a compaction: false when it does not manage the active
   * model, and Pi's own compaction applies.
   */
  appliesTo?(ctx: ExtensionContext): boolean;
}

/** Where a strategy runs: always (its tools or cards serve every session), or only while it is the configured one. */
export type StrategyScope = "always" | "configured";

/** A strategy's settings section: its defaults and how a raw value (and environment overrides) resolves. */
export interface SettingsSection<Options> {
  defaults: Options;
  /** Validate `raw` into `target`; every problem becomes one bounded warning and keeps the default. */
  resolve(target: Options, raw: Record<string, unknown>, read: SettingsReader): void;
}

/** The host's settings helpers, shared by every section so warnings read the same. */
export interface SettingsReader {
  /** The value when it passes `check`, else a warning and `fallback`. */
  pick<T>(name: string, value: unknown, check: (v: unknown) => v is T, fallback: T): T;
  /** One PI_CONTEXT_LEDGER_<name> override: parsed, checked, applied, or a bounded warning. */
  env<T>(
    name: string,
    parse: (v: string) => unknown,
    check: (v: unknown) => v is T,
    expected: string,
    apply: (v: T) => void,
  ): void;
  /** A PI_CONTEXT_LEDGER_<name> boolean override. */
  envBool(name: string, current: boolean): boolean;
  /** The raw PI_CONTEXT_LEDGER_<name> value. */
  envValue(name: string): string | undefined;
  /** Decimal digits only (Number() would also take hex, exponents and blanks). */
  decimal(value: string, fraction: boolean): number;
  /** A value quoted back bounded and printable, for warnings. */
  quote(value: unknown): string;
  warn(message: string): void;
  isModel(v: unknown): v is string;
  isBool(v: unknown): v is boolean;
  isCount(v: unknown): v is number;
  isRatio(v: unknown): v is number;
}

/** A strategy plug-in: its definition, and the hooks it creates per extension instance. */
export interface Strategy<Options = undefined> extends StrategyDefinition {
  /** "always": hooks run whatever strategy is configured (fold's tools); "configured": only while it is the one. */
  scope: StrategyScope;
  /** False for a strategy the model drives with a tool: it is never the value of `contextLedger.strategy`. */
  selectable?: false;
  /** Budget notices stay off unless the user turns them on (native promises Pi's own requests). */
  quietByDefault?: boolean;
  /** Where it steps in and what it then does, for the budget notice (a selectable strategy declares it). */
  budget?: BudgetRule;
  /** The facts it writes, by customType, with the word the dashboard uses for each. */
  facts?: Readonly<Record<string, string>>;
  /**
   * What its records mean to the view (a range's placement, the act's title and restore wording, markers, companions),
   * declared in its own `records.ts`; `catalog.ts` builds the one fact reader from every strategy's declaration.
   */
  records?: StrategyFacts;
  /** Its settings section, under `contextLedger.<name>`. */
  settings?: SettingsSection<Options>;
  /** Lines it adds to the `/context` dashboard. */
  dashboard?(entries: readonly SessionEntry[]): string[];
  create(kit: StrategyKit<Options>): StrategyHooks;
}

/** A strategy as the registry lists it: its name, a one-line summary for settings help, and its route table. */
export interface StrategyDefinition {
  /** Its registry name: the setting value, the lab row id, the `strategy` field of its facts. */
  name: string;
  summary: string;
  /** What the lifecycle chart does with each trigger under this strategy. */
  routes: Routes;
}
