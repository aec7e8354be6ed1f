// Small message and entry builders for the planned strategy's unit tests.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { CompactionEntry, SessionEntry } from "@earendil-works/pi-coding-agent";
import { compactionInput, type CompactionInput } from "../../../src/strategies/contract.ts";

export const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 0 }) as AgentMessage;
export const assistant = (...content: unknown[]): AgentMessage =>
  ({
    role: "assistant",
    content,
    api: "faux",
    provider: "faux",
    model: "m",
    usage: {},
    stopReason: "stop",
    timestamp: 0,
  }) as unknown as AgentMessage;
export const text = (t: string) => ({ type: "text", text: t });
export const thinking = (t: string) => ({ type: "thinking", thinking: t });
export const call = (id: string, name: string, args: Record<string, unknown>) => ({
  type: "toolCall",
  id,
  name,
  arguments: args,
});
export const result = (id: string, name: string, output: string, isError = false): AgentMessage =>
  ({
    role: "toolResult",
    toolCallId: id,
    toolName: name,
    content: [{ type: "text", text: output }],
    isError,
    timestamp: 0,
  }) as AgentMessage;

/** A linear branch of message entries (ids e1, e2, …), optionally after a prior compaction entry. */
export function branchOf(
  messages: readonly AgentMessage[],
  prior?: Pick<CompactionEntry, "summary" | "details">,
): SessionEntry[] {
  const entries: SessionEntry[] = [];
  let parent: string | null = null;
  const push = (e: Record<string, unknown>) => {
    const entry = { ...e, parentId: parent, timestamp: "2025-01-01T00:00:00.000Z" } as unknown as SessionEntry;
    entries.push(entry);
    parent = entry.id;
  };
  if (prior) push({ type: "message", id: "p0", message: user("before the prior compaction") });
  messages.forEach((message, i) => {
    if (prior && i === 0)
      push({
        type: "compaction",
        id: "c0",
        summary: prior.summary,
        firstKeptEntryId: "e1",
        tokensBefore: 1,
        details: prior.details,
      });
    push({ type: "message", id: `e${i + 1}`, message });
  });
  return entries;
}

/** Input that compacts every message but the last (which Pi keeps). */
export function inputOf(
  messages: readonly AgentMessage[],
  prior?: Pick<CompactionEntry, "summary" | "details">,
): CompactionInput {
  return compactionInput(
    {
      firstKeptEntryId: `e${messages.length}`,
      messagesToSummarize: messages.slice(0, -1),
      turnPrefixMessages: [],
      tokensBefore: 1_000,
    },
    { reason: "manual", branch: branchOf(messages, prior), contextWindow: 128_000, cwd: "/p" },
  );
}

export const NO_FLOOR = { retainRatio: 0.5, minRetainedTokens: 0, minSavedTokens: 0 };

/** `n` lines of `prefix`-numbered filler. */
export const filler = (prefix: string, n: number, width = 40) =>
  Array.from({ length: n }, (_, i) => `${prefix} ${i} ${"x".repeat(width)}`).join("\n");
