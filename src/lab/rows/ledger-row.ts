// Common ground of rows that write facts into a simulated ledger (Pi native, our strategies): the branch as
// the row's session file would hold it, facts appended with deterministic ids, and the model view rebuilt
// from the branch after each fact and extended entry by entry in between.
import { deflateSync, inflateSync } from "node:zlib";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../log/entries.ts";
import { visibleMessages } from "../row.ts";
import { View } from "../view.ts";

export class SimulatedLedger {
  readonly branch: SessionEntry[] = [];
  readonly view = new View();
  private facts = 0;
  private relinkNext = false;
  private lastCompaction: SessionEntry | undefined;

  private readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  /** A source entry: kept on the branch (re-parented after one of our facts) and shown in the view. */
  appendSource(entry: SessionEntry): void {
    let stored = entry;
    if (this.relinkNext) {
      stored = { ...entry, parentId: this.leafId } as SessionEntry;
      this.relinkNext = false;
    }
    this.branch.push(stored);
    for (const m of visibleMessages(stored)) this.view.push(m);
  }

  get leafId(): string | null {
    return this.branch.length ? this.branch[this.branch.length - 1].id : null;
  }

  /** Append a fact of ours (compaction, fold) with a derived id, parented on the leaf. */
  appendFact(body: Record<string, unknown>): SessionEntry {
    const last = this.branch[this.branch.length - 1];
    const entry = { ...body, id: `${this.prefix}${(this.facts++).toString(36).padStart(4, "0")}`, parentId: this.leafId, timestamp: last?.timestamp ?? "1970-01-01T00:00:00.000Z" } as unknown as SessionEntry;
    this.branch.push(entry);
    this.relinkNext = true;
    if (entry.type === "compaction") {
      if (this.lastCompaction) packSummary(this.lastCompaction);
      this.lastCompaction = entry;
    }
    return entry;
  }

  /** Rebuild the view from a projection's messages. */
  reset(messages: readonly AgentMessage[]): void {
    this.view.replaceAll(messages.filter((m) => !(m.role === "bashExecution" && (m as { excludeFromContext?: boolean }).excludeFromContext)));
  }
}

/**
 * Keep a superseded compaction's summary and details deflated: Pi keeps the ledger on disk, the lab in memory, and
 * a long replay writes hundreds of compactions that only the newest is projected from. A planned compaction's
 * details hold a code per summary line, so they grow with the summary. Reading either property inflates it, so
 * any code that looks back still sees the same text and the same details, as if read back from the session file.
 */
function packSummary(entry: SessionEntry): void {
  const record = entry as unknown as { summary?: unknown; details?: unknown };
  if (typeof record.summary === "string" && record.summary.length >= PACK_MIN_CHARS) packProperty(record, "summary", record.summary, (text) => text);
  if (record.details === undefined) return;
  const details = JSON.stringify(record.details);
  // Pi writes details to the session file as JSON, so the round trip gives what a reader of that file sees.
  if (details === undefined || details.length < PACK_MIN_CHARS) return;
  packProperty(record, "details", details, (text) => JSON.parse(text) as unknown);
}

/** Below this, deflating saves too little to pay for the buffer and the getter. */
const PACK_MIN_CHARS = 4096;

function packProperty(record: object, key: string, text: string, decode: (text: string) => unknown): void {
  const packed = deflateSync(text);
  Object.defineProperty(record, key, { get: () => decode(inflateSync(packed).toString("utf8")), enumerable: true, configurable: true });
}
