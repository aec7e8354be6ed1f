// The model view: the messages a provider request carries, computed from the branch alone.
// Mirrors Pi's compaction-aware projection, then applies our fold rules. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntry, SessionEntry } from "../log/entries.ts";
import { FoldMask, withoutReasoning, type PathLookup } from "./fold-rules.ts";
import { foldBranch, type LedgerState } from "./ledger-state.ts";

/** One branch entry and what it contributes to the model view (nothing, for state entries and hidden ones). */
export interface ProjectedEntry {
  sourceEntry: SessionEntry;
  messages: AgentMessage[];
  /** True when a fold rule hid this entry's contribution. */
  folded?: boolean;
}

export interface BranchProjection {
  entries: ProjectedEntry[];
  messages: AgentMessage[];
  thinkingLevel: string;
  model: { provider: string; modelId: string } | null;
}

/** Messages one entry contributes before edits, exactly as Pi builds them. */
export function entryMessages(entry: SessionEntry): AgentMessage[] {
  switch (entry.type) {
    case "message": {
      const message = entry.message as AgentMessage & { content?: unknown };
      // Hand-edited or old files may carry null content; Pi substitutes an empty value, and so do we.
      if (message.role === "system" && message.content == null) return [{ ...message, content: "" } as AgentMessage];
      if ((message.role === "user" || message.role === "assistant" || message.role === "toolResult") && message.content == null)
        return [{ ...message, content: [] } as AgentMessage];
      return [message];
    }
    case "custom_message":
      return [
        {
          role: "custom",
          customType: entry.customType,
          content: entry.content ?? [],
          display: entry.display,
          details: entry.details,
          timestamp: new Date(entry.timestamp).getTime(),
        } as AgentMessage,
      ];
    case "branch_summary":
      return entry.summary
        ? [{ role: "branchSummary", summary: entry.summary, fromId: entry.fromId, timestamp: new Date(entry.timestamp).getTime() } as AgentMessage]
        : [];
    case "compaction": {
      const summary = {
        role: "compactionSummary",
        summary: entry.summary,
        tokensBefore: entry.tokensBefore,
        timestamp: new Date(entry.timestamp).getTime(),
      } as AgentMessage;
      return entry.systemMessage ? [entry.systemMessage as AgentMessage, summary] : [summary];
    }
    default:
      return [];
  }
}

/** Apply a context edit (Pi's append-only omission/replacement) to an entry's messages. */
function applyEdit(messages: AgentMessage[], edit: ContextEditEntry | undefined): AgentMessage[] {
  if (!edit) return messages;
  const replacement = edit.replacement;
  if (replacement === null) return [];
  return messages.map((message) => {
    const role = message.role;
    if (role !== "user" && role !== "assistant" && role !== "toolResult" && role !== "custom") return message;
    const content =
      (role === "assistant" || role === "toolResult") && typeof replacement.content === "string"
        ? [{ type: "text", text: replacement.content }]
        : replacement.content;
    return { ...message, content } as AgentMessage;
  });
}

/**
 * A compaction written only so Pi's manual `/compact` ends as a success: the preserve checkpoint it reports is a
 * separate anchored message, and the model view keeps the context it had. See {@link markerMessages}.
 */
export function isCheckpointMarker(entry: SessionEntry): boolean {
  if (entry.type !== "compaction") return false;
  const details = entry.details as { v?: unknown; strategy?: unknown } | undefined;
  return details?.v === 1 && details.strategy === "preserve";
}

/**
 * What a checkpoint marker contributes at the head of the view: its system snapshot, then the summary of the newest
 * real compaction before it (the one it replaced as "latest" in Pi's eyes), or no summary when there is none. The
 * request is then the same, byte for byte, as before the marker.
 */
export function markerMessages(marker: Extract<SessionEntry, { type: "compaction" }>, path: readonly SessionEntry[]): AgentMessage[] {
  const head = entryMessages(marker).filter((m) => m.role === "system");
  const restated = restatedSummary(path, path.indexOf(marker));
  return restated ? [...head, restated] : head;
}

/** The summary message of the newest compaction before `index` that is not a checkpoint marker. */
export function restatedSummary(path: readonly SessionEntry[], index: number): AgentMessage | undefined {
  for (let i = index - 1; i >= 0; i--) {
    const entry = path[i];
    if (entry.type === "compaction" && !isCheckpointMarker(entry)) return entryMessages(entry).find((m) => m.role === "compactionSummary");
  }
  return undefined;
}

/** Entries the latest compaction leaves in context, as Pi selects them. */
export function contextEntries(path: readonly SessionEntry[]): SessionEntry[] {
  let compactionIdx = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i].type === "compaction") {
      compactionIdx = i;
      break;
    }
  }
  if (compactionIdx < 0) return path.slice();
  const compaction = path[compactionIdx] as Extract<SessionEntry, { type: "compaction" }>;
  const selected: SessionEntry[] = [compaction];
  let kept = false;
  for (let i = 0; i < compactionIdx; i++) {
    const entry = path[i];
    if (entry.id === compaction.firstKeptEntryId) kept = true;
    if (kept && !(entry.type === "message" && entry.message.role === "system")) selected.push(entry);
  }
  for (let i = compactionIdx + 1; i < path.length; i++) selected.push(path[i]);
  return selected;
}

function sessionSettings(path: readonly SessionEntry[]): Pick<BranchProjection, "thinkingLevel" | "model"> {
  let thinkingLevel = "off";
  let model: BranchProjection["model"] = null;
  for (const entry of path) {
    if (entry.type === "thinking_level_change") thinkingLevel = entry.thinkingLevel;
    else if (entry.type === "model_change") model = { provider: entry.provider, modelId: entry.modelId };
    else if (entry.type === "message" && entry.message.role === "assistant")
      model = { provider: entry.message.provider, modelId: entry.message.model };
  }
  return { thinkingLevel, model };
}

/** A path lookup over a plain array, for one-shot projections. */
export function lookupOf(path: readonly SessionEntry[]): PathLookup {
  const position = new Map<string, number>();
  path.forEach((entry, i) => position.set(entry.id, i));
  return { indexOf: (id) => position.get(id) ?? -1, get: (id) => path[position.get(id) ?? -1] };
}

/**
 * Project a branch (root to leaf) into the model view. With no fold rules on the branch this equals Pi's
 * `buildSessionProjection` for the same leaf; with rules, folded entries contribute nothing.
 */
export function projectBranch(path: readonly SessionEntry[], state: LedgerState = foldBranch(path)): BranchProjection {
  const selected = contextEntries(path);
  const edits = new Map<string, ContextEditEntry>();
  for (const entry of selected) if (entry.type === "context_edit") edits.set(entry.targetId, entry);
  // Positions are only needed when some rule may hide something.
  const lookup = state.folds.length ? lookupOf(path) : undefined;
  const mask = lookup ? new FoldMask(state.folds, lookup) : undefined;
  const entries = selected.map((sourceEntry, index): ProjectedEntry => {
    // Only the newest compaction (always first) contributes; an older one kept in range stays silent, as in Pi.
    if (sourceEntry.type === "compaction" && index > 0) return { sourceEntry, messages: [] };
    if (sourceEntry.type === "compaction" && isCheckpointMarker(sourceEntry)) return { sourceEntry, messages: markerMessages(sourceEntry, path) };
    const at = lookup ? lookup.indexOf(sourceEntry.id) : -1;
    if (mask && !mask.empty && mask.hides(sourceEntry, at)) return { sourceEntry, messages: [], folded: true };
    const messages = applyEdit(entryMessages(sourceEntry), edits.get(sourceEntry.id));
    return { sourceEntry, messages: mask?.dropsReasoning(sourceEntry, at) ? messages.map(withoutReasoning) : messages };
  });
  const ordered = placeAnchored(entries, state);
  return { entries: ordered, messages: ordered.flatMap((e) => e.messages), ...sessionSettings(path) };
}

/**
 * Move anchored range messages (preserve checkpoints) to just after the entry their range ends at, so the view
 * reads `[…, checkpoint k, raw batch]` and everything up to checkpoint k stays byte-identical when k+1 arrives.
 * An anchor whose end is not in the selected entries stays where it is.
 */
function placeAnchored(entries: ProjectedEntry[], state: LedgerState): ProjectedEntry[] {
  const anchors = new Map<string, string>();
  for (const rule of state.folds) if (rule.anchored) anchors.set(rule.entryId, rule.throughId);
  if (!anchors.size) return entries;
  const present = new Set(entries.map((e) => e.sourceEntry.id));
  const after = new Map<string, ProjectedEntry[]>();
  const out: ProjectedEntry[] = [];
  for (const e of entries) {
    const end = anchors.get(e.sourceEntry.id);
    if (end !== undefined && present.has(end) && end !== e.sourceEntry.id) {
      const list = after.get(end);
      if (list) list.push(e);
      else after.set(end, [e]);
    }
  }
  const moved = new Set([...after.values()].flat());
  const emit = (e: ProjectedEntry) => {
    out.push(e);
    for (const anchored of after.get(e.sourceEntry.id) ?? []) emit(anchored);
  };
  for (const e of entries) if (!moved.has(e)) emit(e);
  return out;
}
