// The contract every compaction strategy implements: a pure planner from Pi's prepared compaction
// input to the summary Pi will persist. Strategies never perform I/O; model calls arrive injected.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage, Message, Tool } from "@earendil-works/pi-ai";
import type {
  AgentToolResult,
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
import type { LifecycleEffects, MessageFact, Routes, StrategyChart } from "../../machines/lifecycle.ts";
import type { LedgerCompactionDetails } from "../log/entries.ts";
import type { BudgetRule } from "../projection/budget.ts";
import type { LiveLedger } from "../projection/live-ledger.ts";
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

/** What a strategy returns: Pi persists it as a compaction entry. */
export interface CompactionPlan {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  estimatedTokensAfter?: number;
  details: LedgerCompactionDetails;
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
  CompactionFactPlan,
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

/** Settings every strategy may read; its own section comes from {@link StrategyKit.options}. */
export interface SharedSettings {
  /** The configured strategy, by registry name. */
  strategy: string;
  /** `provider/model` for strategies that call a model; absent means the active model. */
  plannerModel?: string;
  /** The agent-directed tools are on. */
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
  runStarted(): void;
  runSettled(): void;
}

/** Pi's `settings.retry` policy, as the host read it. */
export interface RetryPolicyView {
  enabled: boolean;
  maxRetries: number;
  baseDelayMs: number;
  maxAgentDelayMs: number;
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
 * The Pi moments a strategy acts at. The host handles each Pi event once and calls these on the active strategies
 * in registry order; every hook is optional.
 */
export interface StrategyHooks {
  /** The chart's planner and validator. */
  effects: LifecycleEffects;
  /** False when the strategy is configured but does not manage the active model: Pi's own compaction applies. */
  appliesTo?(ctx: ExtensionContext): boolean;
  sessionStart?(ctx: ExtensionContext): void;
  sessionShutdown?(): void;
  /** `agent_start` / `agent_end`. */
  agentStart?(): void;
  agentEnd?(ctx: ExtensionContext): void;
  /** `before_agent_start`: may add one message to the run. */
  runStart?(ctx: ExtensionContext): { message: MessageFact } | undefined;
  /** `agent_settled`. */
  runSettled?(): void;
  /** `context_with_system`: the request about to be sent; may rewrite its messages. */
  request?(messages: AgentMessage[], ctx: ExtensionContext): AgentMessage[] | undefined;
  /** `message_end` of an assistant response. */
  response?(message: AssistantMessage): void;
  /** `turn_end`: `entries` are the drafts earlier handlers return for this boundary; `busy` when one already changed the view. */
  turnEnd?(
    event: TurnEndEvent,
    ctx: ExtensionContext,
    entries: SessionBoundaryDraft[],
  ): Promise<TurnEndEventResult | undefined> | TurnEndEventResult | undefined;
  /** `session_compact`: Pi stored a compaction (ours or its own). */
  compacted?(event: SessionCompactEvent, ctx: ExtensionContext): void;
  /** `session_compact_failed`. */
  compactFailed?(): void;
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
  /** Its settings section, under `contextLedger.<name>`. */
  settings?: SettingsSection<Options>;
  /** Lines it adds to the `/context` dashboard. */
  dashboard?(entries: readonly SessionEntry[]): string[];
  /** The rows `pi-context-ledger lab` shows for it, each replayed through the strategy's own code. */
  lab?: readonly LabRowSpec[];
  create(kit: StrategyKit<Options>): StrategyHooks;
}

/** One lab row of a strategy. Its id is a `--strategies` value. */
export interface LabRowSpec {
  id: string;
  /** Name in tables and charts. */
  label: string;
  /** One line on what the row is and, where the lab stands in for a model or an agent, what it models. */
  note: string;
  /** "baseline" for a reference rather than a strategy of ours (Pi's own compaction). */
  family?: "ours" | "baseline";
  replay: LabReplay;
}

/**
 * How the lab drives a strategy without a model or Pi's runtime. Each engine lives in `src/lab/rows/` and calls the
 * strategy's own pieces, so a new strategy that fits an engine needs no lab code.
 */
export type LabReplay =
  /** Pi's compaction past its threshold, answered through the strategy's chart with its compaction planner. */
  | {
      engine: "compaction";
      planner(): StrategyPlanner /** A scripted model for the planner's model call. */;
      model?: (input: CompactionInput) => CompleteText;
    }
  /** Before each request (Pi's turn_end of the step before it), the strategy's own decision and deterministic writer. */
  | { engine: "boundary"; step(boundary: LabBoundary): LabBoundaryAct }
  /** The model drives the strategy through its tool; a scripted agent stands in for it. */
  | { engine: "fold-policy" | "fold-notice" }
  /** Pi's own compaction, simulated with stand-in summary text. */
  | { engine: "pi-native" };

/** A step boundary as the lab replays it. */
export interface LabBoundary {
  /** Active branch of the row's simulated session, root to leaf. */
  branch: readonly SessionEntry[];
  /** The step that just ended: its assistant message entry and how it stopped. */
  stepEntryId: string;
  stopReason: string;
  /** The row's context size. */
  usageTokens: number;
  contextWindow: number;
  cwd: string;
}

/**
 * What a strategy writes at a lab boundary, and the act's name in the lab's figures; `settled` when nothing can be
 * written at this boundary (a later request before the next step need not ask again).
 */
export type LabBoundaryAct = { ok: true; fact: MessageFact; kind: string } | { ok: false; settled: boolean };

/** A strategy as the registry lists it: its name, a one-line summary for settings help, and its route table. */
export interface StrategyDefinition {
  /** Its registry name: the setting value, the lab row id, the `strategy` field of its facts. */
  name: string;
  summary: string;
  /** What the lifecycle chart does with each trigger under this strategy. */
  routes: Routes;
}

/** An agent tool result, as a strategy's tool returns it. */
export type ToolResult<D> = AgentToolResult<D>;
