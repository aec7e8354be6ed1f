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
 * Keep a superseded compaction's summary deflated: Pi keeps the ledger on disk, the lab in memory, and a long
 * replay writes hundreds of large summaries that only the newest compaction is projected from. Reading the
 * property inflates it, so any strategy code that looks back still sees the same text.
 */
function packSummary(entry: SessionEntry): void {
  const record = entry as unknown as { summary?: unknown };
  if (typeof record.summary !== "string" || record.summary.length < 4096) return;
  const packed = deflateSync(record.summary);
  Object.defineProperty(record, "summary", { get: () => inflateSync(packed).toString("utf8"), enumerable: true, configurable: true });
}
