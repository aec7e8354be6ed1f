// Probes: short verbatim facts extracted from a raw session (user constraints, file paths, error signatures,
// test result lines, commands). The lab checks which of them a strategy's model view still holds.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../log/entries.ts";
import { textOf } from "../log/entries.ts";
import { ownCopy } from "../log/own-copy.ts";

export type ProbeKind = "constraint" | "path" | "error" | "result" | "command";

export const PROBE_KINDS: readonly ProbeKind[] = ["constraint", "path", "error", "result", "command"];

/** One fact to look for, with the entry it was taken from (for recall attribution). */
export interface Probe {
  kind: ProbeKind;
  text: string;
  /** Entry the probe was extracted from (its first occurrence). */
  entryId: string;
  /** Position of that entry on the replayed branch. */
  index: number;
  /** Other spellings that count as the same fact: an absolute path under the session's cwd, relative to it. */
  forms?: string[];
}

/** `path` relative to `cwd` when it lies strictly inside it (absolute POSIX paths only), else undefined. */
export function relativeToCwd(path: string, cwd: string): string | undefined {
  const base = cwd.replace(/\/+$/, "");
  if (!base.startsWith("/") || !path.startsWith(`${base}/`)) return undefined;
  const rest = path.slice(base.length + 1);
  return rest || undefined;
}

/** True when `text` holds the probe in one of its spellings. */
export function holds(text: string, probe: Probe): boolean {
  return text.includes(probe.text) || (probe.forms?.some((form) => text.includes(form)) ?? false);
}

/** Words that mark a user sentence as a constraint or a correction. */
const CUE =
  /\b(don'?t|do not|never|always|must|should|shouldn'?t|make sure|keep|avoid|instead|prefer|only|no,|wait|actually|undo|please use|use \w+ (?:instead|not))\b/i;
const RESULT_LINE =
  /\b\d+ (?:passed|failed|passing|failing|skipped|tests?)\b|\b(?:Tests?|Test Files)\s+\d+|\bexit(?:ed)? (?:with )?code \d+|\b\d+ errors?\b/i;
const ERROR_LINE =
  /\b(?:[A-Z][A-Za-z]*)?(?:Error|Exception)\b|\bERR_[A-Z_]+|\berror TS\d+|\bFAIL\b|\bpanic\b|\bfatal\b/;
const MAX_PROBE = 160;
const MIN_SENTENCE = 18;

/** Sentences of a user message that state a constraint or a correction. */
export function constraintSentences(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(/(?<=[.!?])\s+|\n+/)) {
    const sentence = raw.trim();
    if (sentence.length < MIN_SENTENCE || sentence.length > MAX_PROBE) continue;
    if (CUE.test(sentence)) out.push(sentence);
  }
  return out;
}

/** The line of a failed tool's output that identifies the error (first error-like line, else the first line). */
export function errorSignature(output: string): string | undefined {
  const lines = output
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const line = lines.find((l) => ERROR_LINE.test(l) && !/^Command exited with code/.test(l)) ?? lines[0];
  return line ? line.slice(0, MAX_PROBE) : undefined;
}

/** Result lines of a test or command run ("Tests  41 passed (41)", "3 errors"). */
export function resultLines(output: string): string[] {
  const out: string[] = [];
  for (const raw of output.split("\n")) {
    const line = raw.trim();
    if (line.length >= 6 && line.length <= MAX_PROBE && RESULT_LINE.test(line)) out.push(line);
  }
  return out;
}

function firstLine(text: string): string {
  return text.split("\n")[0].trim().slice(0, MAX_PROBE);
}

/**
 * Extract the probes of a branch, deterministically and in branch order. A probe text appears once
 * (first occurrence wins), so a repeated command or path counts once. With the session's `cwd`, an absolute
 * path inside it also counts in its relative spelling, as strategies may show it.
 */
export function extractProbes(branch: readonly SessionEntry[], cwd = ""): Probe[] {
  const probes: Probe[] = [];
  const seen = new Set<string>();
  const add = (kind: ProbeKind, text: string, entry: SessionEntry, index: number): void => {
    const key = `${kind}\u0000${text}`;
    if (!text || seen.has(key)) return;
    seen.add(key);
    const relative = kind === "path" ? relativeToCwd(text, cwd) : undefined;
    // Own copies: a probe lives the whole replay and would otherwise pin the text it was cut from.
    probes.push({
      kind,
      text: ownCopy(text),
      entryId: entry.id,
      index,
      ...(relative ? { forms: [ownCopy(relative)] } : {}),
    });
  };
  const failedCalls = new Set<string>();
  branch.forEach((entry, index) => {
    if (entry.type !== "message") return;
    const message = entry.message as AgentMessage & Record<string, unknown>;
    switch (message.role) {
      case "user":
        for (const sentence of constraintSentences(textOf(message.content))) add("constraint", sentence, entry, index);
        break;
      case "assistant":
        for (const block of (message.content as {
          type: string;
          name?: string;
          arguments?: Record<string, unknown>;
        }[]) ?? []) {
          if (block?.type !== "toolCall") continue;
          const args = block.arguments ?? {};
          const path = args.path ?? args.file_path;
          if (typeof path === "string" && /^(read|edit|write|multiedit|ls)$/i.test(block.name ?? ""))
            add("path", path, entry, index);
          if (typeof args.command === "string" && /^(bash|shell|exec)$/i.test(block.name ?? ""))
            add("command", firstLine(args.command), entry, index);
        }
        break;
      case "toolResult": {
        const output = textOf(message.content);
        if (message.isError === true) {
          const signature = errorSignature(output);
          if (signature) add("error", signature, entry, index);
          failedCalls.add(String(message.toolCallId));
        }
        if (message.toolName === "bash") for (const line of resultLines(output)) add("result", line, entry, index);
        break;
      }
      case "bashExecution": {
        add("command", firstLine(String(message.command ?? "")), entry, index);
        const output = String(message.output ?? "");
        if (typeof message.exitCode === "number" && message.exitCode !== 0) {
          const signature = errorSignature(output);
          if (signature) add("error", signature, entry, index);
        }
        for (const line of resultLines(output)) add("result", line, entry, index);
        break;
      }
      default:
        break;
    }
  });
  return probes;
}

/** Everything a model view says, as one searchable text (tool call arguments included, unescaped). */
export function viewText(messages: readonly AgentMessage[]): string {
  const parts: string[] = [];
  for (const message of messages) viewParts(message, parts);
  return parts.join("\n");
}

/** The pieces of one message's {@link viewText}, in order, added to `parts` (returned). */
export function viewParts(message: AgentMessage, parts: string[]): string[] {
  return messageParts(message, VIEW_READING, parts);
}

/**
 * How a measure reads a message's text where the measures differ: a tool call's arguments, and a `summary` field.
 * Everything else (plain content, text and thinking blocks, a shell run's command and output) every measure reads
 * alike, with {@link messageParts}.
 */
export interface TextReading {
  /** Add the text of a tool call's arguments to `parts`. */
  toolArguments(args: unknown, parts: string[]): void;
  /** The text of the message's summary, when it counts. */
  summary(message: Record<string, unknown>): string | undefined;
}

/** A view's reading: each argument as a string (others as JSON), and the summary of a summary message. */
const VIEW_READING: TextReading = {
  toolArguments(args, parts) {
    // JSON.stringify gives undefined for a value JSON cannot hold; joined, that is an empty piece.
    for (const value of Object.values((args as Record<string, unknown>) ?? {}))
      parts.push(typeof value === "string" ? value : (JSON.stringify(value) ?? ""));
  },
  summary: (m) => (m.role === "compactionSummary" || m.role === "branchSummary" ? String(m.summary ?? "") : undefined),
};

/** The pieces of a message's text as `reading` reads it, in order, added to `parts` (returned). */
export function messageParts(message: AgentMessage, reading: TextReading, parts: string[]): string[] {
  const m = message as unknown as Record<string, unknown>;
  const content = m.content;
  if (typeof content === "string") parts.push(content);
  else if (Array.isArray(content)) {
    for (const block of content as Record<string, unknown>[]) {
      if (block?.type === "text") parts.push(String(block.text ?? ""));
      else if (block?.type === "thinking") parts.push(String(block.thinking ?? ""));
      else if (block?.type === "toolCall") reading.toolArguments(block.arguments, parts);
    }
  }
  if (m.role === "bashExecution") parts.push(String(m.command ?? ""), String(m.output ?? ""));
  const summary = reading.summary(m);
  if (summary !== undefined) parts.push(summary);
  return parts;
}

/** Share of `probes` whose text occurs verbatim in `text` (1 when there are no probes). */
export function retention(
  probes: readonly Probe[],
  text: string,
): { kept: number; total: number; share: number; missing: Probe[] } {
  const missing: Probe[] = [];
  for (const probe of probes) if (!holds(text, probe)) missing.push(probe);
  const kept = probes.length - missing.length;
  return { kept, total: probes.length, share: probes.length ? kept / probes.length : 1, missing };
}

/**
 * Retention against a list of messages. A probe whose source message is in the view unchanged (same object)
 * is present without a search; the view's text is built only when some probe needs one.
 */
export function viewRetention(
  probes: readonly Probe[],
  messages: readonly AgentMessage[],
  sourceOf: (probe: Probe) => readonly AgentMessage[],
): { kept: number; total: number; share: number; missing: Probe[] } {
  const present = new Set<AgentMessage>(messages);
  const missing: Probe[] = [];
  let text: string | undefined;
  for (const probe of probes) {
    if (sourceOf(probe).some((m) => present.has(m))) continue;
    text ??= viewText(messages);
    if (!holds(text, probe)) missing.push(probe);
  }
  const kept = probes.length - missing.length;
  return { kept, total: probes.length, share: probes.length ? kept / probes.length : 1, missing };
}
