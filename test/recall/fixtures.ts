// Hand-written session entries for the recall tests: a tiny builder that chains parent ids and stamps times.
import type { AssistantMessage, ToolCall, Usage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";

const USAGE: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

export type Block = AssistantMessage["content"][number];

/** Appends entries as a linear branch; ids are `e<n>` unless given. */
export class Branch {
  readonly entries: SessionEntry[] = [];
  private n = 0;
  private t = Date.UTC(2025, 4, 1, 9, 0, 0);

  private base(id?: string) {
    const parentId = this.entries.length ? this.entries[this.entries.length - 1].id : null;
    this.t += 1000;
    return { id: id ?? `e${++this.n}`, parentId, timestamp: new Date(this.t).toISOString() };
  }

  push(entry: SessionEntry): SessionEntry {
    this.entries.push(entry);
    return entry;
  }

  user(text: string, id?: string): SessionEntry {
    return this.push({ type: "message", ...this.base(id), message: { role: "user", content: text, timestamp: this.t } });
  }

  assistant(content: Block[] | string, id?: string, extra: Partial<AssistantMessage> = {}): SessionEntry {
    const blocks: Block[] = typeof content === "string" ? [{ type: "text", text: content }] : content;
    const message: AssistantMessage = {
      role: "assistant",
      content: blocks,
      api: "faux",
      provider: "faux",
      model: "faux-1",
      usage: USAGE,
      stopReason: blocks.some((b) => b.type === "toolCall") ? "toolUse" : "stop",
      timestamp: this.t,
      ...extra,
    };
    return this.push({ type: "message", ...this.base(id), message });
  }

  toolResult(call: string, toolName: string, text: string, id?: string, isError = false): SessionEntry {
    return this.push({
      type: "message",
      ...this.base(id),
      message: { role: "toolResult", toolCallId: call, toolName, content: [{ type: "text", text }], isError, timestamp: this.t },
    });
  }

  bash(command: string, output: string, excludeFromContext = false, id?: string): SessionEntry {
    return this.push({
      type: "message",
      ...this.base(id),
      message: { role: "bashExecution", command, output, exitCode: 0, cancelled: false, truncated: false, excludeFromContext, timestamp: this.t },
    } as SessionEntry);
  }

  custom(customType: string, content: string, id?: string): SessionEntry {
    return this.push({ type: "custom_message", ...this.base(id), customType, content, display: true } as SessionEntry);
  }

  compaction(summary: string, firstKeptEntryId: string, id?: string): SessionEntry {
    return this.push({ type: "compaction", ...this.base(id), summary, firstKeptEntryId, tokensBefore: 1000 } as SessionEntry);
  }

  modelChange(id?: string): SessionEntry {
    return this.push({ type: "model_change", ...this.base(id), provider: "faux", modelId: "faux-2" } as SessionEntry);
  }

  get leafId(): string | null {
    return this.entries.length ? this.entries[this.entries.length - 1].id : null;
  }

  byId(): (id: string) => SessionEntry | undefined {
    const map = new Map(this.entries.map((e) => [e.id, e]));
    return (id) => map.get(id);
  }
}

export function toolCall(name: string, args: Record<string, unknown>, id: string): ToolCall {
  return { type: "toolCall", id, name, arguments: args as ToolCall["arguments"] };
}
