// A tiny given/when/then builder of hand-written branches for unit tests. Ids are sequential and
// timestamps advance one second per entry, so every test is deterministic.
import type { SessionEntry } from "../../src/log/entries.ts";
import { LedgerType, type FoldRange } from "../../src/log/entries.ts";

export class LedgerBuilder {
  readonly entries: SessionEntry[] = [];
  private n = 0;
  leaf: string | null = null;

  private base(): { id: string; parentId: string | null; timestamp: string } {
    const id = `e${String(++this.n).padStart(3, "0")}`;
    const entry = { id, parentId: this.leaf, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, this.n)).toISOString() };
    this.leaf = id;
    return entry;
  }

  private ms(): number {
    return Date.UTC(2026, 0, 1, 0, 0, this.n + 1);
  }

  private push<T extends SessionEntry>(entry: T): string {
    this.entries.push(entry);
    return entry.id;
  }

  user(text: string): string {
    return this.push({ ...this.base(), type: "message", message: { role: "user", content: [{ type: "text", text }], timestamp: this.ms() } } as SessionEntry);
  }

  assistant(text: string, calls: { id: string; name: string; args?: Record<string, unknown> }[] = []): string {
    const content = [
      ...(text ? [{ type: "text", text }] : []),
      ...calls.map((c) => ({ type: "toolCall", id: c.id, name: c.name, arguments: c.args ?? {} })),
    ];
    return this.push({
      ...this.base(),
      type: "message",
      message: {
        role: "assistant",
        content,
        api: "faux",
        provider: "faux",
        model: "faux-1",
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: calls.length ? "toolUse" : "stop",
        timestamp: this.ms(),
      },
    } as unknown as SessionEntry);
  }

  toolResult(callId: string, name: string, text: string, isError = false): string {
    return this.push({
      ...this.base(),
      type: "message",
      message: { role: "toolResult", toolCallId: callId, toolName: name, content: [{ type: "text", text }], isError, timestamp: this.ms() },
    } as unknown as SessionEntry);
  }

  fold(range: FoldRange, summary: string, requestEntryId = range.throughId, target = range.afterId ?? "root"): string {
    return this.push({
      ...this.base(),
      type: "custom_message",
      customType: LedgerType.fold,
      content: summary,
      display: true,
      details: { v: 1, range, requestEntryId, target },
    } as SessionEntry);
  }

  compaction(firstKeptEntryId: string, summary = "native summary"): string {
    return this.push({ ...this.base(), type: "compaction", summary, firstKeptEntryId, tokensBefore: 1000 } as SessionEntry);
  }

  label(targetId: string, label: string | undefined): string {
    return this.push({ ...this.base(), type: "label", targetId, label } as SessionEntry);
  }

  /** Move the leaf back (a /tree jump); the next entry branches from here. */
  moveTo(id: string | null): this {
    this.leaf = id;
    return this;
  }

  byId(): Map<string, SessionEntry> {
    return new Map(this.entries.map((e) => [e.id, e]));
  }
}
