// Replays a generated ledger through a real Pi SessionManager, one public append/branch call per step.
// Pi assigns its own ids and timestamps, so references (parents, targets, fold ranges) are remapped.
import type { SessionEntry, SessionManager } from "@earendil-works/pi-coding-agent";
import type { RangeDetails, RestoreData } from "../../src/log/entries.ts";
import type { FoldDetails } from "../../src/strategies/catalog.ts";
import { LedgerType } from "../../src/strategies/catalog.ts";
import type { GeneratedLedger, LedgerStep } from "./ledger.ts";

/** Maps generated ids to the ids Pi gave the replayed entries. */
export type IdMap = Map<string, string>;

function mapped(ids: IdMap, id: string): string {
  const to = ids.get(id);
  if (to === undefined) throw new Error(`replay: ${id} has not been replayed yet`);
  return to;
}

function remapFold(details: FoldDetails, ids: IdMap): FoldDetails {
  const { range } = details;
  return {
    ...details,
    range: {
      afterId: range.afterId === null ? null : mapped(ids, range.afterId),
      throughId: mapped(ids, range.throughId),
      ...(range.keepToolResultsOf ? { keepToolResultsOf: mapped(ids, range.keepToolResultsOf) } : {}),
    },
    requestEntryId: mapped(ids, details.requestEntryId),
    target: range.afterId === null ? details.target : mapped(ids, range.afterId),
  };
}

function remapCheckpoint(details: RangeDetails, ids: IdMap): RangeDetails {
  const { range } = details;
  return {
    ...details,
    range: {
      ...range,
      afterId: range.afterId === null ? null : mapped(ids, range.afterId),
      throughId: mapped(ids, range.throughId),
    },
  };
}

function remapRestore(data: RestoreData, ids: IdMap): RestoreData {
  return {
    ...data,
    targetId: mapped(ids, data.targetId),
    ...(data.throughId !== undefined ? { throughId: mapped(ids, data.throughId) } : {}),
    ...(data.firstKeptEntryId !== undefined ? { firstKeptEntryId: mapped(ids, data.firstKeptEntryId) } : {}),
  };
}

/** Append one generated entry through the matching SessionManager method; returns Pi's id for it. */
function appendEntry(sm: SessionManager, entry: SessionEntry, ids: IdMap): string {
  switch (entry.type) {
    case "message":
      return sm.appendMessage(entry.message as Parameters<SessionManager["appendMessage"]>[0]);
    case "thinking_level_change":
      return sm.appendThinkingLevelChange(entry.thinkingLevel);
    case "model_change":
      return sm.appendModelChange(entry.provider, entry.modelId);
    case "usage":
      return sm.appendUsage(entry.kind, entry.provider, entry.model, entry.usage, entry.note).id;
    case "compaction":
      return sm.appendCompaction(
        entry.summary,
        entry.firstKeptEntryId === entry.id ? null : mapped(ids, entry.firstKeptEntryId),
        entry.tokensBefore,
        entry.details,
        entry.fromHook,
      );
    case "branch_summary":
      // The leaf was already moved by the preceding step; Pi's call moves it again to the same parent.
      return sm.branchWithSummary(
        entry.parentId === null ? null : mapped(ids, entry.parentId),
        entry.summary,
        entry.details,
        entry.fromHook,
      );
    case "custom":
      return sm.appendCustomEntry(
        entry.customType,
        entry.customType === LedgerType.restore ? remapRestore(entry.data as RestoreData, ids) : entry.data,
      );
    case "custom_message": {
      const details =
        entry.customType === LedgerType.fold
          ? remapFold(entry.details as FoldDetails, ids)
          : entry.customType === LedgerType.preserve || entry.customType === LedgerType.digest
            ? remapCheckpoint(entry.details as RangeDetails, ids)
            : entry.customType === LedgerType.recap
              ? {
                  ...(entry.details as object),
                  compactionId: mapped(ids, (entry.details as { compactionId: string }).compactionId),
                }
              : entry.details;
      return sm.appendCustomMessageEntry(entry.customType, entry.content, entry.display, details);
    }
    case "context_edit":
      return sm.appendContextEdit(mapped(ids, entry.targetId), entry.replacement);
    case "label":
      return sm.appendLabelChange(mapped(ids, entry.targetId), entry.label);
    case "session_info":
      return sm.appendSessionInfo(entry.name ?? "");
    default: {
      const _exhaustive: never = entry;
      return _exhaustive;
    }
  }
}

/** Apply one step to the session manager, recording the id mapping of appended entries. */
export function replayStep(sm: SessionManager, step: LedgerStep, ids: IdMap): void {
  if (step.kind === "move") {
    if (step.leafId === null) sm.resetLeaf();
    else sm.branch(mapped(ids, step.leafId));
    return;
  }
  ids.set(step.entry.id, appendEntry(sm, step.entry, ids));
}

/**
 * Replay every step of `ledger` into `sm`, calling `after` once per step (for per-operation checks).
 * Returns the id mapping.
 */
export function replayLedger(
  sm: SessionManager,
  ledger: GeneratedLedger,
  after?: (step: LedgerStep, index: number) => void,
): IdMap {
  const ids: IdMap = new Map();
  ledger.steps.forEach((step, i) => {
    replayStep(sm, step, ids);
    after?.(step, i);
  });
  return ids;
}
