// File operations named by tool calls in a message list (read / written / edited paths).
// Pure: reads message content only, never the filesystem.
import type { AgentMessage } from "@earendil-works/pi-agent-core";

export interface FileOpLists {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

/** Record one file-tool call, as Pi's own compaction does: by tool name and its `path` argument. */
function addFileOp(name: unknown, args: unknown, into: FileOpLists): void {
  const path = (args as { path?: unknown } | undefined)?.path;
  if (typeof path !== "string") return;
  if (name === "read") into.read.add(path);
  else if (name === "write") into.written.add(path);
  else if (name === "edit") into.edited.add(path);
}

/**
 * Collect the paths file tools were called with: the calls of assistant messages, and the nested calls a tool
 * made (codemode scripts), which Pi records on that tool's result message as `nestedCalls`.
 */
export function collectFileOps(
  messages: readonly AgentMessage[],
  into: FileOpLists = { read: new Set(), written: new Set(), edited: new Set() },
): FileOpLists {
  for (const message of messages) {
    if (message.role === "toolResult") {
      const nested = (message as { nestedCalls?: { calls?: unknown } }).nestedCalls?.calls;
      if (Array.isArray(nested))
        for (const call of nested as { name?: unknown; arguments?: unknown }[])
          addFileOp(call?.name, call?.arguments, into);
      continue;
    }
    if (message.role !== "assistant") continue;
    for (const block of message.content ?? []) {
      if (block.type === "toolCall") addFileOp(block.name, block.arguments, into);
    }
  }
  return into;
}
