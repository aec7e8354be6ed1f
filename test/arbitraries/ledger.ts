// Valid Pi v3 session ledgers, built by folding generated commands into entries. Ids and timestamps come
// from the generator, so a ledger is a pure function of the fast-check seed. Exported for contributors.
import fc from "fast-check";
import {
  getCurrentSystemMessage,
  type AssistantMessage,
  type ImageContent,
  type SystemMessage,
  type TextContent,
  type ToolCall,
  type ToolResultMessage,
  type Usage,
  type UserMessage,
} from "@earendil-works/pi-ai";
import { buildSessionProjection, type SessionEntry, type SessionHeader } from "@earendil-works/pi-coding-agent";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { PinData, RangeDetails, RestoreData } from "../../src/log/entries.ts";
import { isCheckpointMarker, isToolCheckpoint, LedgerType, type FoldDetails } from "../../src/strategies/catalog.ts";
import { commandArb, type CommandWeights, type LedgerCommand, type ToolCallSpec } from "./commands.ts";
import { naivePins, naiveRestores, naiveViewStart, restorableActs, visibleFoldTargets } from "./visibility.ts";

/** One change to the session as Pi makes it: an entry appended at the leaf, or the leaf moved (`/tree`). */
export type LedgerStep = { kind: "append"; entry: SessionEntry } | { kind: "move"; leafId: string | null };

/** A generated session: what the file holds, plus the leaf and the history of steps that produced it. */
export interface GeneratedLedger {
  header: SessionHeader;
  /** Entries in file order. */
  entries: SessionEntry[];
  /** The current leaf. It can differ from the last entry after a `/tree` move that appended nothing. */
  leafId: string | null;
  /** Appends and leaf moves in the order they happened (replaying them rebuilds `entries` and `leafId`). */
  steps: LedgerStep[];
}

/** What varies between generated sessions besides the commands. */
export interface LedgerSeed {
  /** Three hex digits that start every entry id (ids stay unique: a counter follows). */
  idPrefix: string;
  /** Session start, epoch milliseconds. */
  start: number;
  sessionId: string;
}

export interface LedgerOptions {
  minCommands?: number;
  maxCommands?: number;
  /** Override command frequencies (0 switches a kind off). */
  weights?: Partial<CommandWeights>;
  /** Include our facts: folds, restores, preserve markers (default true). False gives ledgers with no ledger facts. */
  folds?: boolean;
  /** fast-check size of the command array (default "medium": a few dozen commands). */
  size?: fc.SizeForArbitrary;
  /** Start with the model, thinking level and system message entries Pi writes first (default true). */
  preamble?: boolean;
}

const ZERO_USAGE: Usage = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

const BASE_TOOLS = ["read", "bash", "edit", "write"];

/** Roles Pi accepts as a compaction's first kept message (never a tool result). */
const CUT_POINT_ROLES = new Set(["user", "assistant", "bashExecution", "custom", "branchSummary", "compactionSummary"]);

/** Applies commands one by one; every method keeps the ledger valid. */
export class LedgerFolder {
  readonly header: SessionHeader;
  readonly entries: SessionEntry[] = [];
  readonly steps: LedgerStep[] = [];
  leafId: string | null = null;
  private readonly byId = new Map<string, SessionEntry>();
  private clock: number;
  private counter = 0;
  private model = { provider: "anthropic", modelId: "claude-sonnet-4-5" };
  private thinkingLevel = "off";

  private readonly seed: LedgerSeed;

  constructor(seed: LedgerSeed, preamble: boolean) {
    this.seed = seed;
    this.clock = seed.start;
    this.header = {
      type: "session",
      version: 3,
      id: seed.sessionId,
      timestamp: new Date(seed.start).toISOString(),
      cwd: "/work/project",
    };
    if (preamble) {
      this.append({ type: "model_change", provider: this.model.provider, modelId: this.model.modelId });
      this.append({ type: "thinking_level_change", thinkingLevel: this.thinkingLevel });
      const system: SystemMessage = {
        role: "system",
        content: "",
        sections: {
          preamble: "You are a coding assistant.",
          tools: `<tools>\n${BASE_TOOLS.map((t) => `- ${t}`).join("\n")}\n</tools>`,
        },
        toolsAdded: BASE_TOOLS.map((name) => ({
          name,
          description: `The ${name} tool`,
          parameters: { type: "object", properties: {} },
        })),
        timestamp: this.clock,
      };
      this.append({ type: "message", message: system });
    }
  }

  /** The active path, root to leaf. */
  branch(leafId: string | null = this.leafId): SessionEntry[] {
    const path: SessionEntry[] = [];
    for (
      let current = leafId ? this.byId.get(leafId) : undefined;
      current;
      current = current.parentId ? this.byId.get(current.parentId) : undefined
    ) {
      path.push(current);
    }
    return path.reverse();
  }

  result(): GeneratedLedger {
    const ledger: GeneratedLedger = {
      header: this.header,
      entries: this.entries.slice(),
      leafId: this.leafId,
      steps: this.steps.slice(),
    };
    // Counterexamples print as the session file plus the leaf (non-enumerable, so equality checks ignore it).
    Object.defineProperty(ledger, fc.toStringMethod, {
      value: () => `leaf=${ledger.leafId}\n${toJsonl(ledger)}`,
      enumerable: false,
    });
    return ledger;
  }

  apply(command: LedgerCommand): void {
    this.clock += command.dt;
    switch (command.kind) {
      case "user":
        return this.user(command);
      case "assistant":
        this.assistantStep(command.calls, { thinking: command.thinking, text: command.text, ending: command.ending });
        return;
      case "bash":
        this.appendMessage({
          role: "bashExecution",
          command: command.command,
          output: command.output,
          // A cancelled command has no exit code; the key is left out, as JSON would drop it anyway.
          ...(command.cancelled || command.exitCode === undefined ? {} : { exitCode: command.exitCode }),
          cancelled: command.cancelled,
          truncated: false,
          timestamp: this.clock,
          ...(command.excluded ? { excludeFromContext: true } : {}),
        } as AgentMessage);
        return;
      case "customMessage":
        this.append({
          type: "custom_message",
          customType: command.customType,
          content: command.asBlocks ? [{ type: "text", text: command.content }] : command.content,
          display: command.display,
        });
        return;
      case "customState":
        this.append({ type: "custom", customType: command.customType, data: command.data });
        return;
      case "label": {
        if (this.entries.length === 0) return;
        const target = this.entries[command.pick % this.entries.length];
        this.append({ type: "label", targetId: target.id, ...(command.label ? { label: command.label } : {}) } as Omit<
          SessionEntry,
          "id" | "parentId" | "timestamp"
        >);
        return;
      }
      case "sessionName":
        this.append({ type: "session_info", name: command.name });
        return;
      case "modelChange":
        this.model = { provider: command.provider, modelId: command.modelId };
        this.append({ type: "model_change", provider: command.provider, modelId: command.modelId });
        return;
      case "thinkingChange":
        this.thinkingLevel = command.level;
        this.append({ type: "thinking_level_change", thinkingLevel: command.level });
        return;
      case "systemChange": {
        const system: SystemMessage = {
          role: "system",
          content: "",
          sections: { [command.section]: command.value },
          ...(command.addTool
            ? { toolsAdded: [{ name: command.addTool, description: `The ${command.addTool} tool`, parameters: {} }] }
            : {}),
          timestamp: this.clock,
        };
        this.appendMessage(system);
        return;
      }
      case "usage":
        this.append({
          type: "usage",
          kind: "cache_warm",
          provider: this.model.provider,
          model: this.model.modelId,
          usage: { ...ZERO_USAGE, cacheRead: command.tokens, totalTokens: command.tokens },
        });
        return;
      case "compaction":
        return this.compaction(command);
      case "navigate":
        return this.navigate(command);
      case "contextEdit":
        return this.contextEdit(command);
      case "fold":
        return this.fold(command);
      case "restore":
        return this.restore(command);
      case "pin":
        return this.pin(command);
      case "marker":
        return this.marker(command);
      case "toolCheckpoint":
        return this.toolCheckpoint(command);
      default: {
        const _exhaustive: never = command;
        return _exhaustive;
      }
    }
  }

  private nextId(): string {
    return `${this.seed.idPrefix}${(this.counter++).toString(16).padStart(5, "0")}`;
  }

  /** Append an entry as a child of the leaf. The clock ticks one millisecond per entry within a command. */
  private append(body: Omit<SessionEntry, "id" | "parentId" | "timestamp"> | Record<string, unknown>): SessionEntry {
    const entry = {
      ...body,
      id: this.nextId(),
      parentId: this.leafId,
      timestamp: new Date(this.clock).toISOString(),
    } as SessionEntry;
    // Key order as Pi writes it: type, id, parentId, timestamp, then the payload.
    const { type, id, parentId, timestamp, ...payload } = entry as SessionEntry & Record<string, unknown>;
    const ordered = { type, id, parentId, timestamp, ...payload } as SessionEntry;
    this.entries.push(ordered);
    this.byId.set(ordered.id, ordered);
    this.leafId = ordered.id;
    this.steps.push({ kind: "append", entry: ordered });
    return ordered;
  }

  private appendMessage(message: AgentMessage): SessionEntry {
    return this.append({ type: "message", message });
  }

  private user(command: Extract<LedgerCommand, { kind: "user" }>): void {
    // The span's word follows the `PIN-…` convention the planned invariants read protected words by.
    const text = command.keep ? `${command.text}\n<keepContext>\nPIN-kept-by-user\n</keepContext>` : command.text;
    const blocks: (TextContent | ImageContent)[] = [{ type: "text", text }];
    if (command.image) blocks.push({ type: "image", data: command.image, mimeType: "image/png" });
    const message: UserMessage = {
      role: "user",
      content: command.asString && !command.image ? text : blocks,
      timestamp: this.clock,
    };
    this.appendMessage(message);
  }

  private assistantMessage(
    content: AssistantMessage["content"],
    stopReason: AssistantMessage["stopReason"],
  ): AssistantMessage {
    return {
      role: "assistant",
      content,
      api: "anthropic-messages",
      provider: this.model.provider,
      model: this.model.modelId,
      usage: ZERO_USAGE,
      stopReason,
      timestamp: this.clock,
      ...(stopReason === "error" ? { errorMessage: "provider error" } : {}),
    };
  }

  /** An assistant message and, right after it, one result per tool call (parallel calls share the step). */
  private assistantStep(
    calls: readonly ToolCallSpec[],
    extra: {
      thinking?: string;
      text?: string;
      ending?: AssistantMessage["stopReason"];
      compact?: Record<string, string>;
    } = {},
  ): { assistant: SessionEntry; results: SessionEntry[] } {
    const content: AssistantMessage["content"] = [];
    if (extra.thinking) content.push({ type: "thinking", thinking: extra.thinking });
    if (extra.text !== undefined) content.push({ type: "text", text: extra.text });
    const assistantId = `${this.seed.idPrefix}${this.counter.toString(16).padStart(5, "0")}`;
    const toolCalls: ToolCall[] = calls.map((call, i) => ({
      type: "toolCall",
      id: `toolu_${assistantId}_${i}`,
      name: call.name,
      arguments: call.args,
    }));
    if (extra.compact)
      toolCalls.push({
        type: "toolCall",
        id: `toolu_${assistantId}_${calls.length}`,
        name: "context_compact",
        arguments: extra.compact,
      });
    content.push(...toolCalls);
    const ending = extra.ending ?? "stop";
    if (content.length === 0 && (ending === "stop" || ending === "length")) content.push({ type: "text", text: "" });
    const assistant = this.appendMessage(this.assistantMessage(content, toolCalls.length ? "toolUse" : ending));
    const results: SessionEntry[] = [];
    toolCalls.forEach((call, i) => {
      this.clock += 1;
      const spec = calls[i];
      const result: ToolResultMessage = spec
        ? {
            role: "toolResult",
            toolCallId: call.id,
            toolName: call.name,
            content:
              spec.outcome === "image"
                ? [
                    { type: "text", text: `Read image ${spec.args.path ?? "file"}` },
                    { type: "image", data: spec.image, mimeType: "image/png" },
                  ]
                : [{ type: "text", text: spec.output }],
            isError: spec.outcome === "error",
            timestamp: this.clock,
          }
        : {
            role: "toolResult",
            toolCallId: call.id,
            toolName: call.name,
            content: [{ type: "text", text: "Compaction requested." }],
            isError: false,
            timestamp: this.clock,
          };
      results.push(this.appendMessage(result));
    });
    return { assistant, results };
  }

  private compaction(command: Extract<LedgerCommand, { kind: "compaction" }>): void {
    const path = this.branch();
    let firstKeptEntryId: string | undefined;
    if (!command.retainNone) {
      // Pi cuts only after the previous compaction's summary, at a user-like or assistant message, and never
      // right after a compaction.
      if (path.length === 0 || path[path.length - 1].type === "compaction") return;
      const candidates = this.cutCandidates(path);
      if (candidates.length === 0) return;
      firstKeptEntryId = candidates[command.pick % candidates.length].id;
    }
    const compaction = this.appendCompaction(command.summary, firstKeptEntryId, command.strategy);
    // The `checkpoint` strategy follows its compaction with a recap message naming it.
    if (command.strategy && command.recap !== undefined) {
      this.clock += 1;
      this.append({
        type: "custom_message",
        customType: LedgerType.recap,
        content: command.recap,
        display: true,
        details: { v: 1, compactionId: compaction.id },
      });
    }
  }

  /** A compaction at the leaf keeping from `firstKeptEntryId` (none: from itself), native or by a strategy. */
  private appendCompaction(
    summary: string,
    firstKeptEntryId: string | undefined,
    strategy?: "checkpoint" | "planned",
  ): SessionEntry {
    const projection = buildSessionProjection(this.branch(), this.leafId);
    const id = `${this.seed.idPrefix}${this.counter.toString(16).padStart(5, "0")}`;
    const system = getCurrentSystemMessage(projection.messages as Parameters<typeof getCurrentSystemMessage>[0]);
    return this.append({
      type: "compaction",
      summary,
      firstKeptEntryId: firstKeptEntryId ?? id,
      tokensBefore: Math.ceil(JSON.stringify(projection.messages).length / 4),
      details: strategy ? { v: 1, strategy } : { readFiles: [], modifiedFiles: [] },
      ...(system ? { systemMessage: { ...system, timestamp: this.clock } } : {}),
    });
  }

  /** Entries Pi accepts as a compaction's first kept entry: after its newest summary, user-like or assistant. */
  private cutCandidates(path: SessionEntry[]): SessionEntry[] {
    const projection = buildSessionProjection(path, this.leafId);
    const previous = projection.entries.findIndex((p) => p.sourceEntry.type === "compaction" && p.messages.length > 0);
    return projection.entries
      .slice(previous + 1)
      .filter((p) => p.sourceEntry.type !== "compaction" && p.messages.some((m) => CUT_POINT_ROLES.has(m.role)))
      .map((p) => p.sourceEntry);
  }

  /**
   * A `preserve` or `digest` tool checkpoint at `turn_end`: its keepDialogue range runs from the previous
   * checkpoint's end (of the same kind) through a step boundary, so no tool call is split from its result. With
   * `overflow`, Pi then compacts natively and keeps from the first entry after the range it may cut at.
   */
  private toolCheckpoint(command: Extract<LedgerCommand, { kind: "toolCheckpoint" }>): void {
    const path = this.branch();
    const type = command.strategy === "preserve" ? LedgerType.preserve : LedgerType.digest;
    const previous = path.filter((e) => isToolCheckpoint(e) && e.customType === type);
    const afterId = (previous.at(-1) as { details?: RangeDetails } | undefined)?.details?.range.throughId ?? null;
    const after = afterId === null ? -1 : path.findIndex((e) => e.id === afterId);
    if (afterId !== null && after < 0) return;
    const open = new Set<string>();
    const bounds: number[] = [];
    path.forEach((entry, i) => {
      if (entry.type === "message" && entry.message.role === "assistant")
        for (const b of entry.message.content) if (b.type === "toolCall") open.add(b.id);
      if (entry.type === "message" && entry.message.role === "toolResult") open.delete(entry.message.toolCallId);
      if (i > after && open.size === 0 && (entry.type === "message" || entry.type === "custom_message")) bounds.push(i);
    });
    if (!bounds.length) return;
    const through = bounds[command.pick % bounds.length];
    const details = {
      v: 1,
      strategy: command.strategy,
      checkpoint: previous.length + 1,
      range: { afterId, throughId: path[through].id, keepDialogue: true },
    };
    this.append({ type: "custom_message", customType: type, content: command.summary, display: true, details });
    if (!command.overflow) return;
    this.clock += 1;
    const kept = this.cutCandidates(this.branch()).find((e) => path.indexOf(e) > through || !path.includes(e));
    if (kept) this.appendCompaction(`overflow: ${command.summary}`, kept.id);
  }

  private navigate(command: Extract<LedgerCommand, { kind: "navigate" }>): void {
    if (this.entries.length === 0) return;
    const from = this.leafId;
    const target = command.toRoot ? null : this.entries[command.pick % this.entries.length].id;
    this.leafId = target;
    this.steps.push({ kind: "move", leafId: target });
    if (command.summary !== undefined) {
      this.append({
        type: "branch_summary",
        fromId: from ?? "root",
        summary: command.summary,
        details: { readFiles: [], modifiedFiles: [] },
      });
    }
  }

  private contextEdit(command: Extract<LedgerCommand, { kind: "contextEdit" }>): void {
    // Edits never orphan a tool call: assistants that call tools are left alone, tool results are only replaced.
    const candidates = this.branch().filter((entry) => {
      if (entry.type === "custom_message") return true;
      if (entry.type !== "message") return false;
      const message = entry.message;
      if (message.role === "user" || message.role === "toolResult") return true;
      return message.role === "assistant" && !message.content.some((block) => block.type === "toolCall");
    });
    if (candidates.length === 0) return;
    const target = candidates[command.pick % candidates.length];
    const role = target.type === "message" ? target.message.role : "custom";
    const omit = command.omit && role !== "toolResult";
    const replacement = omit
      ? null
      : {
          content:
            role === "user" || role === "custom" ? command.text : [{ type: "text" as const, text: command.text }],
        };
    this.append({ type: "context_edit", targetId: target.id, replacement });
  }

  /**
   * The model calls `context_compact` (maybe beside another tool); at the step's end our fold summary is
   * appended. The range starts after a visible entry strictly before the request (or at the root), runs
   * through the step's last result, and keeps the tool results of the last assistant at or before the target.
   */
  private fold(command: Extract<LedgerCommand, { kind: "fold" }>): void {
    const before = this.branch();
    const targets = visibleFoldTargets(before);
    const target = command.toRoot || targets.length === 0 ? undefined : targets[command.pick % targets.length];
    let keepToolResultsOf: string | undefined;
    if (target) {
      const upTo = before.slice(0, before.indexOf(target) + 1);
      keepToolResultsOf = upTo.reverse().find((e) => e.type === "message" && e.message.role === "assistant")?.id;
    }
    const targetName = target?.id ?? "root";
    const { assistant, results } = this.assistantStep(command.sibling ? [command.sibling] : [], {
      compact: {
        target: targetName,
        summary: command.summary,
        ...(command.backup ? { backupCheckpoint: command.backup } : {}),
      },
    });
    const throughId = results[results.length - 1].id;
    const details: FoldDetails = {
      v: 1,
      range: { afterId: target?.id ?? null, throughId, ...(keepToolResultsOf ? { keepToolResultsOf } : {}) },
      requestEntryId: assistant.id,
      target: targetName,
      ...(command.backup ? { backupCheckpoint: command.backup } : {}),
    };
    this.clock += 1;
    this.append({
      type: "custom_message",
      customType: LedgerType.fold,
      content: command.summary,
      display: true,
      details,
    });
    if (command.backup) this.append({ type: "label", targetId: throughId, label: command.backup });
  }

  /**
   * Revoke one act on the branch (a fold or a compaction not revoked yet), whole or, with `newest`, its newer part:
   * a fold's range then ends earlier, a compaction keeps from an earlier entry. Boundaries sit before a user or
   * assistant message, so a tool call and its results are never split.
   */
  restore(command: Extract<LedgerCommand, { kind: "restore" }>): void {
    const path = this.branch();
    const acts = restorableActs(path);
    if (acts.length === 0) return;
    const act = acts[command.pick % acts.length];
    const kind =
      act.type === "compaction"
        ? "compaction"
        : act.type === "custom_message" && act.customType === LedgerType.preserve
          ? "preserve"
          : act.type === "custom_message" && act.customType === LedgerType.digest
            ? "digest"
            : "fold";
    const data: RestoreData = { v: 1, targetId: act.id, act: kind };
    if (command.newest) {
      const restores = naiveRestores(path);
      const at = path.indexOf(act);
      const isCut = (e: SessionEntry) =>
        e.type === "message" && (e.message.role === "user" || e.message.role === "assistant");
      if (act.type === "compaction") {
        // Between the previous compaction and the current start of the kept range.
        const kept = path.findIndex((e) => e.id === (restores.keptFromOf.get(act.id) ?? act.firstKeptEntryId));
        const end = kept >= 0 && kept < at ? kept : at;
        let previous = -1;
        for (let i = 0; i < at; i++) if (path[i].type === "compaction" && !isCheckpointMarker(path[i])) previous = i;
        const cuts = path.slice(previous + 1, end).filter(isCut);
        if (cuts.length) data.firstKeptEntryId = cuts[command.cut % cuts.length].id;
      } else {
        const range = (act as Extract<SessionEntry, { type: "custom_message" }>).details as RangeDetails;
        const after = range.range.afterId === null ? -1 : path.findIndex((e) => e.id === range.range.afterId);
        const through = path.findIndex((e) => e.id === (restores.throughOf.get(act.id) ?? range.range.throughId));
        // The newest part starts at a cut; the older part (at least one entry) stays hidden.
        const cuts = path.slice(after + 2, through + 1).filter(isCut);
        if (cuts.length) data.throughId = path[path.indexOf(cuts[command.cut % cuts.length]) - 1].id;
      }
    }
    this.append({ type: "custom", customType: LedgerType.restore, data });
  }

  /** A pin fact: pin an entry of the branch (any kind), unpin a pinned one, or name a stray id. */
  pin(command: Extract<LedgerCommand, { kind: "pin" }>): void {
    const path = this.branch();
    if (path.length === 0) return;
    let targetId: string;
    let pinned = true;
    if (command.unpin) {
      const pins = naivePins(path);
      const ids = [...pins.keys()].filter((id) => pins.get(id));
      if (!ids.length) return;
      targetId = ids[command.pick % ids.length];
      pinned = false;
    } else targetId = command.stray && command.pick % 7 === 0 ? command.stray : path[command.pick % path.length].id;
    const data: PinData = { v: 1, targetId, pinned, ...(command.note && pinned ? { note: command.note } : {}) };
    this.append({ type: "custom", customType: LedgerType.pin, data });
  }

  /** A preserve marker compaction, as a manual `/compact` under preserve leaves it (see the command). */
  marker(command: Extract<LedgerCommand, { kind: "marker" }>): void {
    const path = this.branch();
    if (path.length === 0 || path[path.length - 1].type === "compaction") return;
    let firstKeptEntryId = naiveViewStart(path);
    if (command.stale) {
      const last = path.filter((e) => e.type === "compaction").at(-1);
      firstKeptEntryId =
        last?.type !== "compaction"
          ? path[0].id
          : path.some((e) => e.id === last.firstKeptEntryId)
            ? last.firstKeptEntryId
            : last.id;
    }
    const projection = buildSessionProjection(path, this.leafId);
    const system = getCurrentSystemMessage(projection.messages as Parameters<typeof getCurrentSystemMessage>[0]);
    this.append({
      type: "compaction",
      summary: command.summary,
      firstKeptEntryId,
      tokensBefore: Math.ceil(JSON.stringify(projection.messages).length / 4),
      details: { v: 1, strategy: command.strategy ?? "preserve", checkpoint: command.checkpoint },
      fromHook: true,
      ...(system ? { systemMessage: { ...system, timestamp: this.clock } } : {}),
    });
  }
}

/** Fold commands into a ledger (deterministic: same seed and commands, same ledger). */
export function buildLedger(
  seed: LedgerSeed,
  commands: readonly LedgerCommand[],
  options: { preamble?: boolean } = {},
): GeneratedLedger {
  const folder = new LedgerFolder(seed, options.preamble ?? true);
  for (const command of commands) folder.apply(command);
  return folder.result();
}

/** Seeds: id prefix, start time (2025) and session id. */
export const ledgerSeedArb: fc.Arbitrary<LedgerSeed> = fc.record({
  idPrefix: fc.integer({ min: 0, max: 0xfff }).map((n) => n.toString(16).padStart(3, "0")),
  start: fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2025, 11, 31) }),
  sessionId: fc.uuid({ version: 7 }),
});

/** Arbitrary valid ledgers. Shrinking removes and simplifies commands, so counterexamples stay readable. */
export function ledgerArb(options: LedgerOptions = {}): fc.Arbitrary<GeneratedLedger> {
  const facts = options.folds !== false;
  const weights = {
    ...options.weights,
    ...(facts ? {} : { fold: 0, restore: 0, marker: 0, toolCheckpoint: 0, pin: 0 }),
  };
  // Without our facts, a compaction is Pi's own: no strategy details, no recap; and no `<keepContext>` pins.
  const command = facts
    ? commandArb(weights)
    : commandArb(weights).map((c) =>
        c.kind === "compaction"
          ? { ...c, strategy: undefined, recap: undefined }
          : c.kind === "user"
            ? { ...c, keep: false, text: c.text.replaceAll("<keepContext>", "<keep-context>") }
            : c,
      );
  return fc
    .record({
      seed: ledgerSeedArb,
      commands: fc.array(command, {
        minLength: options.minCommands ?? 0,
        maxLength: options.maxCommands ?? 80,
        size: options.size ?? "medium",
      }),
    })
    .map(({ seed, commands }) => buildLedger(seed, commands, { preamble: options.preamble }));
}

/** The session file Pi would write for this ledger: the header line, then one line per entry. */
export function toJsonl(ledger: Pick<GeneratedLedger, "header" | "entries">): string {
  let out = `${JSON.stringify(ledger.header)}\n`;
  for (const entry of ledger.entries) out += `${JSON.stringify(entry)}\n`;
  return out;
}
