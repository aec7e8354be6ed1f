// The records the checkpoint strategy writes, and what each means to the view: declared here, read by the log's
// fact reader. A leaf module (it imports only the log floor). Pure.
import type { StrategyFacts } from "../../log/facts.ts";

/** custom_message: the re-orientation recap after a checkpoint compaction. */
export const RECAP_RECORD = "context-ledger/recap";

/** A recap leaves the view with the compaction it follows (`details.compactionId`) when a restore revokes it. */
export const checkpointFacts: StrategyFacts = { companions: [RECAP_RECORD] };
