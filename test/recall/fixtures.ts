// Hand-written session entries for the recall tests: the shared LedgerBuilder with bare ids (e1, e2…),
// explicit ids where a test names one, and each method handing back the whole entry.
import type { AssistantMessage, ToolCall } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { LedgerBuilder } from "../support/ledger-builder.ts";

export type Block = AssistantMessage["content"][number];

/** Appends entries as a linear branch; ids are `e<n>` unless given. */
export class Branch {
  private readonly ledger = new LedgerBuilder({ pad: 1 });

  get entries(): SessionEntry[] {
    return this.ledger.entries;
  }

  get leafId(): string | null {
    return this.ledger.leaf;
  }

  private last(): SessionEntry {
    return this.ledger.entries[this.ledger.entries.length - 1];
  }

  push(entry: SessionEntry): SessionEntry {
    this.ledger.append(entry);
    return entry;
  }

  user(text: string, id?: string): SessionEntry {
    this.ledger.named(id).user(text);
    return this.last();
  }

  assistant(content: Block[] | string, id?: string): SessionEntry {
    this.ledger.named(id).assistant(content);
    return this.last();
  }

  toolResult(call: string, toolName: string, text: string, id?: string, isError = false): SessionEntry {
    this.ledger.named(id).toolResult(call, toolName, text, isError);
    return this.last();
  }

  bash(command: string, output: string, excludeFromContext = false, id?: string): SessionEntry {
    this.ledger.named(id).bash(command, output, { excludeFromContext });
    return this.last();
  }

  modelChange(id?: string): SessionEntry {
    this.ledger.named(id).modelChange();
    return this.last();
  }

  byId(): (id: string) => SessionEntry | undefined {
    const map = this.ledger.byId();
    return (id) => map.get(id);
  }
}

export function toolCall(name: string, args: Record<string, unknown>, id: string): ToolCall {
  return { type: "toolCall", id, name, arguments: args as ToolCall["arguments"] };
}
