// Cards for compactions that did not go as planned: the bounded failure record a strategy leaves when Pi compacts
// natively instead, and a card for that native compaction. Both are custom entries: shown in the transcript,
// never sent to the model.
import type { ExtensionAPI, SessionCompactEvent } from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import { textField } from "../log/entries.ts";
import { LedgerType } from "../strategies/catalog.ts";
import { estimateTextTokens } from "../projection/tokens.ts";
import {
  failureCardLines,
  nativeCardLines,
  type NativeCompactionDetails,
  type PlannerFailureDetails,
} from "../strategies/shared/fallback.ts";

export interface FallbackCards {
  /** Persist a failure record; the next native compaction of this session gets its own card. */
  recordFailure(details: PlannerFailureDetails): void;
  /** `session_compact`: Pi stored a compaction; a native one after a failure gets its card. */
  compacted(event: SessionCompactEvent): void;
  /** A session switch or a failed compaction: no card is owed. */
  reset(): void;
}

export function registerFallbackCards(pi: ExtensionAPI): FallbackCards {
  let pending: PlannerFailureDetails | undefined;

  pi.registerEntryRenderer<PlannerFailureDetails>(LedgerType.plannerFailure, (entry, { expanded }, theme) => {
    if (entry.data?.v !== 1) return undefined;
    const [head, ...rest] = failureCardLines(entry.data, expanded);
    return new Text([theme.fg("warning", `≡ ${head}`), ...rest.map((l) => theme.fg("dim", l))].join("\n"), 1, 0);
  });
  pi.registerEntryRenderer<NativeCompactionDetails>(LedgerType.nativeCompaction, (entry, _options, theme) => {
    if (entry.data?.v !== 1) return undefined;
    return new Text(theme.fg("muted", `≡ ${nativeCardLines(entry.data).join("\n")}`), 1, 0);
  });

  return {
    recordFailure(details) {
      pi.appendEntry(LedgerType.plannerFailure, details);
      pending = details;
    },
    compacted(event) {
      const failed = pending;
      pending = undefined;
      if (!failed || event.fromExtension) return;
      const entry = event.compactionEntry;
      const card: NativeCompactionDetails = {
        v: 1,
        trigger: event.reason,
        compactionEntryId: entry.id,
        tokensBefore: entry.tokensBefore,
        summaryTokens: estimateTextTokens(textField(entry.summary)),
        after: failed.strategy,
      };
      pi.appendEntry(LedgerType.nativeCompaction, card);
    },
    reset() {
      pending = undefined;
    },
  };
}
