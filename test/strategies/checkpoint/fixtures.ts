// Hand-written branches for checkpoint unit tests: sequential ids, one second per entry, every message
// kind the checkpoint treats differently. Deterministic by construction.
import type { SessionEntry } from "../../../src/log/entries.ts";
import type { CompactionInput } from "../../../src/strategies/contract.ts";
import { planCheckpoint, type CheckpointOptions } from "../../../src/strategies/checkpoint/planner.ts";

const USAGE = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

export interface Call {
  id: string;
  name: string;
  args?: Record<string, unknown>;
}

/** Builds one linear branch. Methods return the new entry id. */
export class Branch {
  readonly entries: SessionEntry[] = [];
  private n = 0;

  private readonly prefix: string;

  constructor(prefix = "e") {
    this.prefix = prefix;
  }

  private next(): { id: string; parentId: string | null; timestamp: string } {
    const parentId = this.entries.length ? this.entries[this.entries.length - 1].id : null;
    this.n++;
    return { id: `${this.prefix}${String(this.n).padStart(3, "0")}`, parentId, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, this.n)).toISOString() };
  }

  private ms(): number {
    return Date.UTC(2026, 0, 1, 0, 0, this.n);
  }

  push(entry: Omit<SessionEntry, "id" | "parentId" | "timestamp">): string {
    const full = { ...this.next(), ...entry } as SessionEntry;
    this.entries.push(full);
    return full.id;
  }

  user(content: string | unknown[]): string {
    const base = this.next();
    this.entries.push({ ...base, type: "message", message: { role: "user", content: typeof content === "string" ? [{ type: "text", text: content }] : content, timestamp: this.ms() } } as SessionEntry);
    return base.id;
  }

  assistant(text: string, calls: Call[] = [], extra: { thinking?: string; stopReason?: string; errorMessage?: string } = {}): string {
    const base = this.next();
    const content = [
      ...(extra.thinking ? [{ type: "thinking", thinking: extra.thinking }] : []),
      ...(text ? [{ type: "text", text }] : []),
      ...calls.map((c) => ({ type: "toolCall", id: c.id, name: c.name, arguments: c.args ?? {} })),
    ];
    this.entries.push({
      ...base,
      type: "message",
      message: {
        role: "assistant",
        content,
        api: "faux",
        provider: "faux",
        model: "faux-1",
        usage: USAGE,
        stopReason: extra.stopReason ?? (calls.length ? "toolUse" : "stop"),
        ...(extra.errorMessage ? { errorMessage: extra.errorMessage } : {}),
        timestamp: this.ms(),
      },
    } as unknown as SessionEntry);
    return base.id;
  }

  result(callId: string, name: string, text: string | unknown[], options: { isError?: boolean; details?: unknown; nestedCalls?: unknown } = {}): string {
    const base = this.next();
    this.entries.push({
      ...base,
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: callId,
        toolName: name,
        content: typeof text === "string" ? [{ type: "text", text }] : text,
        isError: options.isError ?? false,
        ...(options.details !== undefined ? { details: options.details } : {}),
        ...(options.nestedCalls !== undefined ? { nestedCalls: options.nestedCalls } : {}),
        timestamp: this.ms(),
      },
    } as unknown as SessionEntry);
    return base.id;
  }

  /** One assistant step with one tool call and its result. */
  tool(name: string, args: Record<string, unknown>, output: string, options: { isError?: boolean; text?: string; details?: unknown } = {}): { call: string; result: string } {
    const id = `call-${this.n + 1}`;
    const call = this.assistant(options.text ?? "", [{ id, name, args }]);
    const result = this.result(id, name, output, options);
    return { call, result };
  }

  custom(customType: string, content: string, details?: unknown): string {
    return this.push({ type: "custom_message", customType, content, display: true, ...(details !== undefined ? { details } : {}) } as never);
  }

  bash(command: string, output: string, exitCode = 0): string {
    const base = this.next();
    this.entries.push({
      ...base,
      type: "message",
      message: { role: "bashExecution", command, output, exitCode, cancelled: false, truncated: false, timestamp: this.ms() },
    } as unknown as SessionEntry);
    return base.id;
  }

  edit(targetId: string, replacement: null | string): string {
    return this.push({ type: "context_edit", targetId, replacement: replacement === null ? null : { content: replacement } } as never);
  }

  compaction(firstKeptEntryId: string, summary: string, details?: unknown): string {
    return this.push({ type: "compaction", summary, firstKeptEntryId, tokensBefore: 1000, ...(details !== undefined ? { details } : {}) } as never);
  }
}

export const CWD = "/repo";

/** A compaction input with test defaults. */
export function inputFor(branch: readonly SessionEntry[], firstKeptEntryId: string, overrides: Partial<CompactionInput> = {}): CompactionInput {
  return {
    reason: "manual",
    branch,
    firstKeptEntryId,
    messagesToSummarize: [],
    turnPrefixMessages: [],
    tokensBefore: 1000,
    contextWindow: 100_000,
    cwd: CWD,
    contextFiles: [],
    ...overrides,
  };
}

export const UNCAPPED: CheckpointOptions = { capPercent: null, startupReads: true };

/** Plan, then append the compaction entry the way Pi would, and return the plan and its entry id. */
export function compactInto(b: Branch, firstKeptEntryId: string, options: CheckpointOptions = UNCAPPED, overrides: Partial<CompactionInput> = {}) {
  const plan = planCheckpoint(inputFor(b.entries, firstKeptEntryId, overrides), options);
  const id = b.compaction(plan.firstKeptEntryId, plan.summary, plan.details);
  return { plan, id };
}

/** Lines between `<span ...>` and `</span>` of the n-th span (1-based) in a summary. */
export function spanBody(summary: string, n: number): string[] {
  const lines = summary.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`<span n="${n}"`));
  if (start < 0) return [];
  const end = lines.indexOf("</span>", start);
  return lines.slice(start + 1, end);
}
