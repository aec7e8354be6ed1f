// Budget awareness: the usage at which the configured strategy acts, what it then does, and when the model gets one
// short notice that it is getting close. Pure: usage, settings and the branch come in; no clocks, no I/O.
import { CoreRecord, type SessionEntry } from "../log/entries.ts";

/** Share of the threshold at which the notice fires unless configured otherwise. */
export const DEFAULT_NOTICE_SHARE = 0.8;

/** Pi's own compaction settings for the active model (`compaction.enabled`, `compaction.reserveTokens`). */
export interface PiCompactionSettings {
  enabled: boolean;
  reserveTokens: number;
}

/** The usage at which the context gets managed without the model's help, and what happens there. */
export interface Threshold {
  tokens: number;
  contextWindow: number;
  /** One clause: what the configured strategy does at `tokens`. */
  action: string;
}

/** How a strategy's threshold is found, declared by the strategy (its `budget` in the registry). */
export interface BudgetRule {
  /** One clause: what the strategy does at its threshold. */
  action: string;
  /** The strategy's own threshold for a window; without it, the strategy acts when Pi compacts. */
  ownThreshold?: (contextWindow: number) => number;
}

/**
 * The usage at which the configured strategy steps in: its own threshold when it keeps the window itself, else when
 * Pi compacts (window minus Pi's reserve). With Pi's compaction switched off, only the window itself limits.
 */
export function thresholdFor(rule: BudgetRule, contextWindow: number, compaction: PiCompactionSettings): Threshold {
  if (rule.ownThreshold) return { tokens: rule.ownThreshold(contextWindow), contextWindow, action: rule.action };
  if (!compaction.enabled)
    return {
      tokens: contextWindow,
      contextWindow,
      action: "nothing compacts automatically (compaction is off), so a request that does not fit fails",
    };
  return { tokens: Math.max(0, contextWindow - compaction.reserveTokens), contextWindow, action: rule.action };
}

/** `details` of a budget notice (`context-ledger/notice`, kind `budget`). */
export interface BudgetNoticeDetails {
  v: 1;
  kind: "budget";
  usage: number;
  threshold: number;
  share: number;
}

/** True for a budget notice this package wrote. */
export function isBudgetNotice(entry: SessionEntry): boolean {
  if (entry.type !== "custom_message" || entry.customType !== CoreRecord.notice) return false;
  return (entry.details as { kind?: unknown } | undefined)?.kind === "budget";
}

/** Context tokens a provider reported for an assistant message, as Pi counts them; undefined when unusable. */
function reportedTokens(entry: SessionEntry): number | undefined {
  if (entry.type !== "message" || entry.message.role !== "assistant") return undefined;
  const m = entry.message;
  if (m.stopReason === "aborted" || m.stopReason === "error" || !m.usage) return undefined;
  const u = m.usage;
  const total = u.totalTokens || u.input + u.output + u.cacheRead + u.cacheWrite;
  return total > 0 ? total : undefined;
}

/**
 * Whether a notice may fire at `level`, read from the branch alone (so reload, /tree and fork agree): walking back
 * from the leaf, a request reported below the level re-arms before any earlier notice counts; a notice met first
 * means this crossing was already announced.
 */
export function isArmed(path: readonly SessionEntry[], level: number): boolean {
  for (let i = path.length - 1; i >= 0; i--) {
    const entry = path[i];
    if (isBudgetNotice(entry)) return false;
    const tokens = reportedTokens(entry);
    if (tokens !== undefined && tokens < level) return true;
  }
  return true;
}

export interface NoticeInput {
  /** Pi's current context usage; null when unknown (right after a compaction). */
  usage: number | null;
  threshold: Threshold;
  /** Share of the threshold at which the notice fires. */
  share: number;
  armed: boolean;
  /** Something already changes the context at this boundary (a fold, a restore, a checkpoint). */
  busy: boolean;
}

/**
 * One notice per crossing: usage at or above `share` of the threshold, and still below it (at the threshold the
 * strategy acts anyway); never on a boundary that already changes the context.
 */
export function shouldNotify(input: NoticeInput): boolean {
  if (input.usage === null || input.busy || !input.armed) return false;
  return input.usage >= input.share * input.threshold.tokens && input.usage < input.threshold.tokens;
}

const formatTokens = (n: number) => Math.round(n).toLocaleString("en-US");

/** The notice text: usage, what happens at the threshold, and (when the fold tools are on) what the model can do. */
export function renderBudgetNotice(usage: number, threshold: Threshold, foldTools: boolean): string {
  const percent = Math.round((usage / Math.max(1, threshold.tokens)) * 100);
  const parts = [
    `[context budget] Your context holds ~${formatTokens(usage)} tokens, ${percent}% of the ${formatTokens(threshold.tokens)}-token point (window ${formatTokens(threshold.contextWindow)}) where ${threshold.action}.`,
  ];
  if (foldTools)
    parts.push(
      "To choose yourself what leaves, fold finished work into a summary with context_compact; context_timeline lists the entries and labels you can fold after. Folded history stays recoverable.",
    );
  return parts.join(" ");
}

/** The hidden custom message draft a notice appends at `turn_end`. */
export function budgetNoticeDraft(usage: number, threshold: Threshold, share: number, foldTools: boolean) {
  return {
    type: "custom_message" as const,
    customType: CoreRecord.notice,
    content: renderBudgetNotice(usage, threshold, foldTools),
    display: false,
    details: { v: 1, kind: "budget", usage, threshold: threshold.tokens, share } satisfies BudgetNoticeDetails,
  };
}
