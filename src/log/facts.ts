// Facts, read once: every branch entry becomes one value of a closed union the projection switches on. The log floor
// knows no strategy: what a strategy's record means to the view (a range, where its message sits, what a restore calls
// it) is declared by the strategy that writes it and handed in as a catalog when a reader is built. Pure.
import {
  type CompactionEntry,
  CoreRecord,
  type CustomMessageEntry,
  type HiddenRange,
  isLedgerCompaction,
  type PinData,
  type RestoreData,
  type SessionEntry,
  type SessionMessageEntry,
} from "./entries.ts";

/** What a strategy's range record (a custom message carrying a {@link HiddenRange}) means to the view. */
export interface RangeFactDeclaration {
  /** The record name it is stored under (`customType`); persisted, so it never changes. */
  customType: string;
  /** The act's name in a restore fact (`RestoreData.act`); persisted too. */
  act: string;
  /**
   * "anchored": the message is shown right after its range's end, and no later range that keeps the dialogue hides
   * it (it is permanent context). "inPlace": it is shown where it was appended.
   */
  placement: "anchored" | "inPlace";
  /** How people call one act: "fold", "tool summary #2". */
  title(details: Record<string, unknown>): string;
  /** Names besides its id that resolve to it (a checkpoint name, `#n`); `isId` tells an entry id from a name. */
  names(details: Record<string, unknown>, isId: (name: string) => boolean): string[];
  /** What its range hid, as a restore reports it coming back: "messages", "tool calls and results". */
  hides: string;
  /** Its own message as a restore reports it leaving the context: "the fold summary". */
  leaving: string;
}

/**
 * A compaction entry a strategy writes only so Pi's manual `/compact` ends as a success, while the checkpoint it
 * reports is a separate anchored message: it cuts nothing of its own and no restore can name it.
 */
export interface MarkerDeclaration {
  /** The `strategy` field of the compaction entries that are markers. */
  strategy: string;
  /** The checkpoint it reports, to point a refused restore at it: "tool summary #3", "the digest it reports". */
  reports(details: Record<string, unknown>): string;
}

/** What one strategy declares about the records it writes. */
export interface StrategyFacts {
  ranges?: readonly RangeFactDeclaration[];
  markers?: readonly MarkerDeclaration[];
  /** Custom messages that leave the view with the compaction their `details.compactionId` names (a recap). */
  companions?: readonly string[];
  /** Set by the strategy that stands for Pi's own compaction: the name such a compaction entry goes by. */
  piCompaction?: string;
}

/** The union of every strategy's declarations (see `src/strategies/facts.ts`). */
export type FactCatalog = readonly StrategyFacts[];

/** One branch entry as the ledger reads it. Everything that says nothing to the ledger state is `none`. */
export type LedgerFact =
  | { kind: "range"; entry: CustomMessageEntry; range: HiddenRange; declaration: RangeFactDeclaration }
  | {
      kind: "compaction";
      entry: CompactionEntry;
      /** Its strategy, or the catalog's name for Pi's own compaction. */
      strategy: string;
      /** Set for a checkpoint marker (see {@link MarkerDeclaration}). */
      marker?: MarkerDeclaration;
    }
  | { kind: "label"; entry: Extract<SessionEntry, { type: "label" }> }
  | { kind: "restore"; entry: SessionEntry; data: RestoreData }
  | { kind: "pin"; entry: SessionEntry; data: PinData }
  /** A user message whose text asks to keep it (`<keepContext>`): it pins itself. */
  | { kind: "keepContext"; entry: SessionMessageEntry }
  | { kind: "none"; entry: SessionEntry };

/** The act kind of a compaction in a restore fact; every other act kind is a declared range's. */
export const COMPACTION_ACT = "compaction";

/**
 * Reads entries as facts with the catalog it was built with. Persisted names keep their meaning, so two strategies
 * declaring the same record name or act is an error at construction, not a silent choice.
 */
export class LedgerFacts {
  private readonly ranges = new Map<string, RangeFactDeclaration>();
  private readonly acts = new Map<string, RangeFactDeclaration>();
  private readonly markers = new Map<string, MarkerDeclaration>();
  private readonly companions = new Set<string>();
  /** The name Pi's own compaction goes by (the strategy that stands for it). */
  readonly piCompaction: string;

  constructor(catalog: FactCatalog) {
    let pi: string | undefined;
    for (const part of catalog) {
      for (const range of part.ranges ?? []) {
        if (this.ranges.has(range.customType) || this.acts.has(range.act) || range.act === COMPACTION_ACT)
          throw new Error(`fact catalog: record ${range.customType} or act ${range.act} is declared twice`);
        this.ranges.set(range.customType, range);
        this.acts.set(range.act, range);
      }
      for (const marker of part.markers ?? []) this.markers.set(marker.strategy, marker);
      for (const type of part.companions ?? []) this.companions.add(type);
      if (part.piCompaction !== undefined) {
        if (pi !== undefined) throw new Error("fact catalog: two strategies stand for Pi's own compaction");
        pi = part.piCompaction;
      }
    }
    if (pi === undefined) throw new Error("fact catalog: no strategy stands for Pi's own compaction");
    this.piCompaction = pi;
  }

  /** The one reading of an entry. */
  read(entry: SessionEntry): LedgerFact {
    switch (entry.type) {
      case "custom_message": {
        const declaration = this.ranges.get(entry.customType);
        const details = entry.details as { v?: unknown; range?: Partial<HiddenRange> } | undefined;
        if (declaration && details?.v === 1 && typeof details.range?.throughId === "string")
          return { kind: "range", entry, range: details.range as HiddenRange, declaration };
        return { kind: "none", entry };
      }
      case "compaction": {
        const ours = isLedgerCompaction(entry);
        const strategy = ours ? entry.details!.strategy : this.piCompaction;
        const marker = ours ? this.markers.get(strategy) : undefined;
        return marker ? { kind: "compaction", entry, strategy, marker } : { kind: "compaction", entry, strategy };
      }
      case "label":
        return { kind: "label", entry };
      case "custom":
        if (entry.customType === CoreRecord.restore) {
          const d = entry.data as Partial<RestoreData> | undefined;
          if (d?.v === 1 && typeof d.targetId === "string" && typeof d.act === "string" && this.isAct(d.act))
            return { kind: "restore", entry, data: d as RestoreData };
        } else if (entry.customType === CoreRecord.pin) {
          const d = entry.data as Partial<PinData> | undefined;
          if (
            d?.v === 1 &&
            typeof d.targetId === "string" &&
            typeof d.pinned === "boolean" &&
            (d.note === undefined || typeof d.note === "string")
          )
            return { kind: "pin", entry, data: d as PinData };
        }
        return { kind: "none", entry };
      case "message":
        return keepsContext(entry) ? { kind: "keepContext", entry } : { kind: "none", entry };
      default:
        return { kind: "none", entry };
    }
  }

  /** True for an act kind a restore fact may name: a compaction, or a declared range's act. */
  isAct(act: string): boolean {
    return act === COMPACTION_ACT || this.acts.has(act);
  }

  /** The declaration of the range act `act`, if one declares it. */
  rangeAct(act: string): RangeFactDeclaration | undefined {
    return this.acts.get(act);
  }

  /** True for a compaction entry that is a checkpoint marker (see {@link MarkerDeclaration}). */
  isMarker(entry: SessionEntry): boolean {
    return this.markerOf(entry) !== undefined;
  }

  /** The marker declaration of a compaction entry that is one. */
  markerOf(entry: SessionEntry): MarkerDeclaration | undefined {
    return isLedgerCompaction(entry) ? this.markers.get(entry.details!.strategy) : undefined;
  }

  /** True when `customType` is a declared range record (a draft of one at a boundary already changes the view). */
  declaresRange(customType: string | undefined): boolean {
    if (customType === undefined) return false;
    return this.ranges.has(customType);
  }

  /**
   * True for an anchored record's message, read or not: permanent context a later keep-dialogue range covers but
   * never hides.
   */
  isAnchored(entry: SessionEntry): boolean {
    return entry.type === "custom_message" && this.ranges.get(entry.customType)?.placement === "anchored";
  }

  /** The compaction a companion message (a recap) leaves the view with, if it is one. */
  companionOf(entry: SessionEntry): string | undefined {
    if (entry.type !== "custom_message" || !this.companions.has(entry.customType)) return undefined;
    const compactionId = (entry.details as { compactionId?: unknown } | undefined)?.compactionId;
    return typeof compactionId === "string" ? compactionId : undefined;
  }
}

const OPEN = "<keepContext>";
const CLOSE = "</keepContext>";

/** The text blocks of a user message, joined; other content (images) carries no tags. */
function userText(entry: SessionEntry): string | undefined {
  if (entry.type !== "message" || entry.message.role !== "user") return undefined;
  const content = entry.message.content as unknown;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  let text = "";
  for (const block of content as { type?: unknown; text?: unknown }[])
    if (block?.type === "text" && typeof block.text === "string") text += `${block.text}\n`;
  return text;
}

/**
 * True when a user message (only the user's own text: tool output, files, assistant text and custom messages never
 * count) holds a `<keepContext>` span: a line that is only `<keepContext>`, or a line that is one whole
 * `<keepContext>…</keepContext>`. Such a message pins itself under every strategy. Linear in the text.
 */
export function keepsContext(entry: SessionEntry): boolean {
  const text = userText(entry);
  if (text === undefined || !text.includes(OPEN)) return false;
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed === OPEN) return true;
    if (trimmed.length > OPEN.length + CLOSE.length - 1 && trimmed.startsWith(OPEN) && trimmed.endsWith(CLOSE))
      return true;
  }
  return false;
}
