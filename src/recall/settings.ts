// Recall limits: the settings the host passes in and the bounds every search and lookup runs under.
// Pure: plain data and a normaliser, no I/O.

/**
 * Recall settings as the host reads them (`contextLedger.recall`). The first four fields match the lead's
 * settings loader; the rest are optional and fall back to {@link DEFAULT_RECALL_LIMITS}.
 */
export interface RecallSettings {
  /** Matching lines per `context_grep` page. */
  grepMaxResults: number;
  /** Characters per page of any recall tool. */
  grepMaxChars: number;
  /** Substantive search turns of one `context_lookup`. */
  lookupTurnBudget: number;
  /** `provider/model-id` for the lookup subagent; absent means the active model. */
  lookupModel?: string;
  /** `context_lookup` attempts allowed between resets (user message, bash run, non-recall tool result). */
  lookupAttempts?: number;
  /** Characters of one subagent tool result (the subagent's own context only). */
  lookupResultChars?: number;
  /** Characters of the lookup's final answer. */
  lookupAnswerChars?: number;
  /** Entries per `context_list_entries` page. */
  listPageSize?: number;
  /** The project scope (this cwd's earlier sessions); absent means on. Read from global settings only. */
  crossSession?: boolean;
}

/** Fully resolved bounds used by the pure search and lookup code. */
export interface RecallLimits {
  maxResults: number;
  maxChars: number;
  /** Largest `context` (lines either side) a grep may ask for. */
  maxContext: number;
  /** A displayed line longer than this is cut; `context_show_entry` gives it whole. */
  maxLineChars: number;
  listPageSize: number;
  /**
   * Work one grep call may spend before it returns a continuation cursor: characters times the regex
   * program size (one per character for exact text). Deterministic, unlike the host's time budget.
   */
  maxScanWork: number;
  turnBudget: number;
  lookupAttempts: number;
  lookupResultChars: number;
  lookupAnswerChars: number;
}

export const DEFAULT_RECALL_LIMITS: RecallLimits = {
  maxResults: 8,
  maxChars: 12_000,
  maxContext: 20,
  maxLineChars: 2_000,
  listPageSize: 50,
  maxScanWork: 2_000_000_000,
  turnBudget: 10,
  lookupAttempts: 1,
  lookupResultChars: 12_000,
  lookupAnswerChars: 8_000,
};

/** Default settings, in the host's shape. */
export const DEFAULT_RECALL_SETTINGS: RecallSettings = {
  grepMaxResults: DEFAULT_RECALL_LIMITS.maxResults,
  grepMaxChars: DEFAULT_RECALL_LIMITS.maxChars,
  lookupTurnBudget: DEFAULT_RECALL_LIMITS.turnBudget,
};

const positive = (value: number | undefined, fallback: number): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;

/** Resolve host settings into limits; invalid or missing numbers take the default. */
export function recallLimits(settings: Partial<RecallSettings> = {}): RecallLimits {
  const d = DEFAULT_RECALL_LIMITS;
  return {
    ...d,
    maxResults: positive(settings.grepMaxResults, d.maxResults),
    // Below a few hundred characters not even one result with its header fits.
    maxChars: Math.max(500, positive(settings.grepMaxChars, d.maxChars)),
    turnBudget: positive(settings.lookupTurnBudget, d.turnBudget),
    lookupAttempts: positive(settings.lookupAttempts, d.lookupAttempts),
    lookupResultChars: Math.max(500, positive(settings.lookupResultChars, d.lookupResultChars)),
    lookupAnswerChars: Math.max(500, positive(settings.lookupAnswerChars, d.lookupAnswerChars)),
    listPageSize: positive(settings.listPageSize, d.listPageSize),
  };
}
