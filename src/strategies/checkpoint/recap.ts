// The re-orientation recap that follows a checkpoint: task-relevant recovery guidance placed last on the
// first request after compaction. Pure text from checkpoint facts; no I/O.
import { LedgerType } from "../catalog.ts";

/** customType of the recap message. */
export const RECAP_TYPE = LedgerType.recap;

/** `details` of a recap message: which compaction it belongs to and what the card shows. */
export interface RecapDetails {
  v: 1;
  /** The compaction entry this recap re-orients after. */
  compactionId: string;
  tokensBefore: number;
  tokensAfter?: number;
  spans: number;
  startupReads: string[];
  trimmedSpans: number;
  removedItems: number;
  shortenedItems: number;
}

/** Facts the recap mentions. */
export type RecapFacts = Omit<RecapDetails, "v">;

/** True for a recap details object this version understands. */
export function isRecapDetails(value: unknown): value is RecapDetails {
  const details = value as Partial<RecapDetails> | undefined;
  return details?.v === 1 && typeof details.compactionId === "string";
}

/** The recap text. Deterministic: the same facts give the same bytes. */
export function renderRecap(facts: RecapFacts): string {
  const lines = [
    `[context-ledger recap after checkpoint ${facts.compactionId}]`,
    "Older turns were compacted into the verbatim checkpoint at the start of this context; the messages after it are the recent conversation, unchanged. This note is orientation, not a request: answer the latest user message as you would have, and start no work it does not ask for. When that work continues the task:",
    "- Recover only inputs the task still needs. The retained startup reads and the verbatim tail are evidence already in view; do not reread documents wholesale or rediscover instructions.",
    "- For the present state of the project, reread files and rerun cheap commands rather than recovering old output. Use context_lookup for what was observed earlier and would be slow or costly to redo.",
    "- Before changing files, inspect git state (git status, git diff) to see what is already done, and do not repeat completed writes.",
    "- Before replacing an existing file with write, read its current contents unless they are already in view; never rebuild unchanged parts from memory. Small exact edits and new files need no extra reread.",
    "- Treat reasoning and conclusions recalled from history as hypotheses. When one matters and is contradicted or unverified, check it against recorded output or the current state, or say it is unverified.",
  ];
  if (facts.startupReads.length > 0) lines.push(`Retained startup reads: ${facts.startupReads.join(", ")}.`);
  if (facts.trimmedSpans > 0) {
    lines.push(
      `The size cap trimmed ${facts.trimmedSpans} span${facts.trimmedSpans === 1 ? "" : "s"} (marked trimmed="true"); the originals are in the session.`,
    );
  }
  return lines.join("\n");
}
