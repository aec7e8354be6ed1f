// Narrow, tolerant views over Pi's message shapes (legacy sessions carry odd values), plus tool-call and
// tool-result pairing over projected entries. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntry, SessionEntry } from "../../log/entries.ts";
import type { ProjectedEntry } from "../../projection/project.ts";

/** A tool call block, as the assistant wrote it. */
export interface ToolCallView {
  id: string;
  name: string;
  arguments: unknown;
}

/** A tool result, as far as checkpoints care. */
export interface ToolResultView {
  toolCallId: string;
  toolName: string;
  isError: boolean;
  content: unknown;
  details: unknown;
  nestedCalls: unknown;
}

type Loose = Record<string, unknown>;

/** Role of a message, or "" for malformed input. */
export function roleOf(message: AgentMessage): string {
  const role = (message as unknown as Loose).role;
  return typeof role === "string" ? role : "";
}

/** Tool call blocks of an assistant message, in order. */
export function toolCallsOf(message: AgentMessage): ToolCallView[] {
  const m = message as unknown as Loose;
  if (m.role !== "assistant" || !Array.isArray(m.content)) return [];
  const calls: ToolCallView[] = [];
  for (const block of m.content as Loose[]) {
    if (block?.type !== "toolCall") continue;
    calls.push({ id: String(block.id ?? ""), name: String(block.name ?? ""), arguments: block.arguments });
  }
  return calls;
}

/** The result view of a toolResult message, or undefined for other roles. */
export function toolResultOf(message: AgentMessage): ToolResultView | undefined {
  const m = message as unknown as Loose;
  if (m.role !== "toolResult") return undefined;
  return {
    toolCallId: String(m.toolCallId ?? ""),
    toolName: String(m.toolName ?? ""),
    isError: m.isError === true,
    content: m.content,
    details: m.details,
    nestedCalls: m.nestedCalls,
  };
}

/** Text blocks of a content value, each as one string (string content is one block). */
export function textBlocks(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const block of content as Loose[]) {
    if (block?.type === "text" && typeof block.text === "string") out.push(block.text);
  }
  return out;
}

/** True when content is a non-empty list of text blocks only (no images or other blocks). */
export function isTextOnly(content: unknown): boolean {
  if (typeof content === "string") return true;
  if (!Array.isArray(content) || content.length === 0) return false;
  return (content as Loose[]).every((block) => block?.type === "text" && typeof block.text === "string");
}

/** Number of image blocks in a content value. */
export function imageCount(content: unknown): number {
  if (!Array.isArray(content)) return 0;
  return (content as Loose[]).filter((block) => block?.type === "image").length;
}

/** The latest context edit per target on a branch (later edits win, as in Pi). */
export function latestEdits(branch: readonly SessionEntry[]): Map<string, ContextEditEntry> {
  const edits = new Map<string, ContextEditEntry>();
  for (const entry of branch) if (entry.type === "context_edit") edits.set(entry.targetId, entry);
  return edits;
}

/** An arguments value as a plain object, or undefined. */
export function argsObject(args: unknown): Loose | undefined {
  return args && typeof args === "object" && !Array.isArray(args) ? (args as Loose) : undefined;
}

/** The path argument of a file tool call, if it has a string one. */
export function pathArgument(args: unknown): string | undefined {
  const object = argsObject(args);
  if (!object) return undefined;
  for (const key of PATH_KEYS) {
    const value = object[key];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}

/** Argument names that carry a file path in Pi's and common third-party file tools. */
export const PATH_KEYS = ["path", "file_path", "filePath"] as const;

/** Outcome label of a tool call: the tool's own status, not a claim that the work succeeded. */
export type Outcome = "ok" | "error" | "unknown";

/** One assistant tool call located on the projection, with its result if one is visible. */
export interface PairedCall {
  call: ToolCallView;
  /** Index into the projected entries of the assistant entry. */
  at: number;
  entryId: string;
  result?: { at: number; entryId: string; view: ToolResultView };
  /**
   * True when the pairing cannot be trusted: the call id occurs more than once, more than one result answers
   * it, a result for it came before the call, or the result names another tool. Such a call is labelled
   * `unknown` and never counts as evidence.
   */
  ambiguous: boolean;
}

/** A result's tool name agrees with its call's. Legacy results without a name are taken at their id. */
function sameTool(call: ToolCallView, result: ToolResultView): boolean {
  return result.toolName === "" || result.toolName === call.name;
}

/**
 * Pair tool calls with their results within a range of projected entries. A result pairs with the first
 * open call of the same id that precedes it; every doubtful pairing is marked ambiguous rather than guessed.
 */
export function pairCalls(entries: readonly ProjectedEntry[], from = 0, to = entries.length): PairedCall[] {
  const calls: PairedCall[] = [];
  const byId = new Map<string, PairedCall[]>();
  const resultCount = new Map<string, number>();
  const doubtful = new Set<string>();
  for (let i = from; i < to; i++) {
    for (const message of entries[i].messages) {
      for (const call of toolCallsOf(message)) {
        const paired: PairedCall = { call, at: i, entryId: entries[i].sourceEntry.id, ambiguous: false };
        calls.push(paired);
        const list = byId.get(call.id) ?? [];
        list.push(paired);
        byId.set(call.id, list);
      }
      const result = toolResultOf(message);
      if (!result) continue;
      resultCount.set(result.toolCallId, (resultCount.get(result.toolCallId) ?? 0) + 1);
      const open = byId.get(result.toolCallId)?.find((c) => !c.result);
      if (!open) {
        // A result with no call before it: whatever call with this id comes later cannot be told apart from it.
        doubtful.add(result.toolCallId);
        continue;
      }
      open.result = { at: i, entryId: entries[i].sourceEntry.id, view: result };
      if (!sameTool(open.call, result)) doubtful.add(result.toolCallId);
    }
  }
  for (const [id, list] of byId) {
    if (list.length > 1 || (resultCount.get(id) ?? 0) > 1 || doubtful.has(id))
      for (const paired of list) paired.ambiguous = true;
  }
  return calls;
}

/**
 * The raw branch as projected entries, one per branch entry at the same index (messages as stored, nothing
 * for other entry types), for pairing outside the model view.
 */
export function rawEntries(branch: readonly SessionEntry[]): ProjectedEntry[] {
  return branch.map((entry) => ({
    sourceEntry: entry,
    messages: entry.type === "message" ? [entry.message as AgentMessage] : [],
  }));
}

/**
 * Tool-call ids whose pairing is ambiguous anywhere on the branch (see `pairCalls`). A span, the tail or the
 * startup interval alone may hold only one use of a reused id, so each judges its calls against this set: a call
 * that is `unknown` in one place is no evidence in another.
 */
export function ambiguousCallIds(branch: readonly SessionEntry[]): Set<string> {
  const ids = new Set<string>();
  for (const paired of pairCalls(rawEntries(branch))) if (paired.ambiguous) ids.add(paired.call.id);
  return ids;
}

/** Outcome of a paired call: `unknown` without a result or when the pairing is ambiguous. */
export function outcomeOf(paired: PairedCall): Outcome {
  if (!paired.result || paired.ambiguous) return "unknown";
  return paired.result.view.isError ? "error" : "ok";
}
