// The summary requests of the preserve strategy: a cache-friendly ask appended to the live conversation, and a
// delta-only form that carries just the technical state being checkpointed. Also the output check. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { textOf } from "../../log/entries.ts";
import { conservativeTextTokens, estimateTextTokens } from "../../projection/tokens.ts";
import type { DeltaUnit } from "../shared/delta.ts";

/** The heading every checkpoint body starts with. */
export const TOOL_CONTEXT_HEADING = "## Tool Context";

/** Below this many output tokens a summary is not worth asking for in the cache-friendly shape. */
export const MIN_SUMMARY_OUTPUT = 1_024;

function ordinalList(ordinals: readonly number[]): string {
  return ordinals.map((n) => (n === 0 ? "0 (work before the first user message)" : String(n))).join(", ");
}

/** The output format, shared by both request shapes and mirrored by the extractive writer. */
export function formatInstructions(ordinals: readonly number[]): string {
  const sections = ordinals
    .map((n) => `### User message ${n}\n#### Findings\n- …\n\n#### Changes & Validation\n- …\n\n#### Unresolved\n- …`)
    .join("\n\n");
  return [
    "Reply with Markdown in exactly this shape, one `### User message N` section per number listed, in that order:",
    "",
    TOOL_CONTEXT_HEADING,
    sections,
    "",
    "Rules:",
    "- Findings: facts the tools established (file contents that matter, locations, causes). Name files, symbols and values exactly.",
    "- Changes & Validation: files changed and how; commands run with their outcome (exit status, counts such as `12 passed, 1 failed`).",
    "- Unresolved: open errors, failing checks, unanswered questions. Write `- (none)` when there are none.",
    "- Use the absolute user-message numbers given; never renumber them.",
    "- Do not quote or paraphrase the user's messages: they stay in the conversation verbatim.",
    "- Earlier tool summaries are final. Do not repeat, merge, correct or extend them; cover only the new work.",
    "- Do not call tools. Write only the tool summary.",
  ].join("\n");
}

/**
 * The one user message appended to the live conversation for the cache-friendly request. Everything before it is
 * the exact prefix of the previous provider request, so the provider can reuse its cache.
 */
export function continuationAsk(checkpoint: number, ordinals: readonly number[], focus?: string): string {
  return [
    `[Context maintenance, not a user request] Write tool summary #${checkpoint}.`,
    `It replaces the tool calls, tool results and intermediate assistant turns since the previous tool summary; they belong to user message(s) ${ordinalList(ordinals)}.`,
    ...focusLines(focus),
    "",
    formatInstructions(ordinals),
  ].join("\n");
}

/** Longest focus (custom `/compact` instructions) a summary request carries. */
export const MAX_FOCUS_CHARS = 1_000;

/** The user's `/compact` instructions as a focus for the checkpoint, clipped; nothing when there are none. */
function focusLines(focus: string | undefined): string[] {
  const text = focus?.trim();
  if (!text) return [];
  const clipped = text.length > MAX_FOCUS_CHARS ? `${text.slice(0, MAX_FOCUS_CHARS)}…` : text;
  return ["", `Focus requested by the user for this tool summary (keep the format below): ${clipped}`];
}

/** System prompt of the delta-only request: short, because this request shares no cache anyway. */
export const DELTA_ONLY_SYSTEM =
  "You condense a coding agent's tool activity into a tool summary. The agent keeps the conversation itself; your text replaces only the tool traffic shown to you.";

const RESULT_LABEL = "tool result";

/** Serialize one unit for the delta-only request: every call with id, name and arguments, every result in full. */
export function renderUnit(unit: DeltaUnit): string {
  const lines: string[] = [];
  for (const message of unit.messages) {
    const m = message as AgentMessage & { content?: unknown };
    switch (m.role) {
      case "assistant": {
        for (const block of m.content ?? []) {
          if (block.type === "text" && block.text.trim()) lines.push(`[assistant] ${block.text}`);
          else if (block.type === "thinking" && block.thinking.trim())
            lines.push(`[assistant reasoning] ${block.thinking}`);
          else if (block.type === "toolCall")
            lines.push(`[tool call ${block.id}] ${block.name} ${JSON.stringify(block.arguments ?? {})}`);
        }
        break;
      }
      case "toolResult":
        lines.push(`[${RESULT_LABEL} ${m.toolCallId} ${m.toolName}${m.isError ? " (error)" : ""}]`, textOf(m.content));
        break;
      case "custom": {
        const c = m as unknown as { customType?: string; content?: unknown };
        lines.push(`[note ${c.customType ?? ""}]`, textOf(c.content));
        break;
      }
      default:
        lines.push(`[${m.role}]`, textOf(m.content));
    }
  }
  return lines.join("\n");
}

/** The delta rendered by owning user message, as the delta-only request shows it. */
export function renderDelta(units: readonly DeltaUnit[]): string {
  const parts: string[] = [];
  let current: number | undefined;
  for (const unit of units) {
    if (unit.ordinal !== current) {
      current = unit.ordinal;
      parts.push(`=== Work for user message ${unit.ordinal} ===`);
    }
    parts.push(renderUnit(unit));
  }
  return parts.join("\n\n");
}

/** The delta-only request: a tiny instruction plus exactly the technical delta. */
export function deltaOnlyRequest(
  checkpoint: number,
  ordinals: readonly number[],
  units: readonly DeltaUnit[],
  focus?: string,
): { system: string; prompt: string } {
  return {
    system: DELTA_ONLY_SYSTEM,
    prompt: [
      `Write tool summary #${checkpoint} for the tool activity below (user message(s) ${ordinalList(ordinals)}).`,
      ...focusLines(focus),
      "",
      formatInstructions(ordinals),
      "",
      "<tool-activity>",
      renderDelta(units),
      "</tool-activity>",
    ].join("\n"),
  };
}

/**
 * Conservative token cost of one unit inside a delta-only request (for fit decisions): UTF-8 bytes / 3, since tool
 * output (code, JSON, paths, non-ASCII text) tokenizes denser than prose and the request must not overflow.
 */
export function unitFitCost(unit: DeltaUnit): number {
  return conservativeTextTokens(`${renderUnit(unit)}\n\n`);
}

/** Conservative cost of the delta-only request around its units (instructions, headings), on the same scale. */
export function deltaOnlyOverhead(checkpoint: number, ordinals: readonly number[], focus?: string): number {
  const shell = deltaOnlyRequest(checkpoint, ordinals, [], focus);
  return conservativeTextTokens(shell.system + shell.prompt) + ordinals.length * 16;
}

export type RequestShape =
  | { mode: "continuation"; maxOutput: number }
  | { mode: "delta-only"; maxOutput: number; deltaBudget: number };

/**
 * Choose the request shape. The continuation is preferred (its prefix is cached); it is used when the live prefix
 * plus the ask still leaves room for a useful summary. Otherwise the delta-only request gets the window minus the
 * output reserve for its delta.
 */
export function chooseRequestShape(input: {
  contextWindow: number;
  /** Estimated tokens of the live prefix the continuation would resend. */
  prefixTokens: number;
  askTokens: number;
  /** Summary output cap: the reserve, clipped by the model's maximum output. */
  outputCap: number;
  /** Conservative cost of the delta-only request without its units. */
  deltaOverhead: number;
}): RequestShape {
  const room = input.contextWindow - input.prefixTokens - input.askTokens;
  const continuationOutput = Math.min(input.outputCap, room);
  if (continuationOutput >= Math.min(MIN_SUMMARY_OUTPUT, input.outputCap))
    return { mode: "continuation", maxOutput: continuationOutput };
  const maxOutput = input.outputCap;
  return {
    mode: "delta-only",
    maxOutput,
    deltaBudget: Math.max(0, input.contextWindow - maxOutput - input.deltaOverhead),
  };
}

/**
 * Check and normalize a model's checkpoint text. Returns undefined for unusable output (empty, or a reply that is
 * not a checkpoint at all), so the caller retries or falls back; a missing top heading is added.
 */
export function normalizeCheckpointText(text: string): string | undefined {
  let body = text.trim();
  const fence = /^```(?:markdown|md)?\n([\s\S]*?)\n```$/.exec(body);
  if (fence) body = fence[1].trim();
  if (!body) return undefined;
  const at = body.indexOf(TOOL_CONTEXT_HEADING);
  if (at > 0) body = body.slice(at);
  if (!body.startsWith(TOOL_CONTEXT_HEADING)) {
    if (!/^###\s+User message\s+\d+/m.test(body)) return undefined;
    body = `${TOOL_CONTEXT_HEADING}\n${body}`;
  }
  if (!/^###\s+User message\s+\d+/m.test(body)) return undefined;
  return body;
}

/** A summary reply as the checks need it. */
export interface SummaryReply {
  stopReason: string;
  errorMessage?: string;
  /** The visible text blocks, joined. */
  text: string;
  toolCalls: number;
}

export type ReplyVerdict = { ok: true; body: string } | { ok: false; reason: string; textOnlyRetry: boolean };

/**
 * A tool call models write into their text instead of calling the tool: a `<tool_call>` or `<function_call>` tag that
 * opens a line and carries a JSON object. A summary that mentions such a tag inside a sentence or in backticks is not
 * one.
 */
const TEXT_TOOL_CALL = /(?:^|\n)[ \t]*<(tool_call|function_call)\b[^>\n]*>\s*\{/i;

/**
 * True when a reply's text is a tool call written out: a `<tool_call>{…}</tool_call>`-style block, or a bare JSON
 * object naming a tool and its arguments. Such a reply is no summary; asked again with tools off, a model usually
 * writes one.
 */
export function isTextToolCall(text: string): boolean {
  if (TEXT_TOOL_CALL.test(text)) return true;
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") || !trimmed.endsWith("}") || trimmed.length > 100_000) return false;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    return (
      typeof parsed === "object" &&
      parsed !== null &&
      "name" in parsed &&
      ("arguments" in parsed || "parameters" in parsed || "input" in parsed)
    );
  } catch {
    return false;
  }
}

/**
 * Judge a summary reply. Errors, length stops, replies larger than the output cap and text that is not a checkpoint
 * fail; a tool call (also one written as text) or a reply without visible text fails with `textOnlyRetry`, since asking once more with tools off
 * usually gets the text.
 */
export function judgeReply(reply: SummaryReply, maxTokens: number): ReplyVerdict {
  if (reply.stopReason === "error" || reply.stopReason === "aborted")
    return { ok: false, reason: reply.errorMessage ?? reply.stopReason, textOnlyRetry: false };
  if (reply.stopReason === "length")
    return { ok: false, reason: "the summary stopped at its length limit", textOnlyRetry: false };
  if (reply.toolCalls > 0)
    return { ok: false, reason: "the reply called a tool instead of writing the tool summary", textOnlyRetry: true };
  if (isTextToolCall(reply.text))
    return {
      ok: false,
      reason: "the reply wrote a tool call as text instead of the tool summary",
      textOnlyRetry: true,
    };
  if (!reply.text.trim()) return { ok: false, reason: "the reply had no visible text", textOnlyRetry: true };
  const size = estimateTextTokens(reply.text);
  if (size > maxTokens)
    return {
      ok: false,
      reason: `the reply (~${size} tokens) is larger than the output cap of ${maxTokens} tokens`,
      textOnlyRetry: false,
    };
  const body = normalizeCheckpointText(reply.text);
  return body ? { ok: true, body } : { ok: false, reason: "the reply was not a tool summary", textOnlyRetry: false };
}
