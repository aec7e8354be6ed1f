// The closed set of facts this package writes into Pi's session, each with version 1, by record name (the catalog
// in `catalog.ts` says what they mean to the view). A reader is declared per record name, so a new record type
// without a reader does not compile; anything else carrying our prefix, or a version this code does not know, is
// reported as unreadable instead of being guessed at. Pure.
import {
  type CompactionEntry,
  type CustomMessageEntry,
  isLedgerCompaction,
  isPinEntry,
  isRestoreEntry,
  LEDGER_PREFIX,
  type LedgerCompactionDetails,
  type PinData,
  type RestoreData,
  type SessionEntry,
} from "../log/entries.ts";
import type { BudgetNoticeDetails } from "../projection/budget.ts";
import { isFoldEntry, LEDGER_FACTS, LedgerType } from "./catalog.ts";
import { isRecapDetails, type RecapDetails } from "./checkpoint/recap.ts";
import type { DigestDetails } from "./digest/plan.ts";
import type { FoldDetails } from "./fold/records.ts";
import type { NativeCompactionDetails, PlannerFailureDetails } from "./shared/fallback.ts";
import type { PreserveDetails } from "./preserve/checkpoint.ts";

type CustomEntry<T> = Extract<SessionEntry, { type: "custom" }> & { data: T };

/** A fold that was not applied, told to the model. */
export interface FoldNoticeDetails {
  v: 1;
  kind: "foldCancelled";
  reason: string;
}

/** Every fact this package writes, by record name, details typed (the view reads `LedgerFact`, in `src/log`). */
export type LedgerRecord =
  | { record: "fold"; entry: CustomMessageEntry<FoldDetails> }
  | { record: "notice"; entry: CustomMessageEntry<FoldNoticeDetails | BudgetNoticeDetails> }
  | { record: "recap"; entry: CustomMessageEntry<RecapDetails> }
  | { record: "preserve"; entry: CustomMessageEntry<PreserveDetails> }
  | { record: "digest"; entry: CustomMessageEntry<DigestDetails> }
  | { record: "plannerFailure"; entry: CustomEntry<PlannerFailureDetails> }
  | { record: "nativeCompaction"; entry: CustomEntry<NativeCompactionDetails> }
  | { record: "restore"; entry: CustomEntry<RestoreData> }
  | { record: "pin"; entry: CustomEntry<PinData> }
  | { record: "compaction"; entry: CompactionEntry<LedgerCompactionDetails> };

export type RecordName = LedgerRecord["record"];

/** Reading of one entry: ours and understood, ours but unreadable (with a bounded reason), or not ours. */
export type FactReading = { ok: true; fact: LedgerRecord } | { ok: false; reason: string } | undefined;

type Reader = (entry: SessionEntry) => LedgerRecord | undefined;

const object = (value: unknown): Record<string, unknown> | undefined =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
const versioned = (value: unknown): Record<string, unknown> | undefined =>
  object(value)?.v === 1 ? object(value) : undefined;
const message = (entry: SessionEntry) => (entry.type === "custom_message" ? entry : undefined);
const custom = (entry: SessionEntry) => (entry.type === "custom" ? entry : undefined);
const toolSummary = (details: Record<string, unknown> | undefined, strategy: string) =>
  details?.strategy === strategy &&
  typeof details.checkpoint === "number" &&
  typeof object(details.range)?.throughId === "string" &&
  object(details.tokens) !== undefined;

/** One reader per record name; `satisfies` keeps the table closed over `LedgerType`. */
const READERS = {
  fold: (e) => (isFoldEntry(e) ? { record: "fold", entry: e } : undefined),
  notice: (e) => {
    const m = message(e);
    const d = versioned(m?.details);
    if (!m || !d) return undefined;
    if (d.kind === "foldCancelled" && typeof d.reason === "string")
      return { record: "notice", entry: m as CustomMessageEntry<FoldNoticeDetails> };
    if (d.kind === "budget" && typeof d.usage === "number" && typeof d.threshold === "number")
      return { record: "notice", entry: m as CustomMessageEntry<BudgetNoticeDetails> };
    return undefined;
  },
  recap: (e) => {
    const m = message(e);
    return m && isRecapDetails(m.details)
      ? { record: "recap", entry: m as CustomMessageEntry<RecapDetails> }
      : undefined;
  },
  preserve: (e) => {
    const m = message(e);
    return m && toolSummary(versioned(m.details), "preserve")
      ? { record: "preserve", entry: m as CustomMessageEntry<PreserveDetails> }
      : undefined;
  },
  digest: (e) => {
    const m = message(e);
    return m && toolSummary(versioned(m.details), "digest") && object(versioned(m.details)?.steps)
      ? { record: "digest", entry: m as CustomMessageEntry<DigestDetails> }
      : undefined;
  },
  plannerFailure: (e) => {
    const c = custom(e);
    const d = versioned(c?.data);
    return c && d && typeof d.strategy === "string" && typeof d.category === "string"
      ? { record: "plannerFailure", entry: c as CustomEntry<PlannerFailureDetails> }
      : undefined;
  },
  nativeCompaction: (e) => {
    const c = custom(e);
    const d = versioned(c?.data);
    return c && d && typeof d.compactionEntryId === "string"
      ? { record: "nativeCompaction", entry: c as CustomEntry<NativeCompactionDetails> }
      : undefined;
  },
  restore: (e) =>
    isRestoreEntry(e) && LEDGER_FACTS.read(e).kind === "restore" ? { record: "restore", entry: e } : undefined,
  pin: (e) => (isPinEntry(e) ? { record: "pin", entry: e } : undefined),
} satisfies Record<keyof typeof LedgerType, Reader>;

const BY_TYPE = new Map<string, Reader>(
  Object.entries(LedgerType).map(([name, customType]) => [customType, READERS[name as keyof typeof LedgerType]]),
);

/**
 * Read one entry as a fact of this package. Entries of Pi or other extensions are `undefined`; ours that this code
 * cannot read (another version, a record name it does not know, a damaged shape) are `{ ok: false }`.
 */
export function readFact(entry: SessionEntry): FactReading {
  if (entry.type === "compaction") {
    if (entry.details === undefined || !object(entry.details)?.strategy) return undefined; // Pi's own compaction
    return isLedgerCompaction(entry)
      ? { ok: true, fact: { record: "compaction", entry } }
      : { ok: false, reason: "compaction details of an unknown version" };
  }
  if (entry.type !== "custom_message" && entry.type !== "custom") return undefined;
  if (!entry.customType.startsWith(LEDGER_PREFIX)) return undefined;
  const reader = BY_TYPE.get(entry.customType);
  if (!reader)
    return {
      ok: false,
      reason: `unknown record ${entry.customType.slice(LEDGER_PREFIX.length, LEDGER_PREFIX.length + 40)}`,
    };
  const fact = reader(entry);
  return fact
    ? { ok: true, fact }
    : { ok: false, reason: `${entry.customType.slice(LEDGER_PREFIX.length)} of an unknown version or shape` };
}
