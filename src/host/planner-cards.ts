// Cards for compactions that did not go as planned: the bounded failure record a strategy leaves when Pi compacts
// natively instead, and a card for that native compaction. Both are custom entries: shown in the transcript,
// never sent to the model.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import { LedgerType } from "../log/entries.ts";
import { estimateTextTokens } from "../projection/tokens.ts";
import { failureCardLines, nativeCardLines, type NativeCompactionDetails, type PlannerFailureDetails } from "../strategies/planned/report.ts";

export interface PlannerCards {
  /** Persist a failure record; the next native compaction of this session gets its own card. */
  recordFailure(details: PlannerFailureDetails): void;
}

export function registerPlannerCards(pi: ExtensionAPI): PlannerCards {
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

  pi.on("session_compact", (event) => {
    const failed = pending;
    pending = undefined;
    if (!failed || event.fromExtension) return;
    const entry = event.compactionEntry;
    const card: NativeCompactionDetails = {
      v: 1,
      trigger: event.reason,
      compactionEntryId: entry.id,
      tokensBefore: entry.tokensBefore,
      summaryTokens: estimateTextTokens(entry.summary),
      after: failed.strategy,
    };
    pi.appendEntry(LedgerType.nativeCompaction, card);
  });
  pi.on("session_compact_failed", () => {
    pending = undefined;
  });
  pi.on("session_start", () => {
    pending = undefined;
  });

  return {
    recordFailure(details) {
      pi.appendEntry(LedgerType.plannerFailure, details);
      pending = details;
    },
  };
}
