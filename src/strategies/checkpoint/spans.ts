// Turns the projected entries a compaction removes into a span: verbatim user and assistant prose, one-line
// tool-call signatures, and stubs for everything whose body stays only in the session. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { LedgerType } from "../catalog.ts";
import type { ProjectedEntry } from "../../projection/project.ts";
import {
  imageCount,
  roleOf,
  textBlocks,
  toolCallsOf,
  type Outcome,
  type ToolCallView,
} from "../shared/conversation.ts";
import { displayName, formatShellExecution, formatSignature, jsonPrefix } from "../shared/signatures.ts";

/**
 * One unit of a span. `head` is a generated marker line; `body` lines are copied byte for byte from the
 * source message. The cap removes or shortens whole items, and user items last.
 */
export interface SpanItem {
  kind: "user" | "other";
  head: string;
  body: string[];
}

/** The compacted range of one checkpoint, stored uncapped in that checkpoint's details. */
export interface CheckpointSpan {
  /** 1-based position among the checkpoint spans since the last opaque base. */
  n: number;
  /** First and last entry ids the span covers (null when it covers no entries). */
  from: string | null;
  through: string | null;
  items: SpanItem[];
}

/** Looks up the outcome label of a tool call made in the given projected entry. */
export type OutcomeLookup = (call: ToolCallView, entryIndex: number) => Outcome;

type Loose = Record<string, unknown>;

/** Split text into lines exactly as the fidelity check does (on `\n` only). */
export function linesOf(text: string): string[] {
  return text.split("\n");
}

function imageNote(content: unknown): string {
  const images = imageCount(content);
  return images === 0 ? "" : `, ${images} image${images === 1 ? "" : "s"} omitted`;
}

function assistantItems(
  message: AgentMessage,
  id: string,
  index: number,
  outcome: OutcomeLookup,
  cwd: string,
): SpanItem[] {
  const m = message as unknown as Loose;
  const items: SpanItem[] = [];
  const prose = textBlocks(m.content).join("\n");
  if (prose.trim() !== "") items.push({ kind: "other", head: `[assistant ${id}]`, body: linesOf(prose) });
  else if (m.stopReason === "error" || m.stopReason === "aborted") {
    const reason = typeof m.errorMessage === "string" && m.errorMessage ? ` ${jsonPrefix(m.errorMessage)}` : "";
    items.push({ kind: "other", head: `[assistant ${id}] stopped: ${m.stopReason}${reason}`, body: [] });
  }
  for (const call of toolCallsOf(message)) {
    items.push({ kind: "other", head: `[call ${id}] ${formatSignature(call, outcome(call, index), cwd)}`, body: [] });
  }
  return items;
}

/** Items one message contributes to a span (none for tool results, thinking-only turns and system state). */
export function messageItems(
  message: AgentMessage,
  id: string,
  index: number,
  outcome: OutcomeLookup,
  cwd: string,
): SpanItem[] {
  const m = message as unknown as Loose;
  switch (roleOf(message)) {
    case "user":
      return [
        { kind: "user", head: `[user ${id}${imageNote(m.content)}]`, body: linesOf(textBlocks(m.content).join("\n")) },
      ];
    case "assistant":
      return assistantItems(message, id, index, outcome, cwd);
    case "custom": {
      // Our own recap is regenerated around every checkpoint; copying it would make recaps pile up.
      if (m.customType === LedgerType.recap) return [];
      // A fold summary is the model's own account of the work it folded away: kept like assistant prose.
      if (m.customType === LedgerType.fold)
        return [{ kind: "other", head: `[fold ${id}]`, body: linesOf(textBlocks(m.content).join("\n")) }];
      return [
        {
          kind: "other",
          head: `[custom ${id}] type=${jsonPrefix(String(m.customType ?? ""))} (content removed)`,
          body: [],
        },
      ];
    }
    case "bashExecution": {
      if (m.excludeFromContext === true) return [];
      const body = formatShellExecution(String(m.command ?? ""), m.exitCode, m.cancelled === true, cwd);
      return [{ kind: "other", head: `[shell ${id}] ${body} (output removed)`, body: [] }];
    }
    case "branchSummary":
      return [{ kind: "other", head: `[branch-summary ${id}]`, body: linesOf(String(m.summary ?? "")) }];
    case "toolResult":
    case "system":
    case "compactionSummary":
      return [];
    default:
      return [
        {
          kind: "other",
          head: `[message ${id}] role=${displayName(roleOf(message) || "?")} (content removed)`,
          body: [],
        },
      ];
  }
}

/** Build the span for projected entries `[from, to)`. */
export function buildSpan(
  entries: readonly ProjectedEntry[],
  from: number,
  to: number,
  n: number,
  outcome: OutcomeLookup,
  cwd: string,
): CheckpointSpan {
  const items: SpanItem[] = [];
  let first: string | null = null;
  let last: string | null = null;
  for (let i = from; i < to; i++) {
    const entry = entries[i];
    if (entry.sourceEntry.type === "compaction") continue;
    first ??= entry.sourceEntry.id;
    last = entry.sourceEntry.id;
    for (const message of entry.messages) items.push(...messageItems(message, entry.sourceEntry.id, i, outcome, cwd));
  }
  return { n, from: first, through: last, items };
}
