// Builds the one custom message a preserve tool summary appends: the Tool Context text, the constant-size
// keepDialogue range rule and the token accounting. Pure: no I/O.
import type { HiddenRange, SessionEntry } from "../../log/entries.ts";
import { LedgerType } from "../catalog.ts";
import { estimateTextTokens } from "../../projection/tokens.ts";
import { fitDelta, ordinalsOf, selectDelta, type Delta, type DeltaUnit } from "../shared/delta.ts";
import { technicalBreakdown, type TechnicalBreakdown } from "../shared/accounting.ts";
import { writeExtractiveCheckpoint } from "./extractive.ts";
import { deltaOnlyOverhead, unitFitCost } from "./prompt.ts";

/** Who wrote the checkpoint text. */
export type CheckpointWriter = "model" | "delta-only" | "extractive";

/**
 * Token accounting persisted with every checkpoint (the package's one estimator; `contextBefore` is Pi's usage).
 * The breakdown follows the original extension's report.
 */
export interface PreserveTokens {
  /** Pi's context usage when the checkpoint was decided (null when unknown, e.g. in the lab). */
  contextBefore: number | null;
  /** Estimated usage after it: before − hidden + the checkpoint. */
  contextAfter: number;
  /** Window − after: room left for the next turns (null when the window is unknown). */
  headroom: number | null;
  /** System prompt, tool declarations and provider overhead: Pi's usage minus the estimated conversation. */
  base: number | null;
  /** The dialogue kept verbatim: user messages and the visible text of completed answers. */
  dialogue: { user: number; assistant: number };
  /** Earlier checkpoints, kept byte for byte. */
  checkpoints: { count: number; tokens: number };
  /** Raw technical state in view before this checkpoint, the current batch included. */
  raw: number;
  /** What this checkpoint hides, by kind. */
  compacted: TechnicalBreakdown;
  /** Raw technical state the rule hides (the sum of `compacted`, as estimated per message). */
  hidden: number;
  /** Technical state left raw after the checkpoint (newest suffix that did not fit, not counting the current batch). */
  carried: number;
  /** Raw technical state kept: the carried suffix and the current batch. */
  rawTail: number;
  /** The checkpoint message itself. */
  checkpoint: number;
  /** Prompt tokens of the summary request that produced the text (0 for the extractive writer). */
  request: number;
}

/** `details` of a `context-ledger/preserve` custom message. */
export interface PreserveDetails {
  v: 1;
  strategy: "preserve";
  /** 1-based ordinal of this checkpoint on its branch. */
  checkpoint: number;
  range: HiddenRange & { keepDialogue: true };
  /** Absolute user-message ordinals whose technical state this checkpoint covers. */
  userOrdinals: number[];
  writer: CheckpointWriter;
  tokens: PreserveTokens;
  /** Why the checkpoint was written the way it was, when the user should know (bounded, no transcript text). */
  note?: string;
}

export interface PreserveDraft {
  type: "custom_message";
  customType: typeof LedgerType.preserve;
  content: string;
  display: true;
  details: PreserveDetails;
}

/** The model-visible text: a one-line label, then the Tool Context body. */
export function checkpointContent(checkpoint: number, body: string): string {
  return `[Tool summary #${checkpoint}: older tool calls and results are summarized here; the conversation is kept verbatim]\n\n${body.trim()}`;
}

/** Build the draft from a fitted delta and a checkpoint body. */
export function checkpointDraft(input: {
  delta: Delta;
  included: readonly DeltaUnit[];
  carried: readonly DeltaUnit[];
  throughId: string;
  body: string;
  writer: CheckpointWriter;
  contextBefore?: number | null;
  contextWindow?: number;
  requestTokens?: number;
  note?: string;
}): PreserveDraft {
  const content = checkpointContent(input.delta.checkpoint, input.body);
  const sum = (units: readonly DeltaUnit[]) => units.reduce((n, u) => n + u.tokens, 0);
  const view = input.delta.view;
  const before = input.contextBefore ?? null;
  const hidden = sum(input.included);
  const checkpoint = estimateTextTokens(content);
  const carried = sum(input.carried);
  const contextAfter = Math.max(0, (before ?? view.total) - hidden + checkpoint);
  return {
    type: "custom_message",
    customType: LedgerType.preserve,
    content,
    display: true,
    details: {
      v: 1,
      strategy: "preserve",
      checkpoint: input.delta.checkpoint,
      range: { afterId: input.delta.afterId, throughId: input.throughId, keepDialogue: true },
      userOrdinals: ordinalsOf(input.included),
      writer: input.writer,
      tokens: {
        contextBefore: before,
        contextAfter,
        headroom: input.contextWindow ? input.contextWindow - contextAfter : null,
        base: before === null ? null : Math.max(0, before - view.total),
        dialogue: { ...view.dialogue },
        checkpoints: { ...view.checkpoints },
        raw: view.raw,
        compacted: technicalBreakdown(input.included.flatMap((u) => u.messages)),
        hidden,
        carried,
        rawTail: carried + view.currentBatch,
        checkpoint,
        request: input.requestTokens ?? 0,
      },
      ...(input.note ? { note: input.note } : {}),
    },
  };
}

export type ExtractiveResult = { ok: true; draft: PreserveDraft } | { ok: false; error: string };

/**
 * The whole model-free path: select the delta up to `limitId`, fit it to `budget` (conservative delta-only cost), and
 * write the checkpoint extractively. Used by the lab and as the host's last fallback.
 */
export function extractiveCheckpoint(
  branch: readonly SessionEntry[],
  limitId: string,
  budget = Number.POSITIVE_INFINITY,
  contextBefore: number | null = null,
): ExtractiveResult {
  const delta = selectDelta(branch, limitId);
  if (!delta) return { ok: false, error: "the tool summary boundary is not on the branch" };
  return extractiveFromDelta(delta, budget, contextBefore);
}

/** {@link extractiveCheckpoint} for an already selected delta. */
export function extractiveFromDelta(
  delta: Delta,
  budget = Number.POSITIVE_INFINITY,
  contextBefore: number | null = null,
): ExtractiveResult {
  const overhead = deltaOnlyOverhead(delta.checkpoint, ordinalsOf(delta.units));
  const fit = fitDelta(delta, budget - overhead, unitFitCost);
  if (!fit.ok) return fit;
  const body = writeExtractiveCheckpoint(fit.included);
  return { ok: true, draft: checkpointDraft({ delta, ...fit, body, writer: "extractive", contextBefore }) };
}
