// Per-session runtime state of the extension. Everything here is rebuilt from the branch on session_start
// and /tree; nothing in it is a source of truth, only a cache of the ledger.
import type { ExtensionContext, SessionEntry } from "@earendil-works/pi-coding-agent";
import { LiveLedger } from "../projection/live-ledger.ts";
import { calibrate, UNCALIBRATED, type Calibration } from "../projection/tokens.ts";
import type { LedgerSettings } from "./settings.ts";

type SessionView = Pick<ExtensionContext["sessionManager"], "getLeafId" | "getEntry">;

export class LedgerSession {
  live = new LiveLedger();
  calibration: Calibration = UNCALIBRATED;
  /** Estimated prompt tokens of the last request we saw, for calibration against the next usage report. */
  private lastRequestEstimate = 0;

  settings: LedgerSettings;

  constructor(settings: LedgerSettings) {
    this.settings = settings;
  }

  /** Forget everything and fold the branch again (session start, resume, fork). */
  rebuild(sessionManager: SessionView): void {
    this.live = new LiveLedger();
    this.calibration = UNCALIBRATED;
    this.sync(sessionManager);
  }

  /** Bring the live ledger to the current leaf; costs O(entries since the last sync). */
  sync(sessionManager: SessionView): void {
    this.live.sync(sessionManager.getLeafId(), (id) => sessionManager.getEntry(id) as SessionEntry | undefined);
  }

  /** Remember the estimate of a request about to be sent (O(folds), not O(session)). */
  noteRequest(): void {
    this.lastRequestEstimate = this.live.estimateViewTokens();
  }

  /** Calibrate the estimator with a provider usage report for the last request. */
  noteUsage(usage: { input?: number; cacheRead?: number; cacheWrite?: number } | undefined): void {
    if (!usage) return;
    const reported = (usage.input ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0);
    this.calibration = calibrate(this.calibration, this.lastRequestEstimate, reported);
  }
}
