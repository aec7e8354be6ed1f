// A tiny given/when/then builder of hand-written branches for unit tests. Ids are sequential and
// timestamps advance one second per entry, so every test is deterministic.
import type { SessionEntry } from "../../src/log/entries.ts";
import type { HiddenRange, RestoreData } from "../../src/log/entries.ts";
import { LedgerType } from "../../src/strategies/catalog.ts";

const USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

export interface Call {
  id: string;
  name: string;
  args?: Record<string, unknown>;
}

export interface LedgerBuilderOptions {
  /** Width the sequence number is zero-padded to: 3 gives e001 (the default), 1 gives e1. */
  pad?: number;
}

export interface AssistantExtra {
  thinking?: string;
  stopReason?: string;
  errorMessage?: string;
}

export interface ToolResultOptions {
  isError?: boolean;
  details?: unknown;
  nestedCalls?: unknown;
}

export class LedgerBuilder {
  readonly entries: SessionEntry[] = [];
  /** Generated ids so far; an entry given its own id (`named`) does not advance it. */
  private n = 0;
  /** Entries stamped so far: every stamped entry is one second later. */
  private tick = 0;
  private pendingId: string | undefined;
  private readonly pad: number;
  leaf: string | null = null;

  constructor(options: LedgerBuilderOptions = {}) {
    this.pad = options.pad ?? 3;
  }

  private base(): { id: string; parentId: string | null; timestamp: string } {
    const id = this.pendingId ?? `e${String(++this.n).padStart(this.pad, "0")}`;
    this.pendingId = undefined;
    const entry = {
      id,
      parentId: this.leaf,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, ++this.tick)).toISOString(),
    };
    this.leaf = id;
    return entry;
  }

  private ms(): number {
    return Date.UTC(2026, 0, 1, 0, 0, this.tick + 1);
  }

  private push(entry: Record<string, unknown>): string {
    return this.append({ ...this.base(), ...entry } as unknown as SessionEntry);
  }

  /** Append a ready-made entry as is (no id, parent or time stamped); the leaf moves to it. */
  append(entry: SessionEntry): string {
    this.entries.push(entry);
    this.leaf = entry.id;
    return entry.id;
  }

  /** The next entry takes this id instead of the next sequential one; `undefined` leaves the sequence in charge. */
  named(id: string | undefined): this {
    this.pendingId = id;
    return this;
  }

  user(text: string): string {
    return this.push({
      type: "message",
      message: { role: "user", content: [{ type: "text", text }], timestamp: this.ms() },
    });
  }

  /** `text` is one text block (none when empty), or the content blocks verbatim. */
  assistant(text: string | unknown[], calls: Call[] = [], extra: AssistantExtra = {}): string {
    const blocks = typeof text === "string" ? (text ? [{ type: "text", text }] : []) : text;
    const content = [
      ...(extra.thinking ? [{ type: "thinking", thinking: extra.thinking }] : []),
      ...blocks,
      ...calls.map((c) => ({ type: "toolCall", id: c.id, name: c.name, arguments: c.args ?? {} })),
    ];
    const calling = content.some((b) => (b as { type?: unknown }).type === "toolCall");
    return this.push({
      type: "message",
      message: {
        role: "assistant",
        content,
        api: "faux",
        provider: "faux",
        model: "faux-1",
        usage: USAGE,
        stopReason: extra.stopReason ?? (calling ? "toolUse" : "stop"),
        ...(extra.errorMessage ? { errorMessage: extra.errorMessage } : {}),
        timestamp: this.ms(),
      },
    });
  }

  /** The fourth argument is `isError` alone or the full options. */
  toolResult(callId: string, name: string, text: string, options: boolean | ToolResultOptions = false): string {
    const { isError = false, details, nestedCalls } = typeof options === "boolean" ? { isError: options } : options;
    return this.push({
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: callId,
        toolName: name,
        content: [{ type: "text", text }],
        isError,
        ...(details !== undefined ? { details } : {}),
        ...(nestedCalls !== undefined ? { nestedCalls } : {}),
        timestamp: this.ms(),
      },
    });
  }

  /** One assistant step with one tool call (id `call-<n>`) and its result. */
  tool(
    name: string,
    args: Record<string, unknown>,
    output: string,
    options: ToolResultOptions & { text?: string } = {},
  ): { call: string; result: string } {
    const id = `call-${this.n + 1}`;
    const call = this.assistant(options.text ?? "", [{ id, name, args }]);
    const result = this.toolResult(id, name, output, options);
    return { call, result };
  }

  bash(command: string, output: string, options: { exitCode?: number; excludeFromContext?: boolean } = {}): string {
    const { exitCode = 0, excludeFromContext } = options;
    return this.push({
      type: "message",
      message: {
        role: "bashExecution",
        command,
        output,
        exitCode,
        cancelled: false,
        truncated: false,
        ...(excludeFromContext !== undefined ? { excludeFromContext } : {}),
        timestamp: this.ms(),
      },
    });
  }

  custom(customType: string, content: string, details?: unknown): string {
    return this.push({
      type: "custom_message",
      customType,
      content,
      display: true,
      ...(details !== undefined ? { details } : {}),
    });
  }

  fold(
    range: HiddenRange,
    summary: string,
    requestEntryId = range.throughId,
    target = range.afterId ?? "root",
  ): string {
    return this.custom(LedgerType.fold, summary, { v: 1, range, requestEntryId, target });
  }

  /** A context edit: `null` drops the target from context, a string replaces its content. */
  edit(targetId: string, replacement: string | null): string {
    return this.push({
      type: "context_edit",
      targetId,
      replacement: replacement === null ? null : { content: replacement },
    });
  }

  compaction(firstKeptEntryId: string, summary = "native summary", details?: unknown): string {
    return this.push({
      type: "compaction",
      summary,
      firstKeptEntryId,
      tokensBefore: 1000,
      ...(details !== undefined ? { details } : {}),
    });
  }

  /** A restore fact revoking an act whole, or (with a boundary) only its newer part. */
  restore(
    targetId: string,
    act: RestoreData["act"],
    partial: Pick<RestoreData, "throughId" | "firstKeptEntryId"> = {},
  ): string {
    return this.push({ type: "custom", customType: LedgerType.restore, data: { v: 1, targetId, act, ...partial } });
  }

  /** A pin fact: pin (or unpin) one entry. */
  pin(targetId: string, pinned = true, note?: string): string {
    return this.push({
      type: "custom",
      customType: LedgerType.pin,
      data: { v: 1, targetId, pinned, ...(note !== undefined ? { note } : {}) },
    });
  }

  label(targetId: string, label: string | undefined): string {
    return this.push({ type: "label", targetId, label });
  }

  modelChange(modelId = "faux-2"): string {
    return this.push({ type: "model_change", provider: "faux", modelId });
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
