// Per-session runtime state of the extension. Everything here is rebuilt from the branch on session_start
// and /tree; nothing in it is a source of truth, only a cache of the ledger.
import type { ExtensionContext, SessionEntry } from "@earendil-works/pi-coding-agent";
import { LiveLedger } from "../projection/live-ledger.ts";
import { calibrate, UNCALIBRATED, type Calibration } from "../projection/tokens.ts";
import type { ChartRun, PlannedFacts } from "../strategies/contract.ts";
import type { LedgerSettings } from "./settings.ts";
import { LEDGER_FACTS } from "../strategies/registry.ts";

/** Recognises one stored fact on the branch. */
type Stored = (entry: SessionEntry) => boolean;

/** A validated plan handed to Pi, waiting to see its facts on the branch. */
interface AwaitingStore {
  run: Pick<ChartRun, "send">;
  facts: PlannedFacts;
  left: Stored[];
}

/** One recogniser per fact a plan asks Pi to store (content equality: ids are Pi's to assign). */
function storedFacts(facts: PlannedFacts): Stored[] {
  const out: Stored[] = [];
  const message =
    (customType: string, content: unknown): Stored =>
    (e) =>
      e.type === "custom_message" && e.customType === customType && e.content === content;
  for (const draft of facts.entries ?? []) {
    if (draft.type === "custom_message") out.push(message(draft.customType, draft.content));
    else if (draft.type === "custom") out.push((e) => e.type === "custom" && e.customType === draft.customType);
    else if (draft.type === "context_edit") out.push((e) => e.type === "context_edit" && e.targetId === draft.targetId);
    else if (draft.type === "compaction") out.push((e) => e.type === "compaction" && e.summary === draft.summary);
  }
  for (const m of facts.messages ?? []) out.push(message(m.customType, m.content));
  const compaction = facts.compaction;
  if (compaction) out.push((e) => e.type === "compaction" && e.summary === compaction.summary);
  return out;
}

type SessionView = Pick<ExtensionContext["sessionManager"], "getLeafId" | "getEntry">;

export class LedgerSession {
  live = new LiveLedger(LEDGER_FACTS);
  calibration: Calibration = UNCALIBRATED;
  /** Estimated prompt tokens of the last request we saw, for calibration against the next usage report. */
  private lastRequestEstimate = 0;

  settings: LedgerSettings;
  private readonly awaiting: AwaitingStore[] = [];

  constructor(settings: LedgerSettings) {
    this.settings = settings;
  }

  /** Forget everything and fold the branch again (session start, resume, fork). */
  rebuild(sessionManager: SessionView): void {
    this.live = new LiveLedger(LEDGER_FACTS);
    this.calibration = UNCALIBRATED;
    this.sync(sessionManager);
  }

  /** Bring the live ledger to the current leaf; costs O(entries since the last sync). */
  sync(sessionManager: SessionView): void {
    const change = this.live.sync(
      sessionManager.getLeafId(),
      (id) => sessionManager.getEntry(id) as SessionEntry | undefined,
    );
    if (this.awaiting.length && change.appended.length) this.confirm(change.appended);
  }

  /**
   * The chart commits a plan only when Pi has stored it: its facts are recognised on the branch by a later sync
   * (the next event of any kind), or it is told they never arrived ({@link abandonStores}). A plan with nothing to
   * store (a declined compaction) commits at once.
   */
  expectStored(run: Pick<ChartRun, "send">, facts: PlannedFacts): void {
    const left = storedFacts(facts);
    if (!left.length) return run.send({ type: "pi.appended" });
    this.awaiting.push({ run, facts, left });
  }

  private confirm(appended: readonly SessionEntry[]): void {
    for (const entry of appended) {
      for (const wait of this.awaiting) {
        const i = wait.left.findIndex((stored) => stored(entry));
        if (i >= 0) wait.left.splice(i, 1);
      }
    }
    for (let i = this.awaiting.length - 1; i >= 0; i--) {
      if (this.awaiting[i].left.length) continue;
      this.awaiting[i].run.send({ type: "pi.appended" });
      this.awaiting.splice(i, 1);
    }
  }

  /** Pi will not store what it was handed (compaction failed, run settled, session replaced): those runs cancel. */
  abandonStores(reason: string, which: (facts: PlannedFacts) => boolean = () => true): void {
    for (let i = this.awaiting.length - 1; i >= 0; i--) {
      if (!which(this.awaiting[i].facts)) continue;
      this.awaiting[i].run.send({ type: "pi.notAppended", reason });
      this.awaiting.splice(i, 1);
    }
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
