// Common ground of rows that write facts into a simulated ledger (Pi native, our strategies): the branch as
// the row's session file would hold it, facts appended with deterministic ids, and the model view rebuilt
// from the branch after each fact and extended entry by entry in between.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../log/entries.ts";
import { visibleMessages } from "../row.ts";
import { View } from "../view.ts";

export class SimulatedLedger {
  readonly branch: SessionEntry[] = [];
  readonly view = new View();
  private facts = 0;
  private relinkNext = false;

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
    return entry;
  }

  /** Rebuild the view from a projection's messages. */
  reset(messages: readonly AgentMessage[]): void {
    this.view.replaceAll(messages.filter((m) => !(m.role === "bashExecution" && (m as { excludeFromContext?: boolean }).excludeFromContext)));
  }
}
