// Token accounting of a preserve checkpoint, in the breakdown the original extension reports: the dialogue kept
// verbatim (user and assistant separately), earlier checkpoints, the raw technical state before, what this
// checkpoint compacts by kind, the raw tail it keeps, and the headroom left. Pure: no I/O; estimates only.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { isPreserveEntry } from "../catalog.ts";
import { isCompletedAnswer } from "../../projection/ranges.ts";
import type { ProjectedEntry } from "../../projection/project.ts";
import { CHARS_PER_TOKEN, estimateMessagesTokens, messageChars } from "../../projection/tokens.ts";

/** What the model view held when the delta was selected (estimates, before the checkpoint). */
export interface ViewAccounting {
  /** User messages and the visible text of completed answers. */
  dialogue: { user: number; assistant: number };
  /** Earlier preserve checkpoints in view. */
  checkpoints: { count: number; tokens: number };
  /** Raw technical state in view: tool calls and results, unfinished turns, reasoning, other custom messages. */
  raw: number;
  /** The part of `raw` after the delta's limit: the current batch, which stays raw. */
  currentBatch: number;
  /** Compaction and branch summaries in view. */
  summaries: number;
  /** Everything above: the estimated conversation. */
  total: number;
}

/** Tokens of technical state by kind. */
export interface TechnicalBreakdown {
  toolCalls: number;
  toolResults: number;
  reasoning: number;
  other: number;
}

const tokensOf = (chars: number): number => Math.ceil(chars / CHARS_PER_TOKEN);

/** Split technical messages into tool calls, tool results, reasoning and the rest. */
export function technicalBreakdown(messages: readonly AgentMessage[]): TechnicalBreakdown {
  const chars = { toolCalls: 0, toolResults: 0, reasoning: 0, other: 0 };
  for (const message of messages) {
    if (message.role === "toolResult") chars.toolResults += messageChars(message);
    else if (message.role === "assistant") {
      for (const block of message.content ?? []) {
        if (block.type === "toolCall")
          chars.toolCalls += block.name.length + JSON.stringify(block.arguments ?? {}).length;
        else if (block.type === "thinking") chars.reasoning += block.thinking.length;
        else if (block.type === "text") chars.other += block.text.length;
      }
    } else chars.other += messageChars(message);
  }
  return {
    toolCalls: tokensOf(chars.toolCalls),
    toolResults: tokensOf(chars.toolResults),
    reasoning: tokensOf(chars.reasoning),
    other: tokensOf(chars.other),
  };
}

/** Account the projected view of a branch; `limit` is the branch index of the delta's last eligible entry. */
export function accountView(
  entries: readonly ProjectedEntry[],
  indexOf: (id: string) => number,
  limit: number,
): ViewAccounting {
  const view: ViewAccounting = {
    dialogue: { user: 0, assistant: 0 },
    checkpoints: { count: 0, tokens: 0 },
    raw: 0,
    currentBatch: 0,
    summaries: 0,
    total: 0,
  };
  for (const { sourceEntry: entry, messages } of entries) {
    if (!messages.length) continue;
    const tokens = estimateMessagesTokens(messages.filter((m) => m.role !== "system"));
    view.total += tokens;
    if (isPreserveEntry(entry)) {
      view.checkpoints.count++;
      view.checkpoints.tokens += tokens;
    } else if (entry.type === "compaction" || entry.type === "branch_summary") view.summaries += tokens;
    else if (entry.type === "message" && entry.message.role === "user") view.dialogue.user += tokens;
    else if (isCompletedAnswer(entry)) {
      // Reasoning still shown with an answer is raw technical state; the rest is the answer itself.
      const reasoning = technicalBreakdown(messages).reasoning;
      view.dialogue.assistant += Math.max(0, tokens - reasoning);
      addRaw(view, reasoning, indexOf(entry.id) > limit);
    } else if (entry.type === "message" || entry.type === "custom_message")
      addRaw(view, tokens, indexOf(entry.id) > limit);
    else view.summaries += tokens;
  }
  return view;
}

function addRaw(view: ViewAccounting, tokens: number, current: boolean): void {
  view.raw += tokens;
  if (current) view.currentBatch += tokens;
}
