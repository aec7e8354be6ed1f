// Recoverability: of the probes a row's view lost, how many a search of the row's ledger finds in the entry
// they came from. The ledger keeps every entry, so a loss in the view need not be a loss.
import type { SessionEntry } from "../log/entries.ts";
import type { Probe } from "./probes.ts";
import { viewText } from "./probes.ts";
import { visibleMessages } from "./row.ts";

/** True when a search for the probe's text finds it, attributed to the probe's own source entry. */
export type ProbeSearch = (probe: Probe) => boolean;

/**
 * Literal search over a ledger, checked at the probe's source entry: an exact-text search attributes a hit
 * to that entry exactly when the entry, as the ledger holds it, still contains the text.
 */
export function literalLedgerSearch(ledger: readonly SessionEntry[]): ProbeSearch {
  const byId = new Map<string, SessionEntry>();
  for (const entry of ledger) byId.set(entry.id, entry);
  return (probe) => {
    const entry = byId.get(probe.entryId);
    return !!entry && viewText(visibleMessages(entry)).includes(probe.text);
  };
}

/** Share of `dropped` probes the search recovers with correct attribution. */
export function recoverability(dropped: readonly Probe[], search: ProbeSearch): { found: number; dropped: number; share: number } {
  let found = 0;
  for (const probe of dropped) if (search(probe)) found++;
  return { found, dropped: dropped.length, share: dropped.length ? found / dropped.length : 1 };
}
