// The records the fold strategy writes, and what each means to the view: declared here, read by the log's fact
// reader. A leaf module (it imports only the log floor), so any module may import it without a cycle. Pure.
import type { CustomMessageEntry, HiddenRange, SessionEntry } from "../../log/entries.ts";
import type { StrategyFacts } from "../../log/facts.ts";

/** custom_message: a fold summary carrying a range rule. */
export const FOLD_RECORD = "context-ledger/fold";

/** `details` of a `context-ledger/fold` custom message. */
export interface FoldDetails {
  v: 1;
  range: HiddenRange;
  /** Assistant entry that called `context_compact`. */
  requestEntryId: string;
  /** The target as the model wrote it (checkpoint name or entry id). */
  target: string;
  /** Label attached to the leaf before the fold, when the model asked for one. */
  backupCheckpoint?: string;
}

/** A fold summary (`context-ledger/fold`) of the known version. */
export function isFoldEntry(entry: SessionEntry): entry is CustomMessageEntry<FoldDetails> {
  if (entry.type !== "custom_message" || entry.customType !== FOLD_RECORD) return false;
  const d = entry.details as { v?: unknown; range?: { throughId?: unknown } } | undefined;
  return d?.v === 1 && typeof d.range?.throughId === "string";
}

/** A fold hides its range in place: the summary stays where the model asked for it. */
export const foldFacts: StrategyFacts = {
  ranges: [
    {
      customType: FOLD_RECORD,
      act: "fold",
      placement: "inPlace",
      title: () => "fold",
      names: (details, isId) => {
        // As the file stored them: a damaged name is still compared as it is, never coerced.
        const { backupCheckpoint, target } = details as Partial<FoldDetails>;
        const names: string[] = [];
        if (backupCheckpoint) names.push(backupCheckpoint);
        if (target !== "root" && !isId(target as string)) names.push(target as string);
        return names;
      },
      hides: "messages",
      leaving: "the fold summary",
    },
  ],
};
