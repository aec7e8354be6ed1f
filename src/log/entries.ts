// Entry model for the session ledger: Pi's entry types, our record names and the guards over them.
// Pure: type-only imports from Pi, no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type {
  CompactionEntry,
  ContextEditEntry,
  CustomMessageEntry,
  FileEntry,
  SessionEntry,
  SessionHeader,
  SessionMessageEntry,
} from "@earendil-works/pi-coding-agent";

export type {
  AgentMessage,
  CompactionEntry,
  ContextEditEntry,
  CustomMessageEntry,
  FileEntry,
  SessionEntry,
  SessionHeader,
  SessionMessageEntry,
};

/** Every customType this package writes starts with this prefix. */
export const LEDGER_PREFIX = "context-ledger/";

/**
 * The record names the log and the projection read themselves: notices, restores and pins, which no strategy owns.
 * Each strategy declares its own records in its folder; `src/strategies/catalog.ts` lists them all as `LedgerType`.
 */
export const CoreRecord = {
  /** custom_message: a short, model-visible notice (cancelled fold, dropped request, budget). */
  notice: "context-ledger/notice",
  /** custom (state, never sent to the model): revokes what one range act or compaction hid. */
  restore: "context-ledger/restore",
  /** custom (state, never sent to the model): pins one entry (or unpins it); the newest fact for a target decides. */
  pin: "context-ledger/pin",
} as const;

/**
 * A fold's hiding rule. It has constant size whatever the number of entries it covers:
 * entries strictly after `afterId` up to and including `throughId` on the active path are hidden,
 * except the tool results answering `keepToolResultsOf`'s calls.
 */
export interface HiddenRange {
  /** Exclusive start; null means the start of the current context ("root"). */
  afterId: string | null;
  /** Inclusive end. */
  throughId: string;
  /** Assistant entry whose tool results stay visible so its calls are not orphaned. */
  keepToolResultsOf?: string;
  /**
   * Hide only technical state (tool calls, tool results, unfinished assistant turns, custom messages) and keep the
   * dialogue: user messages and completed assistant answers.
   */
  keepDialogue?: boolean;
}

/** Common part of the `details` of a compaction entry written by this package. */
export interface LedgerCompactionDetails {
  v: 1;
  /** The strategy that wrote it, by its registry name (the log floor does not know the registry). */
  strategy: string;
  [key: string]: unknown;
}

export function isMessageEntry(entry: SessionEntry): entry is SessionMessageEntry {
  return entry.type === "message";
}

/** `details` every range-bearing message shares, whichever strategy wrote it. */
export interface RangeDetails {
  v: 1;
  range: HiddenRange;
}

/**
 * The kind of act a restore revokes: `compaction`, or the act name a strategy declared for its range record (see
 * `RangeFactDeclaration` in `facts.ts`).
 */
export type ActKind = string;

/**
 * `data` of a `context-ledger/restore` custom entry. Constant size: it names the act, and for a partial restore the
 * one boundary that moves. Without a boundary the act's hiding is revoked whole.
 */
export interface RestoreData {
  v: 1;
  /** The act's own entry: a range message, or a compaction. */
  targetId: string;
  act: ActKind;
  /** Partial restore of a range: the range now ends at this entry (the newer part is back). */
  throughId?: string;
  /** Partial restore of a compaction: its kept range now starts at this earlier entry. */
  firstKeptEntryId?: string;
}

/**
 * A restore fact (`context-ledger/restore`) of the known version. Whether its act kind is one anything declares is
 * the fact reader's question (`LedgerFacts.read`).
 */
export function isRestoreEntry(
  entry: SessionEntry,
): entry is Extract<SessionEntry, { type: "custom" }> & { data: RestoreData } {
  if (entry.type !== "custom" || entry.customType !== CoreRecord.restore) return false;
  const d = entry.data as Partial<RestoreData> | undefined;
  return d?.v === 1 && typeof d.targetId === "string" && typeof d.act === "string";
}

/**
 * `data` of a `context-ledger/pin` custom entry: the entry it pins (or unpins) and the user's note. Constant size;
 * the newest fact for a target decides, and pinning either side of a tool call pins the pair.
 */
export interface PinData {
  v: 1;
  targetId: string;
  pinned: boolean;
  note?: string;
}

/** A pin fact (`context-ledger/pin`). A damaged one (wrong version or field types) is no pin. */
export function isPinEntry(
  entry: SessionEntry,
): entry is Extract<SessionEntry, { type: "custom" }> & { data: PinData } {
  if (entry.type !== "custom" || entry.customType !== CoreRecord.pin) return false;
  const d = entry.data as Partial<PinData> | undefined;
  return (
    d?.v === 1 &&
    typeof d.targetId === "string" &&
    typeof d.pinned === "boolean" &&
    (d.note === undefined || typeof d.note === "string")
  );
}

export function isLedgerCompaction(entry: SessionEntry): entry is CompactionEntry<LedgerCompactionDetails> {
  if (entry.type !== "compaction") return false;
  const details = entry.details as Partial<LedgerCompactionDetails> | undefined;
  return details?.v === 1 && typeof details.strategy === "string";
}

/** True for entries this package appended (custom messages, custom state, compactions). */
export function isLedgerEntry(entry: SessionEntry): boolean {
  if (entry.type === "custom_message" || entry.type === "custom") return entry.customType.startsWith(LEDGER_PREFIX);
  return isLedgerCompaction(entry);
}

/** Concatenated text of a message's text blocks (string content is returned as is). */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  let out = "";
  for (const block of content) {
    if (block && typeof block === "object" && (block as { type?: unknown }).type === "text") {
      const text = (block as { text?: unknown }).text;
      if (typeof text === "string") out += (out ? "\n" : "") + text;
    }
  }
  return out;
}

/**
 * A text field as a string, whatever a damaged or crafted file stored in it (`summary` as an object, a number, null):
 * a string is returned as is, a missing value as "", anything else as its JSON, so it stays searchable and never
 * reaches string code as a non-string.
 */
export function textField(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return "";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
