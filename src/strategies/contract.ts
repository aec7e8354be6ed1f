// The contract every compaction strategy implements: a pure planner from Pi's prepared compaction
// input to the summary Pi will persist. Strategies never perform I/O; model calls arrive injected.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { Tool } from "@earendil-works/pi-ai";
import type { ExtensionContext, SessionBeforeCompactEvent, SessionBoundaryDraft, SessionEntry, TurnEndEvent } from "@earendil-works/pi-coding-agent";
import type { Routes } from "../../machines/compaction.machine.ts";
import type { CompactionStrategyName, LedgerCompactionDetails, StrategyName } from "../log/entries.ts";

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
}

/** Injected model access. A bare string is a text-only reply. */
export type CompleteText = (request: ModelRequest, signal: AbortSignal) => Promise<string | ModelReply>;

export interface StrategyPlanner {
  name: CompactionStrategyName;
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
  session: Omit<CompactionInput, keyof PreparedCut | "reason" | "contextFiles"> & Partial<Pick<CompactionInput, "reason" | "contextFiles">>,
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

/** The arguments of a `context_compact` call, as the model wrote them. */
export interface FoldCall {
  target: string;
  summary: string;
  backupCheckpoint?: string;
}

/** The Pi moment a lifecycle request comes from. */
export type Moment =
  /** The model called `context_compact`; the fold waits for the end of the step that asked. */
  | { type: "tool"; call: FoldCall; toolCallId: string; requestEntryId: string; requestKey: string }
  /** A step ended: its messages are stored; `entries` are the drafts earlier handlers return for this boundary. */
  | { type: "turn_end"; event: TurnEndEvent; entries: readonly SessionBoundaryDraft[] }
  /** Pi prepared a compaction (manual /compact, threshold or overflow). */
  | { type: "session_before_compact"; event: SessionBeforeCompactEvent };

/** What a lifecycle carries into planning: the moment and the extension context it arrived with. */
export interface LifecycleRequest {
  moment: Moment;
  ctx: ExtensionContext;
  /** Filled by planners that call a model, for the bounded failure record (never transcript text). */
  trace: PlanTrace;
}

/** What a planning attempt used and how it failed, kept beside the request for the failure record. */
export interface PlanTrace {
  /** The planner's own error (the chart carries only its message). */
  failure?: unknown;
  /** `provider/model` asked, and its usage. */
  model?: string;
  usage?: { input: number; output: number };
  /** Set when the chart started planning (a trigger routed to Pi is not a failed attempt). */
  attempted?: boolean;
  /** When planning started, for the failure record's duration (host clock, passed in). */
  startedAt?: number;
}

/** A custom message the strategy stores (a fold summary, a tool-state summary, a digest, a notice). */
export interface MessageFact {
  customType: string;
  content: string;
  display: boolean;
  /** Every fact this package writes is versioned. */
  details: { readonly v: 1 };
}

/** The compaction entry a strategy asks Pi to store in answer to `session_before_compact`. */
export interface CompactionFactPlan {
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  estimatedTokensAfter?: number;
  details: LedgerCompactionDetails;
}

/** The facts a validated plan asks Pi to store, and how Pi continues. The host translates them into Pi's answer. */
export interface PlannedFacts {
  /** Drafts appended at this step boundary, after the drafts earlier handlers return. */
  entries?: readonly SessionBoundaryDraft[];
  /** Continue the run after this boundary (a fold replaced history mid-run). */
  continue?: boolean;
  /** Custom messages stored outside a step boundary (a compaction between or inside runs). */
  messages?: readonly MessageFact[];
  /** The compaction entry Pi stores. */
  compaction?: CompactionFactPlan;
  /** Decline Pi's compaction: the strategy already made room, or there is nothing worth a summary. */
  declineCompaction?: boolean;
  /** A checkpoint name to set on an entry once the facts are stored. */
  label?: { entryId: string; name: string };
}

/** A strategy as the registry lists it: its name, a one-line summary for settings help, and its route table. */
export interface StrategyDefinition {
  name: StrategyName;
  summary: string;
  /** What the lifecycle chart does with each trigger under this strategy. */
  routes: Routes;
}

/** A strategy as the registry lists it: its name, a one-line summary for settings help, and its route table. */
export interface StrategyDefinition {
  name: StrategyName;
  summary: string;
  /** What the lifecycle chart does with each trigger under this strategy. */
  routes: Routes;
}
