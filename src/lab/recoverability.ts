// Recoverability: of the probes a row's view lost, how many a literal search over the row's ledger finds
// in the entry they came from. The ledger keeps every entry, so a loss in the view need not be a loss.
import type { SessionEntry } from "../log/entries.ts";
import type { Probe } from "./probes.ts";
import { viewText } from "./probes.ts";
import { visibleMessages } from "./row.ts";

/** A literal search over a ledger: ids of the entries whose text contains `needle`. */
export type LedgerSearch = (needle: string) => readonly string[];

/** Build a literal search over the entries of a ledger (their full text, hidden or not). */
export function literalLedgerSearch(ledger: readonly SessionEntry[]): LedgerSearch {
  const texts = ledger.map((entry) => ({ id: entry.id, text: viewText(visibleMessages(entry)) }));
  return (needle) => texts.filter((t) => t.text.includes(needle)).map((t) => t.id);
}

/** Share of `dropped` probes the search finds, attributed to the entry the probe was taken from. */
export function recoverability(dropped: readonly Probe[], search: LedgerSearch): { found: number; dropped: number; share: number } {
  let found = 0;
  for (const probe of dropped) if (search(probe.text).includes(probe.entryId)) found++;
  return { found, dropped: dropped.length, share: dropped.length ? found / dropped.length : 1 };
}
