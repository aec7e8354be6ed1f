// The records the digest strategy writes, and what each means to the view: declared here, read by the log's fact
// reader. A leaf module (it imports only the log floor). Pure.
import type { CustomMessageEntry, RangeDetails, SessionEntry } from "../../log/entries.ts";
import type { StrategyFacts } from "../../log/facts.ts";

/** custom_message: a digest of older tool work (deterministic); placed and protected like a tool checkpoint. */
export const DIGEST_RECORD = "context-ledger/digest";

/** A digest (`context-ledger/digest`) of the known version. */
export function isDigestEntry(entry: SessionEntry): entry is CustomMessageEntry<RangeDetails> {
  if (entry.type !== "custom_message" || entry.customType !== DIGEST_RECORD) return false;
  const d = entry.details as { v?: unknown; range?: { throughId?: unknown } } | undefined;
  return d?.v === 1 && typeof d.range?.throughId === "string";
}

/** A digest is shown right after its range's end and is permanent context; its `/compact` marker cuts nothing. */
export const digestFacts: StrategyFacts = {
  ranges: [
    {
      customType: DIGEST_RECORD,
      act: "digest",
      placement: "anchored",
      title: (details) => (typeof details.checkpoint === "number" ? `digest #${details.checkpoint}` : "digest"),
      names: (details) => (typeof details.checkpoint === "number" ? [`#${details.checkpoint}`] : []),
      hides: "tool calls and results",
      leaving: "the digest",
    },
  ],
  markers: [
    {
      strategy: "digest",
      reports: (details) =>
        typeof details.checkpoint === "number" ? `digest #${details.checkpoint}` : "the digest it reports",
    },
  ],
};
