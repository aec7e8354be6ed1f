// Checks how tool calls and tool results pair up in a projected message list, the way providers require:
// an assistant's calls are answered by the tool results right after it, before any other message.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";

/** Tool call ids answered by a tool result entry somewhere on `branch`. */
export function answeredCallIds(branch: readonly SessionEntry[]): Set<string> {
  const ids = new Set<string>();
  for (const entry of branch)
    if (entry.type === "message" && entry.message.role === "toolResult") ids.add(entry.message.toolCallId);
  return ids;
}

/**
 * Every pairing problem in `messages`, as stable strings:
 * - `orphan-result:<id>`: a result that does not answer a call of the assistant message just before it;
 * - `unanswered-call:<id>`: a call whose result is not among the results right after it, although the
 *   branch has that result (`answered`). Calls the session never answered (an aborted turn in an old
 *   session) are not a projection's fault; the provider layer patches them.
 * System messages are transparent, as they are to Pi's provider layer.
 */
export function pairingViolations(messages: readonly AgentMessage[], answered?: ReadonlySet<string>): string[] {
  const violations: string[] = [];
  let pending = new Set<string>();
  const closePending = () => {
    for (const id of pending) if (!answered || answered.has(id)) violations.push(`unanswered-call:${id}`);
    pending = new Set();
  };
  let afterCalls = false;
  for (const message of messages) {
    if (message.role === "system") continue;
    if (message.role === "toolResult") {
      if (afterCalls && pending.has(message.toolCallId)) pending.delete(message.toolCallId);
      else violations.push(`orphan-result:${message.toolCallId}`);
      continue;
    }
    closePending();
    afterCalls = message.role === "assistant";
    if (message.role === "assistant" && Array.isArray(message.content)) {
      for (const block of message.content) if (block.type === "toolCall") pending.add(block.id);
    }
  }
  closePending();
  return violations;
}
