// The catalog the log's fact reader is built with, and every record name this package writes. Each strategy
// declares its records in its own folder (`<name>/records.ts`, a leaf module); this module lists them, so the
// strategies, the host and the lab share one reader without importing the registry. It imports only those leaves
// and the log floor, so any module may import it without a cycle. Pure.
import { CoreRecord, type CustomMessageEntry, type RangeDetails, type SessionEntry } from "../log/entries.ts";
import { type FactCatalog, LedgerFacts } from "../log/facts.ts";
import { checkpointFacts, RECAP_RECORD } from "./checkpoint/records.ts";
import { DIGEST_RECORD, digestFacts, isDigestEntry } from "./digest/records.ts";
import { FOLD_RECORD, type FoldDetails, foldFacts, isFoldEntry } from "./fold/records.ts";
import { nativeFacts } from "./native/records.ts";
import { NATIVE_COMPACTION_RECORD, PLANNER_FAILURE_RECORD } from "./planned/records.ts";
import { isPreserveEntry, PRESERVE_RECORD, preserveFacts } from "./preserve/records.ts";

export type { FoldDetails };
export { isDigestEntry, isFoldEntry, isPreserveEntry };

/** Every customType and record name this package writes: the log's own, then each strategy's. */
export const LedgerType = {
  ...CoreRecord,
  fold: FOLD_RECORD,
  recap: RECAP_RECORD,
  preserve: PRESERVE_RECORD,
  digest: DIGEST_RECORD,
  plannerFailure: PLANNER_FAILURE_RECORD,
  nativeCompaction: NATIVE_COMPACTION_RECORD,
} as const;

/**
 * What every strategy declares about its records, in registry order (a test checks each registered strategy's
 * declaration against this list, so the two cannot drift).
 */
export const FACT_CATALOG: FactCatalog = [foldFacts, checkpointFacts, preserveFacts, digestFacts, nativeFacts];

/** The one fact reader over every strategy's declarations: the host, the lab and the strategies' planners use it. */
export const LEDGER_FACTS = new LedgerFacts(FACT_CATALOG);

/**
 * A tool checkpoint (preserve's tool summary, a digest, or any record declared anchored): its keepDialogue range hides
 * older technical state, the message is shown right after the range's end, and later ranges never hide it.
 */
export function isToolCheckpoint(entry: SessionEntry): entry is CustomMessageEntry<RangeDetails> {
  const fact = LEDGER_FACTS.read(entry);
  return fact.kind === "range" && fact.declaration.placement === "anchored";
}

/** Any message carrying a range rule. */
export function isRangeEntry(entry: SessionEntry): entry is CustomMessageEntry<RangeDetails> {
  return LEDGER_FACTS.read(entry).kind === "range";
}

/** A compaction written only so Pi's manual `/compact` ends as a success (see `MarkerDeclaration`). */
export function isCheckpointMarker(entry: SessionEntry): boolean {
  return LEDGER_FACTS.isMarker(entry);
}
