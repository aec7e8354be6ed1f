// Where a marker compaction keeps from (preserve's and digest's): the start of the model view as the ledger sees it.
import { viewCut } from "../../projection/project.ts";
import type { LedgerSessionView } from "../contract.ts";

/**
 * Where the model view starts: the first entry the view's cut keeps (restores included), or the first entry. A
 * checkpoint marker keeps from there, so Pi's own view of the session loses nothing the model saw before.
 */
export function contextStartId(session: LedgerSessionView): string {
  const live = session.live;
  const cut = viewCut(live.state, (id) => live.indexOf(id));
  return live.entries[cut.head < 0 ? 0 : cut.from].id;
}
