// The contract every compaction strategy implements: a pure planner from Pi's prepared compaction
// input to the summary Pi will persist. Strategies never perform I/O; model calls arrive injected.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { Tool } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { CompactionStrategyName, LedgerCompactionDetails } from "../log/entries.ts";

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
