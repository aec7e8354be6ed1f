// The records the preserve strategy writes, and what each means to the view: declared here, read by the log's fact
// reader. A leaf module (it imports only the log floor). Pure.
import type { CustomMessageEntry, RangeDetails, SessionEntry } from "../../log/entries.ts";
import type { StrategyFacts } from "../../log/facts.ts";

/** custom_message: a preserve tool checkpoint; its range hides technical state and keeps the dialogue. */
export const PRESERVE_RECORD = "context-ledger/preserve";

/** A preserve checkpoint (`context-ledger/preserve`) of the known version. */
export function isPreserveEntry(entry: SessionEntry): entry is CustomMessageEntry<RangeDetails> {
  if (entry.type !== "custom_message" || entry.customType !== PRESERVE_RECORD) return false;
  const d = entry.details as { v?: unknown; range?: { throughId?: unknown } } | undefined;
  return d?.v === 1 && typeof d.range?.throughId === "string";
}

/** "tool summary #2", or "tool summary" when the number is missing. */
const numbered = (word: string) => (details: Record<string, unknown>) =>
  typeof details.checkpoint === "number" ? `${word} #${details.checkpoint}` : word;

/** `#n` resolves to checkpoint number n. */
const byNumber = (details: Record<string, unknown>) =>
  typeof details.checkpoint === "number" ? [`#${details.checkpoint}`] : [];

/**
 * A tool checkpoint is shown right after its range's end and is permanent context; its compaction marker (a manual
 * `/compact`) cuts nothing.
 */
export const preserveFacts: StrategyFacts = {
  ranges: [
    {
      customType: PRESERVE_RECORD,
      act: "preserve",
      placement: "anchored",
      title: numbered("tool summary"),
      names: byNumber,
      hides: "tool calls and results",
      leaving: "the tool summary",
    },
  ],
  markers: [
    {
      strategy: "preserve",
      reports: (details) =>
        typeof details.checkpoint === "number" ? `tool summary #${details.checkpoint}` : "the tool summary it reports",
    },
  ],
};
