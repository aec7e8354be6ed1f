// The one token estimator of the package: a fast character heuristic, optionally calibrated
// against provider-reported usage. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";

/** Characters per token of the uncalibrated heuristic (Pi's own estimate uses the same ratio). */
export const CHARS_PER_TOKEN = 4;
/** Nominal token cost of one image block. */
const IMAGE_TOKENS = 1_200;

/** A multiplicative correction learned from provider usage; 1 means uncalibrated. */
export interface Calibration {
  ratio: number;
  samples: number;
}

export const UNCALIBRATED: Calibration = { ratio: 1, samples: 0 };

/** Estimated tokens of a plain string. */
export function estimateTextTokens(text: string, calibration: Calibration = UNCALIBRATED): number {
  return Math.ceil((text.length / CHARS_PER_TOKEN) * calibration.ratio);
}

/** Characters a message contributes to a request, counted the way providers bill them roughly. */
export function messageChars(message: AgentMessage): number {
  const m = message as unknown as Record<string, unknown>;
  let chars = 0;
  const content = m.content;
  if (typeof content === "string") chars += content.length;
  else if (Array.isArray(content)) {
    for (const block of content as Record<string, unknown>[]) {
      switch (block?.type) {
        case "text":
          chars += String(block.text ?? "").length;
          break;
        case "thinking":
          chars += String(block.thinking ?? "").length;
          break;
        case "toolCall":
          chars += String(block.name ?? "").length + JSON.stringify(block.arguments ?? {}).length;
          break;
        case "image":
          chars += IMAGE_TOKENS * CHARS_PER_TOKEN;
          break;
        default:
          break;
      }
    }
  }
  if (m.role === "bashExecution") chars += String(m.command ?? "").length + String(m.output ?? "").length;
  if (m.role === "compactionSummary" || m.role === "branchSummary") chars += String(m.summary ?? "").length;
  if (m.role === "system") {
    const sections = m.sections as Record<string, string | null> | undefined;
    for (const section of Object.values(sections ?? {})) chars += section?.length ?? 0;
    if (m.toolsAdded) chars += JSON.stringify(m.toolsAdded).length;
  }
  return chars;
}

/** Estimated tokens of one message. */
export function estimateMessageTokens(message: AgentMessage, calibration: Calibration = UNCALIBRATED): number {
  return Math.ceil((messageChars(message) / CHARS_PER_TOKEN) * calibration.ratio);
}

/** Estimated tokens of a message list. */
export function estimateMessagesTokens(
  messages: readonly AgentMessage[],
  calibration: Calibration = UNCALIBRATED,
): number {
  let total = 0;
  for (const message of messages) total += estimateMessageTokens(message, calibration);
  return total;
}

/**
 * Fold one observation (our estimate vs the provider's prompt tokens) into the calibration.
 * Ratios outside [0.25, 4] are treated as noise (cache-only usage, truncated reports) and ignored.
 */
export function calibrate(
  calibration: Calibration,
  estimatedPromptTokens: number,
  reportedPromptTokens: number,
): Calibration {
  if (estimatedPromptTokens <= 0 || reportedPromptTokens <= 0) return calibration;
  const observed = reportedPromptTokens / estimatedPromptTokens;
  if (observed < 0.25 || observed > 4) return calibration;
  const samples = Math.min(calibration.samples + 1, 20);
  return { ratio: calibration.ratio + (observed - calibration.ratio) / samples, samples };
}

/** UTF-8 length of a string in bytes, without allocating (surrogate pairs count 4 bytes). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * A pessimistic estimate for fit decisions that must never overflow: UTF-8 bytes / 3. Ignores calibration on
 * purpose, since the calibration was learned on a different request (the cached full prefix).
 */
export function conservativeTextTokens(text: string): number {
  return Math.ceil(utf8Length(text) / 3);
}
