// File operations named by tool calls in a message list (read / written / edited paths).
// Pure: reads message content only, never the filesystem.
import type { AgentMessage } from "@earendil-works/pi-agent-core";

export interface FileOpLists {
  read: Set<string>;
  written: Set<string>;
  edited: Set<string>;
}

/** Collect the paths file tools were called with. Nested calls recorded in tool details are included. */
export function collectFileOps(messages: readonly AgentMessage[], into: FileOpLists = { read: new Set(), written: new Set(), edited: new Set() }): FileOpLists {
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const block of message.content ?? []) {
      if (block.type !== "toolCall") continue;
      const path = (block.arguments as { path?: unknown })?.path;
      if (typeof path !== "string") continue;
      if (block.name === "read") into.read.add(path);
      else if (block.name === "write") into.written.add(path);
      else if (block.name === "edit") into.edited.add(path);
    }
  }
  return into;
}
