// The one-attempt rule of context_lookup as a reducer over branch entries: lookup calls since the last reset
// (user message, bash run, result of a non-recall tool), counting calls pending in the same batch. Pure: no I/O.
import { walkParents } from "../log/branch.ts";
import type { SessionEntry } from "../log/entries.ts";
import { MAX_QUESTION_LENGTH } from "./input.ts";

export const LOOKUP_TOOL = "context_lookup";

/** The four recall tools: their results neither reset nor spend the lookup allowance (lookup calls do). */
export const RECALL_TOOL_NAMES: readonly string[] = [
  LOOKUP_TOOL,
  "context_list_entries",
  "context_grep",
  "context_show_entry",
];

/** Lookup calls seen since the last reset. */
export interface AttemptState {
  lookups: number;
}

export const INITIAL_ATTEMPTS: AttemptState = { lookups: 0 };

type Loose = Record<string, unknown>;

function messageOf(entry: SessionEntry): Loose | undefined {
  return entry.type === "message" ? (entry.message as unknown as Loose) : undefined;
}

/** False for a call the tool refuses before any search (an oversized question): it spends no attempt. */
function runnable(args: unknown): boolean {
  const question = (args as Loose | undefined)?.question;
  return typeof question !== "string" || question.length <= MAX_QUESTION_LENGTH;
}

/** Lookup tool calls of an assistant entry that can run, in call order. */
function lookupCallIds(message: Loose): string[] {
  const content = message.content;
  if (!Array.isArray(content)) return [];
  const ids: string[] = [];
  for (const block of content as Loose[]) {
    if (block?.type === "toolCall" && block.name === LOOKUP_TOOL && runnable(block.arguments))
      ids.push(String(block.id ?? ""));
  }
  return ids;
}

/** True for entries that give the agent a fresh lookup: new user input, a bash run, or non-recall tool work. */
export function isAttemptReset(entry: SessionEntry): boolean {
  const message = messageOf(entry);
  if (!message) return false;
  switch (message.role) {
    case "user":
    case "bashExecution":
      return true;
    case "toolResult":
      return !RECALL_TOOL_NAMES.includes(String(message.toolName ?? ""));
    default:
      return false;
  }
}

/** Fold one branch entry into the attempt count. */
export function evolveAttempts(state: AttemptState, entry: SessionEntry): AttemptState {
  if (isAttemptReset(entry)) return state.lookups === 0 ? state : INITIAL_ATTEMPTS;
  const message = messageOf(entry);
  if (message?.role !== "assistant") return state;
  const calls = lookupCallIds(message).length;
  return calls ? { lookups: state.lookups + calls } : state;
}

/** Whether a lookup call may run: `ordinal` counts the lookups before it since the last reset (0 = first). */
export interface AttemptDecision {
  allowed: boolean;
  ordinal: number;
}

/**
 * Decide a `context_lookup` call. `entries` is the branch (or any suffix of it that starts at or before the
 * last reset preceding the call) and contains the assistant entry that issued `toolCallId`. Entries after that
 * assistant entry are ignored, so results of sibling calls persisted earlier cannot change the answer. Calls
 * earlier in the same assistant message count, which is how parallel calls in one batch are limited.
 */
export function decideLookupAttempt(
  entries: readonly SessionEntry[],
  toolCallId: string,
  maxAttempts = 1,
): AttemptDecision {
  let state = INITIAL_ATTEMPTS;
  for (const entry of entries) {
    const message = messageOf(entry);
    if (message?.role === "assistant") {
      const ids = lookupCallIds(message);
      const position = ids.indexOf(toolCallId);
      if (position >= 0) {
        const ordinal = state.lookups + position;
        return { allowed: ordinal < maxAttempts, ordinal };
      }
    }
    state = evolveAttempts(state, entry);
  }
  // The call is not on the branch (e.g. run nested by another tool): only earlier lookups count.
  return { allowed: state.lookups < maxAttempts, ordinal: state.lookups };
}

function issues(entry: SessionEntry, toolCallId: string): boolean {
  const message = messageOf(entry);
  return message?.role === "assistant" && lookupCallIds(message).includes(toolCallId);
}

/**
 * The smallest branch suffix {@link decideLookupAttempt} needs, found by walking parent links back from the
 * leaf: past the issuing assistant entry, then to the nearest reset. Cost is the distance to that reset, not
 * the branch length. `getEntry` is the session's lookup.
 */
export function attemptWindow(
  leafId: string | null,
  getEntry: (id: string) => SessionEntry | undefined,
  toolCallId: string,
): SessionEntry[] {
  const walked: SessionEntry[] = [];
  // seeking: looking for the issuer; found: walking on to the reset before it; absent: the most recent
  // assistant entry did not issue the call, so it is not on the branch and the leaf's own window applies.
  let mode: "seeking" | "found" | "absent" = "seeking";
  let resetSeen = false;
  walkParents(leafId, getEntry, (entry) => {
    walked.push(entry);
    const reset = isAttemptReset(entry);
    if (mode === "seeking") {
      if (issues(entry, toolCallId)) mode = "found";
      else if (messageOf(entry)?.role === "assistant") {
        mode = "absent";
        if (resetSeen) return false;
      } else if (reset) resetSeen = true;
    } else if (reset) return false;
  });
  return walked.reverse();
}
